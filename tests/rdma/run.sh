#!/bin/bash
# The RDMA lab's entry point (what `make test` calls): builds or reuses the
# User-Mode Linux kernel, builds the guest-side helpers, boots ONE guest with
# soft-RoCE (rxe0) and soft-iWARP (siw0) and runs the whole guest suite in it.
# Exit status: 0 when every guest test passed, non-zero otherwise.
#
# Where the lab truly cannot start (a machine unlike the project's: not
# x86-64, no /dev/shm for guest memory, no way to get the packages or kernel
# source) it prints a loud "SKIPPED: <why>" and exits 0 — unless
# RFTP_RDMA_LAB_REQUIRED=1 (for CI), which turns a skip into a failure.
# A kernel build or package install that fails on a machine that could do it
# is a failure, not a skip.
#
# Env: RFTP_BUILD (build dir; helpers go to $RFTP_BUILD/rdma-lab, default
# <project>/build), RFTP_UML_CACHE (kernel cache, see lab/build-kernel.sh).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export RFTP_BUILD=${RFTP_BUILD:-$ROOT/build}
BIN=$RFTP_BUILD/rdma-lab
# Userspace RDMA from Debian: libraries and providers (rxe, siw), the tools
# the smoke test drives, and the headers the probe is compiled against.
PACKAGES=(rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
          libibverbs-dev librdmacm-dev gcc)

log() { echo "[rdma-lab] $*"; }
skip() {
    if [[ ${RFTP_RDMA_LAB_REQUIRED:-0} = 1 ]]; then
        echo "FAILED: the RDMA lab cannot start here and RFTP_RDMA_LAB_REQUIRED=1: $*"
        exit 1
    fi
    echo "************************************************************"
    echo "SKIPPED: RDMA lab tests: $*"
    echo "************************************************************"
    exit 0
}

# 1. Can this machine run the lab at all?
[[ $(uname -m) = x86_64 ]] || skip "the lab's UML kernel is built for x86-64, this is $(uname -m)"
[[ -d /dev/shm && -w /dev/shm ]] || skip "no writable /dev/shm to back the guest's memory"
command -v dpkg >/dev/null || skip "not a Debian system (the lab uses Debian's packages and kernel source)"

# 2. Packages, installed on first use: the userspace RDMA stack, and the
# toolchain and kernel source for the UML kernel.
KERNEL_PACKAGES=(build-essential flex bison bc linux-source-6.1)
apt_install() {   # a fresh machine may have no package lists yet: update once
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null ||
        { apt-get update >/dev/null &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" >/dev/null; }
}
missing=()
for p in "${PACKAGES[@]}" "${KERNEL_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
    [[ $(id -u) = 0 ]] || skip "packages missing and not root to install them: ${missing[*]}"
    command -v apt-get >/dev/null || skip "no apt-get to install ${missing[*]}"
    if ! apt-cache show linux-source-6.1 >/dev/null 2>&1; then
        apt-get update >/dev/null 2>&1
        apt-cache show linux-source-6.1 >/dev/null 2>&1 ||
            skip "no linux-source-6.1 package to be had (not Debian 12?): cannot build the UML kernel"
    fi
    log "installing ${missing[*]}"
    apt_install "${missing[@]}" || { echo "FAILED: apt-get install ${missing[*]}"; exit 1; }
fi

# 3. The kernel (first run on a machine: several minutes; cached afterwards).
start=$SECONDS
KERNEL=$("$HERE/lab/build-kernel.sh") || { echo "FAILED: building the UML kernel (see above)"; exit 1; }
log "kernel $KERNEL (ready in $((SECONDS - start)) s)"

# 4. Guest-side helpers, built on the host (same filesystem, same libraries).
mkdir -p "$BIN"
if [[ ! $BIN/write_imm_probe -nt $HERE/guest/write_imm_probe.c ]]; then
    gcc -O2 -Wall -Wextra -o "$BIN/write_imm_probe.tmp" "$HERE/guest/write_imm_probe.c" -lrdmacm -libverbs &&
        mv "$BIN/write_imm_probe.tmp" "$BIN/write_imm_probe" ||
        { echo "FAILED: building write_imm_probe"; exit 1; }
fi

# 5. The watchdog that stops a hung guest (below) works (about 20 s).
"$HERE/lab/check-watchdog.sh" "$KERNEL" || exit 1

# 6. One guest for the whole suite.
start=$SECONDS
# 4G: the 1 GiB tests keep a source, an upload and a download in guest tmpfs.
# --stall 360: every client and daemon a guest test starts has its own bound
# (300 s, then a bounded kill, reported with where it waited), so a guest
# silent for longer is a guest kernel that stopped scheduling them.
# -t 1200: a bound against a hang, not a budget. The suite takes 12 to 15
# minutes on two cores, varying between runs (765 s, and once over 900 s,
# on 2026-11-26).
run_suite() {
    "$HERE/lab/run-in-guest.sh" -k "$KERNEL" -m 4G --disk 16G -t 1200 --stall 360 --times -- "$HERE/guest/suite.sh" "$BIN"
}
run_suite
rc=$?
# 137: the host killed the guest, silent past --stall or past -t while its
# own timeout never fired, so its kernel stopped (seen in CI and here on
# rxe, always at the 34th test: UML's kernel faulting on one access forever,
# docs/testing.md). That says nothing about rftp: the suite runs once more,
# and the report above stays.
if ((rc == 137)); then
    echo "************************************************************"
    echo "WARNING: the lab guest's kernel stopped making progress (its state is"
    echo "printed above); running the whole guest suite once more"
    echo "************************************************************"
    run_suite
    rc=$?
fi
log "guest run took $((SECONDS - start)) s, exit status $rc"
case $rc in
    0) ;;
    124) echo "FAILED: the guest suite timed out" ;;
    125|126|137) echo "FAILED: the lab guest did not run properly (status $rc, see above)" ;;
    *) echo "FAILED: RDMA lab tests failed" ;;
esac
exit "$rc"
