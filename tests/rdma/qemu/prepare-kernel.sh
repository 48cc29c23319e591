#!/bin/bash
# Prepare (or reuse) what the QEMU guest boots: Debian's own x86-64 kernel,
# downloaded and unpacked but never installed, and an initramfs holding
# busybox, the modules the guest needs (siw built here, Debian has none)
# and its first init (initramfs-init.sh).
#
# Why a second machine beside the UML lab: UML 6.1 gives a process 512 GiB of
# address space (three-level page tables), and the sanitizers' shadow memory
# lies above that, so AddressSanitizer and ThreadSanitizer cannot start in a
# UML guest. Debian's kernel under QEMU has the usual 128 TiB. The host's
# /dev/kvm cannot boot a stock kernel, so QEMU emulates the CPU (TCG): slow,
# but the RDMA below is the real kernel's rxe and siw under the host's
# rdma-core, as on a real NIC.
#
# Prints two lines on stdout: the kernel's path, then the initramfs's.
# Cached in $RFTP_VM_CACHE (default /var/cache/rftp-vm) by kernel release and
# a hash of this script and the init: a new Debian kernel or a changed list
# prepares anew, anything else is free.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${RFTP_VM_CACHE:-/var/cache/rftp-vm}
# What the guest loads, in the order modprobe resolves (dependencies first):
# virtio and 9p carry the host's files, ib_* and rdma_* are the RDMA core,
# rdma_rxe is soft-RoCE and asks the crypto API for crc32 (its ICRC) without
# naming a module, siw is soft-iWARP (built below), veth carries both, and
# virtio_blk with ext4 gives the tests a disk where O_DIRECT works, and tls
# is kTLS (tests/rdma/guest/test_ktls.py on Debian's own kernel). kTLS asks
# the crypto API for gcm(aes) by name, as rxe does for crc32: gcm, ctr and
# ghash are loaded beside it.
MODULES=(virtio_pci 9pnet_virtio 9p crc32_generic crc32-pclmul rdma_rxe siw rdma_ucm ib_uverbs veth
         virtio_blk ext4 fuse tls gcm ctr ghash-generic aesni-intel ghash-clmulni-intel)
SERIES=6.1
PACKAGES=(qemu-system-x86 busybox-static kmod cpio build-essential "linux-source-$SERIES")

log() { echo "[qemu-kernel] $*" >&2; }

missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
    log "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
        { apt-get update -qq >&2 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
fi

# The image package linux-image-amd64 points at today: its release names the cache.
image=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
if [[ -z $image ]]; then
    apt-get update -qq >&2
    image=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
fi
[[ -n $image ]] || { log "ERROR: no Debian kernel image to be had (linux-image-amd64)"; exit 1; }
release=${image#linux-image-}
key=$(cat "${BASH_SOURCE[0]}" "$HERE/initramfs-init.sh" | sha256sum | cut -c1-12)
DIR=$CACHE/$release-$key
if [[ -f $DIR/ready ]]; then
    echo "$DIR/vmlinuz"; echo "$DIR/initramfs.cpio.gz"
    exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
[[ -f $DIR/ready ]] && { echo "$DIR/vmlinuz"; echo "$DIR/initramfs.cpio.gz"; exit 0; }
rm -rf "$DIR"
tmp=$(mktemp -d "$CACHE/.prepare.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# download PACKAGE...: into $tmp, as root (apt's sandbox user cannot write there).
download() { (cd "$tmp" && apt-get -q -o APT::Sandbox::User=root download "$@" >&2); }

# Debian builds its kernels without siw (CONFIG_RDMA_SIW is not set), so it
# is built here out of tree: the driver's source from linux-source, against
# the image's own headers (both unpacked, never installed).
build_siw() {   # build_siw IMAGE_VERSION
    local version=$1 headers=$tmp/headers src=$tmp/linux-source-$SERIES/drivers/infiniband/sw/siw h
    download "linux-headers-$release=$version" "linux-headers-${release%-amd64}-common=$version" \
             "linux-kbuild-$SERIES=$version"
    mkdir -p "$headers"
    for deb in "$tmp"/linux-headers-*.deb "$tmp"/linux-kbuild-*.deb; do dpkg-deb -x "$deb" "$headers"; done
    tar -xJf "/usr/src/linux-source-$SERIES.tar.xz" -C "$tmp" "linux-source-$SERIES/drivers/infiniband/sw/siw"
    h=$headers/usr/src/linux-headers-$release
    # The headers' Makefile includes the common half by its installed path.
    sed -i "s|^include /usr/src/|include $headers/usr/src/|" "$h/Makefile"
    make -C "$h" M="$src" CONFIG_RDMA_SIW=m modules >"$tmp/siw-build.log" 2>&1 ||
        { tail -30 "$tmp/siw-build.log" >&2; log "ERROR: siw.ko did not build"; exit 1; }
    mkdir -p "$modroot/extra"
    cp "$src/siw.ko" "$modroot/extra/siw.ko"
}

log "downloading $image (unpacked into the cache, not installed)"
download "$image"
dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/root"
modroot=$tmp/root/lib/modules/$release
build_siw "$(dpkg-deb -f "$tmp"/linux-image-*.deb Version)"
/sbin/depmod -b "$tmp/root" "$release"

# The initramfs: busybox and its applets, the modules in load order, the init.
ramfs=$tmp/initramfs
mkdir -p "$ramfs"/{bin,dev,proc,sys,host,lib/modules}
cp /bin/busybox "$ramfs/bin/busybox"
cp "$HERE/initramfs-init.sh" "$ramfs/init"
chmod +x "$ramfs/init"
: > "$ramfs/modules"
for m in "${MODULES[@]}"; do
    /sbin/modprobe -d "$tmp/root" -S "$release" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r path; do
    name=$(basename "$path")
    case $name in
        *.ko.xz) xz -dc "$path" > "$ramfs/lib/modules/${name%.xz}"; name=${name%.xz} ;;
        *.ko.zst) zstd -qdc "$path" > "$ramfs/lib/modules/${name%.zst}"; name=${name%.zst} ;;
        *) cp "$path" "$ramfs/lib/modules/$name" ;;
    esac
    echo "$name" >> "$ramfs/modules"
done
for m in rdma_rxe siw tls; do
    grep -q "^$m.ko\$" "$ramfs/modules" || { log "ERROR: no $m module for $image"; exit 1; }
done
(cd "$ramfs" && find . | cpio -o -H newc --quiet | gzip -1) > "$tmp/initramfs.cpio.gz"

mkdir -p "$DIR"
mv "$tmp/root/boot/vmlinuz-$release" "$DIR/vmlinuz"
mv "$tmp/initramfs.cpio.gz" "$DIR/initramfs.cpio.gz"
log "ready: $DIR ($(wc -l < "$ramfs/modules") modules)"
touch "$DIR/ready"
# What older kernels, older lists or a killed run left (about 11 MB each),
# and this run's own scratch.
find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$release-$key" -exec rm -rf {} +
echo "$DIR/vmlinuz"; echo "$DIR/initramfs.cpio.gz"
