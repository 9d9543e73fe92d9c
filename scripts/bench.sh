#!/usr/bin/env bash
# Builds both benchmarks in release mode (one separate scratch path, shared build), then runs the
# SiftBench parse-throughput benchmark followed by the EvalBench evaluation benchmark.
# Arguments go to SiftBench; EVALBENCH_ARGS (e.g. "--records 100000") go to EvalBench.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build
swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build SiftBench "$@"
echo
# shellcheck disable=SC2086  # EVALBENCH_ARGS is split into words on purpose
exec swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build EvalBench ${EVALBENCH_ARGS:-}
