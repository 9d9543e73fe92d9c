#!/usr/bin/env bash
# `sift parse` against GNUstep's NSPredicate on the same 100,000 lines, whole processes: installs
# gobjc and libgnustep-base-dev when missing (apt-get as root, sudo otherwise), compiles
# Benchmarks/GNUstep/parse_print.m, builds `sift` in release mode, makes the input file from the
# bundled samples and the parse corpus (only lines both parsers accept, repeated to LINES lines),
# then times each process ROUNDS times and reports the best wall and CPU times and their ratios. Called by
# scripts/bench.sh; Linux only. SIFT=path uses that release binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-100000}
ROUNDS=${ROUNDS:-3}
work=.build/gnustep-bench
mkdir -p "$work"

if [ "$(uname -s)" != Linux ]; then echo "gnustep-bench: Linux only; skipped" >&2; exit 0; fi
bash scripts/gnustep-install.sh

# shellcheck disable=SC2046  # gnustep-config prints flags meant to be split
gcc -O2 -o "$work/parse_print" Benchmarks/GNUstep/parse_print.m \
  $(gnustep-config --objc-flags) $(gnustep-config --base-libs) -w
# SIFT names an already built release binary (one built with another --scratch-path), else it is built.
if [ -n "${SIFT:-}" ]; then sift=$SIFT; else
  swift build -c release --product sift >/dev/null
  sift=$(swift build -c release --show-bin-path)/sift
fi

# Candidate lines: the samples and every `in:` line of the parse corpus that needs no arguments,
# up to 200 bytes (GNUstep's memory use explodes on the corpus's deeply nested lines: over 12 GB
# within 10,000 lines).
{ cat Samples/predicates.txt
  for f in Corpus/parse/*.sift; do
    awk '/^in: /{ if (held) print line; line = substr($0, 5); held = 1; next }
         /^args: /{ held = 0 } END { if (held) print line }' "$f"
  done; } | grep -v -e '%' -e '\\' | awk 'length($0) <= 200' | sort -u > "$work/candidates.txt"
"$work/parse_print" --check < "$work/candidates.txt" > "$work/gnustep-check.txt" 2>/dev/null
"$sift" parse < "$work/candidates.txt" > "$work/sift-check.txt" || true
paste -d '\t' "$work/gnustep-check.txt" "$work/sift-check.txt" "$work/candidates.txt" \
  | awk -F '\t' '$1 == "ok" && $2 !~ /^[0-9]+:[0-9]+: error/ {
      line = $0; sub(/^[^\t]*\t[^\t]*\t/, "", line); print line }' > "$work/accepted.txt"  # a line may hold tabs
accepted=$(wc -l < "$work/accepted.txt")
[ "$accepted" -gt 0 ] || { echo "gnustep-bench: no line is accepted by both parsers" >&2; exit 1; }
awk -v n="$LINES" '{ a[NR] = $0 } END { for (i = 0; i < n; i++) print a[i % NR + 1] }' "$work/accepted.txt" > "$work/input.txt"

# Best wall-clock seconds of ROUNDS runs of "$@" < input > /dev/null, then, after a space, the
# best CPU seconds (user + system) of those runs: on a machine shared with other work the CPU
# time is the steadier measure, so both ratios are printed.
best() {
  local best="" cpu="" start end t c
  for _ in $(seq "$ROUNDS"); do
    start=$(date +%s%N)
    /usr/bin/time -f "%U %S" -o "$work/cpu" "$@" < "$work/input.txt" > /dev/null || true
    end=$(date +%s%N)
    t=$(( (end - start) / 1000 ))  # microseconds
    if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
    c=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$work/cpu")
    if [ -z "$cpu" ] || [ "$c" -lt "$cpu" ]; then cpu=$c; fi
  done
  awk -v us="$best" -v ms="$cpu" 'BEGIN { printf "%.3f %.3f", us / 1e6, ms / 1e3 }'
}
read -r sift_s sift_cpu <<< "$(best "$sift" parse)"
read -r gnustep_s gnustep_cpu <<< "$(best "$work/parse_print")"
echo "sift parse vs GNUstep NSPredicate: $LINES lines ($accepted distinct, $(wc -c < "$work/input.txt") bytes), best of $ROUNDS"
echo "  sift parse          ${sift_s} s wall, ${sift_cpu} s CPU"
echo "  GNUstep parse+print ${gnustep_s} s wall, ${gnustep_cpu} s CPU"
awk -v s="$sift_s" -v g="$gnustep_s" -v sc="$sift_cpu" -v gc="$gnustep_cpu" 'BEGIN {
  r = g / s; printf "  ratio %.1fx wall (target >= 30x): %s; %.1fx CPU\n", r, (r >= 30 ? "MET" : "NOT MET"), (sc > 0 ? gc / sc : 0) }'
