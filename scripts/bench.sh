#!/usr/bin/env bash
# Builds and runs the SiftBench parse-throughput benchmark in release mode (separate scratch path).
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift run -c release --package-path Benchmarks --scratch-path Benchmarks/.build SiftBench "$@"
