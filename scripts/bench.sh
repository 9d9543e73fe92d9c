#!/usr/bin/env bash
# Builds the benchmarks in release mode (one separate scratch path, shared build), then runs the
# SiftBench parse-throughput benchmark (with printing against parsing), the EvalBench evaluation
# benchmark, the SQLBench SQL back-end benchmark, the PGBench PostgreSQL back-end benchmark (next to
# a throwaway server, scripts/with-postgres.sh, removed afterwards), the `sift filter` benchmark
# against jq (scripts/bench-cli.sh) and the StoreBench persistence benchmark (SiftStore vs the raw
# SQLite C API and GRDB). Arguments go to SiftBench; EVALBENCH_ARGS (e.g. "--records 100000") go to
# EvalBench, SQLBENCH_ARGS (e.g. "--rows 100000") to SQLBench, PGBENCH_ARGS (e.g. "--rows 50000") to
# PGBench and STOREBENCH_ARGS (e.g. "--rounds 3") to StoreBench; last, scripts/gnustep-bench.sh
# times `sift parse` against GNUstep's NSPredicate.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build
swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build SiftBench "$@"
echo
# shellcheck disable=SC2086  # EVALBENCH_ARGS is split into words on purpose
swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build EvalBench ${EVALBENCH_ARGS:-}
echo
# shellcheck disable=SC2086
swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build SQLBench ${SQLBENCH_ARGS:-}
echo
# The server's URL reaches PGBench from SIFT_POSTGRES_URL, which with-postgres.sh sets for the
# command it runs; the inner shell reads it there, so it is quoted against this shell's expansion.
# shellcheck disable=SC2016,SC2086
bash scripts/with-postgres.sh sh -c 'exec swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build PGBench --database-url "$SIFT_POSTGRES_URL" "$@"' PGBench ${PGBENCH_ARGS:-}
echo
# The `sift filter` command against jq (whole processes, scripts/bench-cli.sh).
bash scripts/bench-cli.sh
echo
# shellcheck disable=SC2086
swift run -c release --skip-build --package-path Benchmarks --scratch-path Benchmarks/.build StoreBench ${STOREBENCH_ARGS:-}
echo
# `sift parse` against GNUstep's NSPredicate, whole processes (installs gobjc and GNUstep when missing).
exec scripts/gnustep-bench.sh
