#!/bin/bash
# make bench-two-devices: bench/two_devices_bench.py, copying between the
# machine's disk and a second device.
# Usage: bench/two-devices-bench.sh BUILD_DIR [OTHER_DIR] [two_devices_bench.py options]
# Without OTHER_DIR (root only) the second device is a new zram device, made
# for the run and removed after it: RAM, compressed by the CPUs rftp also
# uses. A machine with a second disk should name a directory on it instead.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export RFTP_BUILD=$(cd "${1:?usage: two-devices-bench.sh BUILD_DIR [OTHER_DIR]}" && pwd)
shift
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
    exec python3 "$ROOT/bench/two_devices_bench.py" --other-dir "$1" "${@:2}"
fi

if [ "$(id -u)" != 0 ] || [ ! -e /sys/class/zram-control/hot_add ]; then
    echo "two-devices bench: no second device given, and a zram device needs root and the zram module;" >&2
    echo "  run it as: make bench-two-devices OTHER_DIR=/a/directory/on/another/disk" >&2
    exit 2
fi
id="" mnt=""
cleanup() {
    [ -n "$mnt" ] && { umount "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; }
    [ -n "$id" ] && { echo "$id" > /sys/class/zram-control/hot_remove 2>/dev/null || true; }
}
trap cleanup EXIT
id=$(cat /sys/class/zram-control/hot_add)
mnt=$(mktemp -d /tmp/rftp-zram.XXXXXX)
zram=/sys/block/zram$id
# lz4 if offered: the cheapest of the kernel's compressors for these CPUs.
grep -qw lz4 "$zram/comp_algorithm" && echo lz4 > "$zram/comp_algorithm"
echo 12G > "$zram/disksize"
mkfs.ext4 -q "/dev/zram$id"
mount "/dev/zram$id" "$mnt"
algorithm=$(grep -o '\[[a-z0-9-]*\]' "$zram/comp_algorithm" | tr -d '[]')
python3 "$ROOT/bench/two_devices_bench.py" --other-dir "$mnt" \
    --other-label "ext4 on zram$id (RAM, $algorithm; made for this run)" "$@"
