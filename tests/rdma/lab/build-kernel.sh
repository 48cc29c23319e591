#!/bin/bash
# Build (or reuse) the User-Mode Linux kernel the RDMA lab boots: an ARCH=um
# kernel from Debian's linux-source package with soft-iWARP (siw) and
# soft-RoCE (rxe) built in. The host kernel has no RDMA, so this is how the
# tests get real kernel RDMA without an RDMA NIC or a usable KVM.
#
# The result is cached outside the source tree, keyed by a hash of everything
# that shapes it (the option lists below, HZ, the exact source package
# version, the patches in patches/), so only the first run on a machine
# pays the several-minute build:
#   $RFTP_UML_CACHE/linux-uml-<key>   (default cache: /var/cache/rftp-uml,
#                                      or ~/.cache/rftp-uml without root)
# Prints the kernel's path on stdout; everything else goes to stderr.
#
# Safe to interrupt and rerun: the source is unpacked under a temporary name
# and renamed, make resumes in its build directory, and the kernel appears
# under its final name only by an atomic rename. A lock serialises
# concurrent runs for the same key.
#
# Env: RFTP_UML_CACHE (cache dir), JOBS (default nproc), KVER (default 6.1:
# rxe on 6.12 hung with "rxe_cq_post: queue full" in several runs).
set -euo pipefail

KVER=${KVER:-6.1}
JOBS=${JOBS:-$(nproc)}
CACHE=${RFTP_UML_CACHE:-/var/cache/rftp-uml}
# Without root, /var/cache is not ours: use the user's cache instead.
if [[ -z ${RFTP_UML_CACHE:-} && ! -w /var/cache && ! -w $CACHE ]]; then
    CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/rftp-uml
fi
# UML has one virtual CPU: two busy-polling peers only switch on a scheduler
# tick, so a faster tick keeps the RDMA tests quick.
UML_HZ=1000

# Everything =y (MODULES is off: there is no module tree in the guest).
Y_OPTS=(
    # On UML, INFINIBAND needs HAS_IOMEM and HAS_DMA; they come from
    # UML_IOMEM/DMA_EMULATION, which UML_PCI_OVER_VIRTIO selects (it also
    # gives PCI, which rxe depends on).
    VIRTIO_UML UML_PCI_OVER_VIRTIO
    INFINIBAND INFINIBAND_USER_ACCESS INFINIBAND_ADDR_TRANS RDMA_SIW RDMA_RXE
    # Guest-internal networking only: a veth pair carries both soft devices.
    NET INET IPV6 UNIX PACKET NETDEVICES NET_CORE VETH NET_NS
    # A wide-area path's delay and loss on that traffic (bench/wan_bench.py).
    NET_SCHED NET_SCH_NETEM
    # TLS records carried by the kernel (kTLS): the data connections'
    # kernel path under PROT P (middleware/tls/tls_relay.h).
    TLS
    NAMESPACES UTS_NS IPC_NS PID_NS
    # The host root arrives through hostfs; /tmp, /run, /dev/shm are tmpfs.
    HOSTFS TMPFS DEVTMPFS DEVTMPFS_MOUNT PROC_FS SYSFS
    # A file system whose syncs fail (tests/e2e/failing_disk_fs.py), for
    # the failed-checkpoint tests over RDMA.
    FUSE_FS
    # What the daemon and tools use.
    IO_URING FUTEX EPOLL EVENTFD SIGNALFD TIMERFD AIO FHANDLE SYSVIPC
    BINFMT_SCRIPT BINFMT_ELF MAGIC_SYSRQ
    # Console channels run-in-guest.sh wires to files and FIFOs.
    NULL_CHAN FD_CHAN SSL STDERR_CONSOLE
    CC_OPTIMIZE_FOR_PERFORMANCE DEBUG_INFO_NONE
)
N_OPTS=(
    MODULES
    UML_NET                 # no path from the guest to the host's network
    CC_OPTIMIZE_FOR_SIZE DEBUG_INFO DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT
    # Task stacks from the page allocator, always mapped in the UML process.
    # With vmalloc'd stacks the guest sometimes hung for good: an interrupt's
    # to_irq_stack copied a task's thread_info from a stack page with no
    # mapping, and UML's fault handler (a kernel fault in the vmalloc area
    # only resyncs the mappings) returned to fault again, ~250,000 times a
    # second (the watchdog's report, docs/testing.md "A stalled guest").
    VMAP_STACK
    # In um's defconfig, unused by the lab: about 9 % less to compile on a
    # machine that builds the kernel once, inside its first make test.
    REISERFS_FS ISO9660_FS AUTOFS_FS AUTOFS4_FS QUOTA INPUT HID USB_SUPPORT
    ETHTOOL_NETLINK BLK_DEV_NBD TUN WIRELESS WLAN
)
# Must be =y after olddefconfig, or the lab cannot work: checked below.
MUST=(VIRTIO_UML UML_PCI_OVER_VIRTIO HAS_IOMEM HAS_DMA PCI INFINIBAND
      INFINIBAND_USER_ACCESS INFINIBAND_ADDR_TRANS RDMA_SIW RDMA_RXE
      NET_NS VETH TMPFS DEVTMPFS HOSTFS IO_URING UNIX INET FUSE_FS NET_SCH_NETEM TLS)

