#!/usr/bin/env bash
# `sift filter` against GNUstep's NSPredicate, per record, in one run: generates RECORDS NDJSON
# records (ASCII and accented names, arrays of string tags, nested objects), has
# Benchmarks/GNUstep/filter_eval.m read them into NSDictionary objects and time only
# -evaluateWithObject: for each predicate below (best of ROUNDS passes), then times whole
# `sift filter --count` processes (best of ROUNDS) over the same records repeated REPEAT times, so
# that sift's count includes reading the JSON, start-up and everything else. Prints, per predicate,
# sift's records/s by wall-clock and by CPU time (user + system, both threads), GNUstep's records/s
# and the two ratios, and checks that both count the same matches. Installs gobjc and
# libgnustep-base-dev when missing (scripts/gnustep-install.sh); Linux only. SIFT=path uses that
# release binary instead of building one; SIFT_BEFORE=path also times another (an older build) in
# the same run, by CPU time.
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDS=${RECORDS:-200000}
REPEAT=${REPEAT:-5}
ROUNDS=${ROUNDS:-3}
work=.build/gnustep-filter-bench
mkdir -p "$work"

if [ "$(uname -s)" != Linux ]; then echo "gnustep-filter-bench: Linux only; skipped" >&2; exit 0; fi
bash scripts/gnustep-install.sh

# shellcheck disable=SC2046  # gnustep-config prints flags meant to be split
gcc -O2 -std=gnu11 -o "$work/filter_eval" Benchmarks/GNUstep/filter_eval.m \
  $(gnustep-config --objc-flags) $(gnustep-config --base-libs) -w
if [ -n "${SIFT:-}" ]; then sift=$SIFT; else
  swift build -c release --product sift >/dev/null
  sift=$(swift build -c release --show-bin-path)/sift
fi

awk -v n="$RECORDS" -f scripts/filter-records.awk > "$work/records.ndjson"
for _ in $(seq "$REPEAT"); do cat "$work/records.ndjson"; done > "$work/repeated.ndjson"
total=$((RECORDS * REPEAT))

# The predicates: the issue's example, ANY/ALL/NONE over an array of strings, and string operators
# with [c], [d], [cd]; the last two are plain comparisons, for reference.
cat > "$work/predicates.txt" <<'EOF'
ANY tags == 'b' OR name CONTAINS[c] 'an'
ANY tags == 'b'
ANY tags ==[c] 'bravo'
ALL tags != 'teal'
NONE tags BEGINSWITH 'r'
ANY tags LIKE[c] 'r*'
ALL tags BEGINSWITH[cd] 'B'
name CONTAINS[c] 'an'
name CONTAINS[cd] 'jose'
name CONTAINS[d] 'Lukasz'
name LIKE[c] '*berg'
name LIKE[cd] 'jos*'
name BEGINSWITH[c] 'an'
name BEGINSWITH[cd] 'zoe'
name ENDSWITH[d] 'nunez'
address.city ==[cd] 'malmo'
age >= 18
address.city == 'Oslo'
EOF

"$work/filter_eval" "$work/records.ndjson" "$ROUNDS" < "$work/predicates.txt" > "$work/gnustep.txt"

# Best wall-clock and CPU seconds of ROUNDS runs of `BINARY filter --count PREDICATE`, and its count.
# bash's own `time` reads the child's user and system time to the millisecond (GNU time's
# hundredths are several percent of a run of about 100 ms).
best() {
  local best="" cpu="" start end t c count
  local TIMEFORMAT='%3U %3S'
  for _ in $(seq "$ROUNDS"); do
    start=$(date +%s%N)
    { time "$1" filter --count "$2" "$work/repeated.ndjson" > "$work/count"; } 2> "$work/cpu"
    count=$(cat "$work/count")
    end=$(date +%s%N)
    t=$(( (end - start) / 1000 ))
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
    c=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$work/cpu")
    if [ -z "$cpu" ] || [ "$c" -lt "$cpu" ]; then cpu=$c; fi
  done
  echo "$best $cpu $count"
}

echo "sift filter --count ($total records, $(du -m "$work/repeated.ndjson" | cut -f1) MB, whole process) vs GNUstep NSPredicate evaluateWithObject: ($RECORDS records, evaluation only), best of $ROUNDS"
printf '%-42s %11s %11s %11s %7s %7s' predicate "sift wall/s" "sift CPU/s" "GNUstep/s" "wall x" "CPU x"
[ -n "${SIFT_BEFORE:-}" ] && printf ' %11s %7s' "before CPU/s" "CPU x"
printf '  %s\n' matches
while IFS=$'\t' read -r gmatches grate predicate; do
  if [[ "$gmatches" == error:* ]]; then echo "GNUstep: $gmatches $grate"; continue; fi
  read -r us ms count <<< "$(best "$sift" "$predicate")"
  same=$([ "$count" -eq $((gmatches * REPEAT)) ] && echo "same" || echo "DIFFER: sift $count, GNUstep $((gmatches * REPEAT))")
  awk -v p="$predicate" -v n="$total" -v us="$us" -v ms="$ms" -v g="$grate" 'BEGIN {
    w = n / (us / 1e6); c = (ms > 0 ? n / (ms / 1e3) : 0)
    printf "%-42s %11.0f %11.0f %11.0f %6.1fx %6.1fx", p, w, c, g, w / g, c / g }'
  if [ -n "${SIFT_BEFORE:-}" ]; then
    read -r _ before_ms _ <<< "$(best "$SIFT_BEFORE" "$predicate")"
    awk -v n="$total" -v ms="$before_ms" -v g="$grate" 'BEGIN { c = (ms > 0 ? n / (ms / 1e3) : 0); printf " %11.0f %6.1fx", c, c / g }'
  fi
  echo "  $same"
done < "$work/gnustep.txt"
