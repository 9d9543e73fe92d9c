#!/usr/bin/env bash
# Instructions per record of `sift filter --count`, counted by callgrind (independent of the
# machine's load), for the predicates of scripts/gnustep-filter-bench.sh: a run over RECORDS
# records minus a run over one record (start-up), divided by RECORDS - 1. SIFT=path names the
# binary (a release build); SIFT_BEFORE=path counts another beside it. Prints one line per
# predicate: the predicate, instructions per record (and the other binary's, with SIFT_BEFORE).
set -euo pipefail
cd "$(dirname "$0")/.."
RECORDS=${RECORDS:-50000}
work=.build/filter-instructions
mkdir -p "$work"
if ! command -v valgrind >/dev/null; then echo "filter-instructions: valgrind is needed" >&2; exit 1; fi
# Copies without debug information: valgrind 3.19 gives up on a binary whose C targets' debug
# information it cannot read ("Possibly corrupted debuginfo file"); the instructions are the same.
strip --strip-debug -o "$work/sift" "${SIFT:-$(swift build -c release --show-bin-path)/sift}"
sift=$work/sift
if [ -n "${SIFT_BEFORE:-}" ]; then strip --strip-debug -o "$work/sift-before" "$SIFT_BEFORE"; SIFT_BEFORE=$work/sift-before; fi
awk -v n="$RECORDS" -f scripts/filter-records.awk > "$work/records.ndjson"
awk -v n=1 -f scripts/filter-records.awk > "$work/one.ndjson"

# The instructions callgrind counts for `BINARY filter --count PREDICATE FILE`.
count() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" filter --count "$2" "$3" 2>&1 >/dev/null \
    | awk '/Collected :/ { print $NF }'
}

# Instructions per record of BINARY on PREDICATE.
per_record() {
  local all one
  all=$(count "$1" "$2" "$work/records.ndjson")
  one=$(count "$1" "$2" "$work/one.ndjson")
  awk -v a="$all" -v o="$one" -v n="$RECORDS" 'BEGIN { printf "%.0f", (a - o) / (n - 1) }'
}

sed -n '/^cat > "\$work\/predicates.txt"/,/^EOF$/p' scripts/gnustep-filter-bench.sh | sed '1d;$d' > "$work/predicates.txt"
while IFS= read -r predicate; do
  line=$(printf '%-42s %7s' "$predicate" "$(per_record "$sift" "$predicate")")
  [ -n "${SIFT_BEFORE:-}" ] && line="$line $(printf '%7s' "$(per_record "$SIFT_BEFORE" "$predicate")")"
  echo "$line"
done < "$work/predicates.txt"
