#!/bin/bash
# make bench-rdma and make bench-wan: boots the RDMA lab guest once and runs
# one bench script in it (bench/rdma_bench.py, bench/wan_bench.py). The
# kernel comes from the lab's cache; run `make rdma` first on a new machine
# if it is not built yet.
# Usage: bench/lab-bench.sh SCRIPT BUILD_DIR [the script's options]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
script=${1:?usage: lab-bench.sh SCRIPT BUILD_DIR [options]}
export RFTP_BUILD=$(cd "${2:?usage: lab-bench.sh SCRIPT BUILD_DIR [options]}" && pwd)
shift 2
KERNEL=$("$ROOT/tests/rdma/lab/build-kernel.sh")
# The guest has no host name of its own: the tables name the host.
export RFTP_BENCH_HOST="$(hostname), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
# 6G: rdma_bench.py keeps three copies of its 1 GiB file in guest tmpfs.
exec "$ROOT/tests/rdma/lab/run-in-guest.sh" -k "$KERNEL" -m 6G -t 3600 -- python3 "$ROOT/bench/$script" "$@"
