#!/bin/bash
# make bench-wan: boots the RDMA lab guest once and runs bench/wan_bench.py
# in it: rftp over TCP, siw and rxe at round trips of 0, 10 and 50 ms
# (netem in the guest's kernel; the host's has none).
# Usage: bench/wan-bench.sh BUILD_DIR [wan_bench.py options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export RFTP_BUILD=$(cd "${1:?usage: wan-bench.sh BUILD_DIR}" && pwd)
shift
KERNEL=$("$ROOT/tests/rdma/lab/build-kernel.sh")
exec "$ROOT/tests/rdma/lab/run-in-guest.sh" -k "$KERNEL" -m 4G -t 3600 -- python3 "$ROOT/bench/wan_bench.py" "$@"
