#!/usr/bin/env bash
# `make bench` entry point: bash bench/tcp-bench.sh BUILD_DIR [options].
# Extra options can also come from $BENCH_ARGS, e.g. BENCH_ARGS=--quick make bench.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
shift || true
# shellcheck disable=SC2086  # BENCH_ARGS is meant to be split into words
exec python3 "$here/tcp_bench.py" "$build" ${BENCH_ARGS:-} "$@"
