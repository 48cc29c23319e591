#!/bin/bash
# make bench-disk: bench/disk_bench.py on the machine's own disk over TCP,
# then in the RDMA lab guest on its ext4 block device over RDMA.
# Usage: bench/disk-bench.sh BUILD_DIR [disk_bench.py options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export RFTP_BUILD=$(cd "${1:?usage: disk-bench.sh BUILD_DIR}" && pwd)
shift
python3 "$ROOT/bench/disk_bench.py" --where host "$@"
KERNEL=$("$ROOT/tests/rdma/lab/build-kernel.sh")
exec "$ROOT/tests/rdma/lab/run-in-guest.sh" -k "$KERNEL" -m 4G --disk 12G -t 1800 -- \
    python3 "$ROOT/bench/disk_bench.py" --where guest "$@"
