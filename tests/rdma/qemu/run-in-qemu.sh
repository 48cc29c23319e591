#!/bin/bash
# Run one command inside a QEMU guest that boots Debian's own kernel with
# soft-RoCE (rxe0 on 192.0.2.1) and soft-iWARP (siw0 on 192.0.2.2) and
# return its output and exit status: the lab's second machine, for what the
# UML guest cannot run (sanitized builds, prepare-kernel.sh says why).
# The guest sees the host's root read-only over
# virtio-9p (same paths, same binaries), private tmpfs on /tmp /run /dev/shm,
# the project directory writable, and runs the lab's own init
# (../lab/guest-init.sh), so a command sees what it would see in UML.
#
# Usage: run-in-qemu.sh [options] [--] command [args...]
#   -t, --timeout SEC  guest-side limit for the command (default 600), for a
#                      guest of the reference speed: the guest multiplies it
#                      by the slowness it measures at boot; the host stops
#                      QEMU 60 s after that
#   -m, --mem SIZE     guest memory (default 4G)
#   --smp N            virtual CPUs (default: the host's, at most 2)
#   --devices LIST     the soft RDMA devices to add: "rxe0 siw0" (default),
#                      "rxe0" or "siw0"
#   --rw DIR           also share host DIR writable (repeatable)
#   --disk SIZE        a sparse ext4 image of SIZE on virtio (/dev/vda),
#                      mounted at /run/disk ($LAB_DISK), where O_DIRECT works
#   --times            print the boot time and the whole run's wall time
#   -v, --verbose      --times, plus the guest kernel console
# Exit status: the command's own; 124 = guest-side timeout; 125 = the guest
# died without returning a status; 126 = RDMA device setup failed;
# 137 = stopped by the host-side watchdog; 130 = interrupted.
#
# The CPU is emulated (TCG): /dev/kvm on these machines runs only guests
# made for it. rep movsb is emulated a byte at a time, so the CPU model
# hides ERMS and FSRM and the guest kernel copies in larger steps.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT=$(cd "$HERE/../../.." && pwd)
TIMEOUT=600 MEM=4G VERBOSE=0 TIMES=0 DISK= DEVICES="rxe0 siw0"
SMP=$(($(nproc) < 2 ? $(nproc) : 2))
RW=("$PROJECT")
while (($#)); do
    case $1 in
        -t|--timeout) TIMEOUT=$2; shift 2 ;;
        -m|--mem) MEM=$2; shift 2 ;;
        --smp) SMP=$2; shift 2 ;;
        --rw) RW+=("$(realpath "$2")"); shift 2 ;;
        --disk) DISK=$2; shift 2 ;;
        --devices) DEVICES=$2; shift 2 ;;
        --times) TIMES=1; shift ;;
        -v|--verbose) VERBOSE=1 TIMES=1; shift ;;
        --) shift; break ;;
        -*) echo "run-in-qemu: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
(($#)) || { echo "usage: run-in-qemu.sh [options] [--] command [args...]" >&2; exit 2; }
{ read -r KERNEL; read -r INITRAMFS; } < <("$HERE/prepare-kernel.sh") || true
[[ -f ${KERNEL:-} && -f ${INITRAMFS:-} ]] || { echo "run-in-qemu: no guest kernel (prepare-kernel.sh failed)" >&2; exit 125; }

WORK=$(mktemp -d /tmp/rftp-qemu.XXXXXX)
SHARE=$WORK/share
mkdir "$SHARE"
trap 'rm -rf "$WORK"' EXIT

. "$HERE/../lab/guest-share.sh"
write_share "$SHARE" "" "$@"

SHARES=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
        -virtfs "local,path=$SHARE,mount_tag=labshare,security_model=none")
for i in "${!RW[@]}"; do
    SHARES+=(-virtfs "local,path=${RW[i]},mount_tag=rw$i,security_model=none,multidevs=remap")
done
DRIVE=()
if [[ -n $DISK ]]; then
    make_disk "$WORK/disk.img" "$DISK" || exit 125
    DRIVE=(-drive "file=$WORK/disk.img,if=virtio,format=raw")
fi

# ttyS0 is the kernel console (a file), ttyS1/ttyS2 the command's
# stdout/stderr, through FIFOs opened by their readers first.
mkfifo "$WORK/out" "$WORK/err"
LOG=$WORK/console.log
cat <"$WORK/out" & cat_out=$!
cat <"$WORK/err" >&2 & cat_err=$!

start=$(date +%s.%N)
qemu-system-x86_64 -nodefaults -nographic -no-reboot -nic none \
    -accel tcg,thread=multi -cpu max,-erms,-fsrm -smp "$SMP" -m "$MEM" \
    -kernel "$KERNEL" -initrd "$INITRAMFS" \
    -append "console=ttyS0 panic=-1 quiet mitigations=off LAB_MACHINE=qemu LAB_INIT=$PROJECT/tests/rdma/lab/guest-init.sh RFTP_LAB_SHARE=$SHARE" \
    -serial "file:$LOG" -serial "file:$WORK/out" -serial "file:$WORK/err" \
    "${SHARES[@]}" "${DRIVE[@]}" </dev/null >>"$LOG" 2>&1 &
qemu=$!
trap 'echo "run-in-qemu: interrupted, stopping the guest" >&2; kill -KILL "$qemu" 2>/dev/null; rm -rf "$WORK"; exit 130' INT TERM HUP
# Host-side watchdog for a guest that hangs beyond its own bound, scaled by
# the slowness the guest measured at boot once it has.
(
    trap 'kill $sleeper 2>/dev/null; exit 0' TERM
    started=$SECONDS bound=$TIMEOUT scaled=0 LAB_SPEED_TEXT="not measured yet"
    while :; do
        sleep 5 & sleeper=$!
        wait $sleeper
        if ((!scaled)) && [[ -f $SHARE/speed ]] && grep -q '^LAB_BOUND=' "$SHARE/speed"; then
            . "$SHARE/speed"
            bound=$LAB_BOUND scaled=1
        fi
        if ((SECONDS - started >= bound + 60)); then
            echo "run-in-qemu: guest still running after $((bound + 60)) s, stopping it ($LAB_SPEED_TEXT)" >&2
            break
        fi
    done
    touch "$WORK/killed"
    kill -KILL "$qemu" 2>/dev/null
) & watchdog=$!

wait "$qemu"; qemu_rc=$?
kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
wait "$cat_out" "$cat_err"
elapsed=$(echo "$(date +%s.%N) - $start" | bc)

((VERBOSE)) && { echo "---- guest console ----"; cat "$LOG"; echo "----"; } >&2
rc=$(command_status run-in-qemu "$SHARE" "$LOG" "$elapsed") && exit "$rc"
if [[ -f $WORK/killed ]]; then
    echo "run-in-qemu: stopped by the host-side watchdog; console tail:" >&2
    tail -30 "$LOG" >&2
    exit 137
fi
echo "run-in-qemu: the guest ended without an exit status (QEMU rc=$qemu_rc); console tail:" >&2
tail -30 "$LOG" >&2
exit 125
