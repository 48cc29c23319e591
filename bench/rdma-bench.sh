#!/bin/bash
# make bench-rdma: boots the RDMA lab guest once and runs bench/rdma_bench.py
# in it (both soft devices). The kernel comes from the lab's cache; run
# `make rdma` first on a new machine if it is not built yet.
# Usage: bench/rdma-bench.sh BUILD_DIR [rdma_bench.py options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export RFTP_BUILD=$(cd "${1:?usage: rdma-bench.sh BUILD_DIR}" && pwd)
shift
KERNEL=$("$ROOT/tests/rdma/lab/build-kernel.sh")
exec "$ROOT/tests/rdma/lab/run-in-guest.sh" -k "$KERNEL" -m 6G -t 1800 -- python3 "$ROOT/bench/rdma_bench.py" "$@"
