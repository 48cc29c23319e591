#!/bin/bash
# make bench-rdma-ab: the rftp rows of make bench-rdma for two builds in one
# boot of the RDMA lab guest (bench/rdma_ab_bench.py): BASE, a git revision
# built here in BUILD-base, against BUILD. The guest runs pinned to one host
# CPU, as the lab suite does, so the two builds meet the same scheduler.
# Usage: bench/rdma-ab-bench.sh BUILD_DIR BASE_REVISION [rdma_ab_bench.py options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export RFTP_BUILD=$(cd "${1:?usage: rdma-ab-bench.sh BUILD_DIR BASE_REVISION}" && pwd)
BASE=${2:?usage: rdma-ab-bench.sh BUILD_DIR BASE_REVISION}
shift 2
SRC=$RFTP_BUILD-base/src OUT=$RFTP_BUILD-base/build
rm -rf "$SRC"
mkdir -p "$SRC" "$OUT"
git -C "$ROOT" archive "$BASE" | tar -x -C "$SRC"
cmake -S "$SRC" -B "$OUT" -G Ninja >/dev/null
ninja -C "$OUT" rftp rftpd
KERNEL=$("$ROOT/tests/rdma/lab/build-kernel.sh")
exec "$ROOT/tests/rdma/lab/run-in-guest.sh" -k "$KERNEL" -m 6G -t 3600 --cpu 1 --rw "$OUT" -- \
    python3 "$ROOT/bench/rdma_ab_bench.py" --base-build "$OUT" "$@"