log() { echo "[build-kernel] $*" >&2; }

# 1. Debian packages: the compiler toolchain and the kernel source.
need=()
for p in build-essential flex bison bc patch "linux-source-$KVER"; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >&2
fi
SRC_VERSION=$(dpkg-query -W -f='${Version}' "linux-source-$KVER")
# Fixes the source needs on some hosts, applied in name order at unpack
# (each patch's header says why).
PATCHES=("$(dirname "$0")"/patches/*.patch)
PATCH_SUM=$(cat "${PATCHES[@]}" | sha256sum | cut -c1-12)

# 2. The cache key: the option lists, HZ, the exact source version and the
# patches.
KEY=$( { declare -p Y_OPTS N_OPTS
         echo "$KVER $SRC_VERSION hz=$UML_HZ patches=$PATCH_SUM"; } |
       sha256sum | cut -c1-16)
BIN=$CACHE/linux-uml-$KEY
if [[ -x $BIN ]]; then
    echo "$BIN"
    exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock-$KEY"
flock -n 9 || { log "another run is building this kernel; waiting for it"; flock 9; }
[[ -x $BIN ]] && { echo "$BIN"; exit 0; }   # another run finished meanwhile

# 3. Unpack and patch the source once per source version and patch set
# (shared by all keys).
SRC=$CACHE/src-$KVER-$SRC_VERSION-$PATCH_SUM
if [[ ! -f $SRC/.unpacked ]]; then
    log "unpacking linux-source-$KVER $SRC_VERSION"
    tmp=$(mktemp -d "$CACHE/.unpack.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT     # an interrupted unpack leaves nothing behind
    tar -C "$tmp" -xJf "/usr/src/linux-source-$KVER.tar.xz"
    # arch/um/Kconfig declares "config HZ / int / default 100" without a
    # prompt, so .config cannot change it: give it one (default unchanged).
    sed -i '/^config HZ$/{n;s/^\tint$/\tint "Timer frequency"/}' \
        "$tmp/linux-source-$KVER/arch/um/Kconfig"
    grep -q 'int "Timer frequency"' "$tmp/linux-source-$KVER/arch/um/Kconfig" ||
        { log "ERROR: could not make HZ settable in arch/um/Kconfig"; exit 1; }
    for p in "${PATCHES[@]}"; do
        log "applying ${p##*/}"
        patch -d "$tmp/linux-source-$KVER" -p1 --quiet --forward <"$p" >&2
    done
    touch "$tmp/linux-source-$KVER/.unpacked"
    rm -rf "$SRC"
    mv "$tmp/linux-source-$KVER" "$SRC"
    rmdir "$tmp"
    trap - EXIT
fi

# 4. Configure out of tree: um defconfig plus the options above.
OUT=$CACHE/build-$KEY
mkdir -p "$OUT"
mk() { nice make -C "$SRC" O="$OUT" ARCH=um SUBARCH=x86_64 "$@" >&2; }
cfg() { "$SRC/scripts/config" --file "$OUT/.config" "$@"; }
mk defconfig
for pass in 1 2; do   # pass 2: options whose dependencies appeared in pass 1
    for o in "${Y_OPTS[@]}"; do cfg --enable "$o"; done
    for o in "${N_OPTS[@]}"; do cfg --disable "$o"; done
    # Any unused virtio ID: avoids a boot-time WARN about an unconfigured ID.
    cfg --set-val UML_PCI_OVER_VIRTIO_DEVICE_ID 1234
    cfg --set-val HZ "$UML_HZ"
    mk olddefconfig
done
missing=()
for o in "${MUST[@]}"; do grep -q "^CONFIG_$o=y" "$OUT/.config" || missing+=("$o"); done
((${#missing[@]} == 0)) || { log "ERROR: not =y after olddefconfig: ${missing[*]}"; exit 1; }
grep -q "^CONFIG_HZ=$UML_HZ\$" "$OUT/.config" || { log "ERROR: CONFIG_HZ is not $UML_HZ"; exit 1; }

# 5. Build, then publish under the final name by an atomic rename.
log "building in $OUT with -j$JOBS (several minutes the first time)"
start=$SECONDS
mk -j"$JOBS" linux
trap 'rm -f "$BIN.tmp.$$"' EXIT
cp "$OUT/linux" "$BIN.tmp.$$"
mv "$BIN.tmp.$$" "$BIN"
log "built $BIN in $((SECONDS - start)) s"
echo "$BIN"
