#!/bin/busybox sh
# PID 1 of the QEMU guest, from its initramfs (prepare-kernel.sh builds it):
# loads the modules, mounts the host's root read-only over virtio-9p, and
# hands over to the lab's own init (tests/rdma/lab/guest-init.sh) inside it,
# so both machines run the same init, the same tools and the same tests.
#
# The kernel hands unknown key=value boot arguments to init as environment:
#   LAB_INIT  the host path of guest-init.sh
# and guest-init.sh reads the rest (LAB_MACHINE, RFTP_LAB_SHARE).
/bin/busybox mkdir -p /proc /sys /dev
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
say() { /bin/busybox echo "[initramfs] $*" > /dev/console; }
halt() { say "$*"; /bin/busybox sync; /bin/busybox poweroff -f; }

while read -r m; do
    /bin/busybox insmod "/lib/modules/$m" || say "insmod $m failed"
done < /modules

# cache=loose: the host's files do not change under a test run, and every
# process start reads dozens of them.
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host ||
    halt "cannot mount the host's root over 9p"
[ -n "$LAB_INIT" ] && [ -f "/host$LAB_INIT" ] || halt "no lab init at '$LAB_INIT'"
/bin/busybox umount /proc /sys /dev
exec /bin/busybox chroot /host /bin/bash "$LAB_INIT"
