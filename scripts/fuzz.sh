#!/usr/bin/env bash
# Builds the libFuzzer parse/print round-trip fuzzer (Fuzz/ParseFuzzer.swift) and runs it for FUZZ_SECONDS (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=Fuzz/build
CORPUS=Fuzz/corpus
BIN="$BUILD/parse-fuzzer"
mkdir -p "$BUILD" "$CORPUS"

# Prefer fuzzer+address; fall back to fuzzer alone if ASan is unavailable on this toolchain.
build() {
    swiftc -sanitize="$1" -parse-as-library -O \
        Sources/SiftSyntax/*.swift Fuzz/ParseFuzzer.swift -o "$BIN" 2> "$BUILD/build-${1/,/-}.log"
}
if build fuzzer,address; then
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

LOG="$BUILD/fuzz.log"
set +e
"$BIN" "$CORPUS" -dict=Fuzz/predicate.dict -max_total_time="${FUZZ_SECONDS:-60}" -max_len=512 \
    -artifact_prefix="$BUILD/" -print_final_stats=1 2>&1 | tee "$LOG"
status=${PIPESTATUS[0]}
set -e
echo "---"
grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec|Done [0-9]+ runs' "$LOG" || true
if (( status != 0 )); then
    echo "fuzzer exited with status $status; crashing inputs (if any) are in $BUILD/crash-*" >&2
fi
exit "$status"
