#!/usr/bin/env bash
# Runs the differential test (memory vs SQLite, Tests/SiftConformanceTests/DifferentialTests.swift) for
# much longer than CI: SIFT_DIFF_CASES cases (default 500,000) from a time-based seed unless
# SIFT_DIFF_SEED is set. The seed and the number of cases run are printed; a failure prints the
# shrunk predicate, dataset, both results and the SQL. Re-run a failure with the printed seed.
set -euo pipefail
cd "$(dirname "$0")/.."

export SIFT_DIFF_CASES="${SIFT_DIFF_CASES:-500000}"
export SIFT_DIFF_SEED="${SIFT_DIFF_SEED:-$(date +%s)}"
SCRATCH="${SCRATCH:-.build}"

swift build --build-tests --scratch-path "$SCRATCH"
swift test --skip-build --disable-xctest --scratch-path "$SCRATCH" \
    --filter 'DifferentialTests/memoryAgreesWithSQL' 2>&1 | grep -v '^[◇↳]'
