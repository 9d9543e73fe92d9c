#!/usr/bin/env bash
# Builds the libFuzzer parse/print round-trip fuzzer (Fuzz/ParseFuzzer.swift compiled together with
# SiftSyntax's sources, under AddressSanitizer) and runs it. Any crash, leak, out-of-memory (libFuzzer's
# 2 GB RSS limit) or input slower than 10 s fails the run with libFuzzer's exit status.
#
#   make fuzz                          60 s (FUZZ_SECONDS, default 60)
#   FUZZ_RUNS=10000000 make fuzz       the long run: stops after 10 million executions (no time limit)
#   make fuzz-smoke                    30 s, what `make test` runs
#
# The binary is rebuilt only when a source it is made of (or this script) is newer than it.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=Fuzz/build
CORPUS=Fuzz/corpus
BIN="$BUILD/parse-fuzzer"
SOURCES=(Sources/SiftSyntax/*.swift Fuzz/ParseFuzzer.swift)
mkdir -p "$BUILD" "$CORPUS"

# SiftSyntax declares `package` API (PrintBuffer, StackGuard), which swiftc accepts only with a
# package name. Use the one SwiftPM gives it: the root package's identity (the checkout folder's
# name, lowercased) with every character that is not valid in an identifier turned into `_`.
PACKAGE_NAME=$(basename "$PWD" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9_]/_/g')

# Prefer fuzzer+address; fall back to fuzzer alone if ASan is unavailable on this toolchain.
build() {
    swiftc -sanitize="$1" -parse-as-library -O -package-name "$PACKAGE_NAME" \
        "${SOURCES[@]}" -o "$BIN" 2> "$BUILD/build-${1/,/-}.log"
}
up_to_date() {
    [[ -x "$BIN" ]] || return 1
    local source
    for source in "${SOURCES[@]}" scripts/fuzz.sh; do
        [[ "$source" -nt "$BIN" ]] && return 1
    done
    return 0
}
if up_to_date; then
    echo "$BIN is up to date"
elif build fuzzer,address; then
    echo "built $BIN with -sanitize=fuzzer,address"
elif build fuzzer; then
    echo "built $BIN with -sanitize=fuzzer (fuzzer,address build failed; see $BUILD/build-fuzzer-address.log)"
else
    cat "$BUILD/build-fuzzer.log" >&2
    exit 1
fi

# Seed the corpus: one file per sample line, plus a few built-in seeds.
seed() { printf '%s' "$1" > "$CORPUS/seed-$(printf '%s' "$1" | cksum | cut -d' ' -f1)"; }
if [[ -f Samples/predicates.txt ]]; then
    while IFS= read -r line || [[ -n "$line" ]]; do
        [[ -n "$line" ]] && seed "$line"
    done < Samples/predicates.txt
fi
seed 'age > 30'
seed 'age >= 18 AND name BEGINSWITH[cd] "jo" AND (city == "Oslo" OR tags CONTAINS "x")'
seed 'ANY tags.name ==[c] "swift" OR NOT (status IN {"a", "b"})'
seed 'SUBQUERY(items, $x, $x.price > 10 AND $x.qty BETWEEN {1, 5}).@count > 0'
seed 'TERNARY(age > 18, "adult", "minor") == "adult"'
seed 'FUNCTION(name, "uppercaseString") == "BOB" AND CAST(date, "NSDate") < now()'
seed '%K == %@ AND value > $limit AND list[FIRST] == list[SIZE] - 1'
seed 'sum:(scores) / count:(scores) >= 2.5e1 AND 0x1F & flags != 0'
seed 'TRUEPREDICATE AND NOT FALSEPREDICATE'

# A run count replaces the time limit (0 = none); without one the run lasts FUZZ_SECONDS.
if [[ -n "${FUZZ_RUNS:-}" ]]; then
    LIMITS=(-runs="$FUZZ_RUNS" -max_total_time="${FUZZ_SECONDS:-0}")
else
    LIMITS=(-max_total_time="${FUZZ_SECONDS:-60}")
fi

LOG="$BUILD/fuzz.log"
set +e
"$BIN" "$CORPUS" -dict=Fuzz/predicate.dict "${LIMITS[@]}" -max_len=512 -timeout=10 \
    -artifact_prefix="$BUILD/" -print_final_stats=1 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
set -e
echo "---"
grep -aE 'stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|Done [0-9]+ runs' "$LOG" || true
if (( status != 0 )); then
    echo "fuzzer exited with status $status; the failing input (if any) is in $BUILD/crash-*, leak-*, oom-* or timeout-*" >&2
fi
exit "$status"
