#!/bin/bash
# PID 1 of the UML guest (run-in-guest.sh boots the kernel with init=<this>),
# and of the QEMU guest once its initramfs has mounted the host's root
# (../qemu/run-in-qemu.sh). It prepares a small test machine, runs the one
# command it was given, writes the command's exit status back to the host and
# powers off.
#
# The kernel hands unknown key=value boot arguments to init as environment:
#   RFTP_LAB_SHARE  host directory holding the command (cmd.sh), its
#                   environment (env.sh) and settings (lab.sh); init writes
#                   rc and boot-seconds back into it
#   LAB_MACHINE     uml (the default) or qemu: how host directories and the
#                   disk reach the guest (hostfs and ubd, or 9p and virtio)
#
# Devices: a guest-internal veth pair carries both soft RDMA devices, because
# siw cannot use lo (lo's MAC is zero, so its GID is zero and rdma_cm never
# resolves it) and rxe only reaches devices in its own network namespace.
#   veth0 192.0.2.1 -> rxe0 (soft-RoCE v2)
#   veth1 192.0.2.2 -> siw0 (soft-iWARP)
# LAB_DEVICES (lab.sh, run-in-guest.sh --devices) says which of the two to add.
# TEST-NET-1 addresses; the kernel has no host network driver, so no packet
# can leave the guest.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "[guest-init] $*" >/dev/console; }
finish() {
    echo "$1" > "$S/rc"
    sync
    poweroff -f 2>/dev/null
    echo o > /proc/sysrq-trigger    # if poweroff is missing or fails
    sleep 10
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
# The host root is read-only: give the guest its own scratch space.
for d in /dev/shm /var/tmp /run; do mount -t tmpfs -o mode=1777 tmpfs "$d"; done
mount -t tmpfs -o mode=1777,size=80% tmpfs /tmp   # the tests' files live here: most of the guest's memory
# mount_host HOST_DIR TAG WHERE: a host directory, writable. UML reaches any
# host path through hostfs; QEMU exports each one as a 9p tag
# (run-in-qemu.sh), and cache=mmap keeps both sides' writes visible.
mount_host() {
    if [[ ${LAB_MACHINE:-uml} = qemu ]]; then
        mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=mmap "$2" "$3"
    else
        mount -t hostfs -o "$1" hostfs "$3"
    fi
}
mkdir -p /run/lab
if ! mount_host "$RFTP_LAB_SHARE" labshare /run/lab; then
    say "cannot mount the share $RFTP_LAB_SHARE"
    poweroff -f
fi
S=/run/lab
. "$S/lab.sh"     # LAB_CWD LAB_TIMEOUT LAB_CPU_MHZ LAB_MTU LAB_DEVICES; LAB_RW_DIRS array

# Host directories the tests may write (the project dir), at the same paths.
# One under /tmp (a CI clone, say) sits below the guest's fresh tmpfs, so its
# mount point has to be made first.
for i in "${!LAB_RW_DIRS[@]}"; do
    d=${LAB_RW_DIRS[i]}
    mkdir -p "$d" && mount_host "$d" "rw$i" "$d" || say "writable mount of $d failed"
done

# A real block device, when asked for (--disk): ext4, where O_DIRECT works.
if [[ -n ${LAB_DISK:-} ]]; then
    mkdir -p "$LAB_DISK"
    disk=/dev/ubda
    [[ ${LAB_MACHINE:-uml} = qemu ]] && disk=/dev/vda
    if mount -t ext4 "$disk" "$LAB_DISK" && chmod 1777 "$LAB_DISK"; then
        export LAB_DISK
    else
        say "the lab disk $disk could not be mounted"
        finish 125
    fi
fi

# Registering memory pins pages; the default memlock limit is far too small.
ulimit -l unlimited
# UML's /proc/cpuinfo has no "cpu MHz" line, and perftest then reports 0 MB/s:
# bind a copy with the host's value over it.
if [[ -n $LAB_CPU_MHZ ]] && ! grep -q '^cpu MHz' /proc/cpuinfo; then
    sed "/^model name/a cpu MHz\t\t: $LAB_CPU_MHZ" /proc/cpuinfo > /run/cpuinfo &&
        mount --bind /run/cpuinfo /proc/cpuinfo
fi

# MTU 9000 on both ends gives rxe a 4096-byte RDMA MTU (about twice the
# throughput of the 1024 it gets at 1500). One `ip -batch`, because every
# process start costs tens of milliseconds in the guest.
if ! { ip -batch - <<EOF
link set lo up
link add veth0 mtu $LAB_MTU type veth peer name veth1 mtu $LAB_MTU
addr add 192.0.2.1/24 dev veth0
addr add 192.0.2.2/24 dev veth1
link set veth0 up
link set veth1 up
EOF
       { [[ " $LAB_DEVICES " != *" rxe0 "* ]] || rdma link add rxe0 type rxe netdev veth0; } &&
       { [[ " $LAB_DEVICES " != *" siw0 "* ]] || rdma link add siw0 type siw netdev veth1; }; }; then
    say "RDMA device setup failed"
    finish 126
fi
# The ports turn ACTIVE shortly after their netdev is up; give them a moment
# so tests do not race the link (the smoke test still checks the state).
for _ in $(seq 50); do
    active=1
    for dev in $LAB_DEVICES; do
        grep -q ACTIVE "/sys/class/infiniband/$dev/ports/1/state" 2>/dev/null || active=0
    done
    ((active)) && break
    sleep 0.1
done
# How fast this guest is. A guest's cost is its process starts and system
# calls (each one several host context switches), and hosts of the same kind
# differ there by a factor of three or more, with steal on top. A fixed loop
# of both, against what a reference guest takes (docs/testing.md), gives the
# slowness that scales every bound below and in the tests (LAB_SLOWNESS).
. "$(dirname "${BASH_SOURCE[0]}")/guest-speed.sh"
measure_guest_speed > "$S/speed"
. "$S/speed"
say "speed: $LAB_SPEED_TEXT"
LAB_BOUND=$(awk -v t="$LAB_TIMEOUT" -v s="$LAB_SLOWNESS" 'BEGIN { printf "%d", t * s }')
echo "LAB_BOUND=$LAB_BOUND" >> "$S/speed"
cut -d' ' -f1 /proc/uptime > "$S/boot-seconds"

# The command's stdout/stderr go to two terminals the host wires to its own
# stdout/stderr (UML's tty1/tty2, QEMU's second and third serial ports);
# raw mode so the tty layer passes bytes unchanged.
OUT=/dev/tty1 ERR=/dev/tty2
[[ ${LAB_MACHINE:-uml} = qemu ]] && OUT=/dev/ttyS1 ERR=/dev/ttyS2
stty -F "$OUT" raw -echo 2>/dev/null
stty -F "$ERR" raw -echo 2>/dev/null
(
    set +e
    . "$S/env.sh" 2>/dev/null
    # What the tests read to find the devices (after env.sh: the lab decides).
    RFTP_LAB_DEVICES=
    for dev in $LAB_DEVICES; do
        case $dev in rxe0) RFTP_LAB_DEVICES+=" rxe0=192.0.2.1" ;; siw0) RFTP_LAB_DEVICES+=" siw0=192.0.2.2" ;; esac
    done
    export RFTP_LAB_DEVICES=${RFTP_LAB_DEVICES# }
    cd "$LAB_CWD" 2>/dev/null || cd /
    export LAB_SLOWNESS LAB_SPEED_TEXT
    # Guest-side bound, scaled by the guest's speed; the host has its own
    # watchdog in case this hangs.
    timeout -k 5 "$LAB_BOUND" bash "$S/cmd.sh"
    rc=$?
    ((rc == 124)) && echo "the guest's bound of $LAB_BOUND s ($LAB_TIMEOUT s x slowness $LAB_SLOWNESS) was reached" \
        "($LAB_SPEED_TEXT)" >&2
    exit $rc
) </dev/null >"$OUT" 2>"$ERR"
finish $?
