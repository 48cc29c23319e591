#!/bin/bash
# Run one command inside a User-Mode Linux guest that has real kernel RDMA
# (rxe0 on 192.0.2.1, siw0 on 192.0.2.2; see guest-init.sh) and return its
# output and exit status. UML is an ordinary process: no KVM, no root needed
# to boot it. The guest sees the host's root read-only through hostfs (same
# paths, same binaries), private tmpfs on /tmp /run /dev/shm, and the project
# directory writable.
#
# Usage: run-in-guest.sh [options] [--] command [args...]
#   -k, --kernel PATH  UML kernel (default: $RFTP_UML_KERNEL, else build-kernel.sh)
#   -t, --timeout SEC  guest-side limit for the command (default 600), for a
#                      guest of the reference speed: the guest multiplies it
#                      by the slowness it measures at boot (guest-speed.sh);
#                      the host kills UML 60 s later should the guest hang
#   -m, --mem SIZE     guest memory (default 2G; sparse, backed by /dev/shm)
#   --rw DIR           also mount host DIR writable (repeatable)
#   --disk SIZE        a real block device: a sparse ext4 image of SIZE (ubd0)
#                      that the guest mounts at /run/disk ($LAB_DISK), where
#                      O_DIRECT works (tmpfs and hostfs refuse it in 6.1)
#   --stall SEC        the host also kills UML when the guest has printed
#                      nothing for SEC seconds (times the guest's slowness;
#                      a guest kernel that hangs
#                      starves its own timeout), after asking the guest
#                      kernel what it runs and what is blocked (printed)
#   --devices LIST     the soft RDMA devices to add: "rxe0 siw0" (default),
#                      "rxe0" or "siw0"
#   --cpu N            run the guest on host CPU N alone. A guest is a kernel
#                      process and the processes it traces, handing the CPU
#                      to each other at every guest system call and fault;
#                      on one CPU that is a plain context switch, across two
#                      a wake-up of an idle CPU: on a virtual machine several
#                      times slower (docs/testing.md)
#   --times            print the boot time and the whole run's wall time
#   -v, --verbose      --times, plus the guest kernel console
# Exit status: the command's own; 124 = guest-side timeout; 125 = the guest
# died without returning a status; 126 = RDMA device setup failed;
# 137 = killed by the host-side watchdog; 130 = interrupted.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROJECT=$(cd "$HERE/../../.." && pwd)
KERNEL=${RFTP_UML_KERNEL:-} TIMEOUT=600 MEM=2G VERBOSE=0 TIMES=0 DISK= STALL=0 DEVICES="rxe0 siw0" CPU=
RW=("$PROJECT")
while (($#)); do
    case $1 in
        -k|--kernel) KERNEL=$2; shift 2 ;;
        -t|--timeout) TIMEOUT=$2; shift 2 ;;
        -m|--mem) MEM=$2; shift 2 ;;
        --rw) RW+=("$(realpath "$2")"); shift 2 ;;
        --disk) DISK=$2; shift 2 ;;
        --stall) STALL=$2; shift 2 ;;
        --devices) DEVICES=$2; shift 2 ;;
        --cpu) CPU=$2; shift 2 ;;
        --times) TIMES=1; shift ;;
        -v|--verbose) VERBOSE=1 TIMES=1; shift ;;
        --) shift; break ;;
        -*) echo "run-in-guest: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
(($#)) || { echo "usage: run-in-guest.sh [options] [--] command [args...]" >&2; exit 2; }
[[ -n $KERNEL ]] || KERNEL=$("$HERE/build-kernel.sh") || exit 125
[[ -x $KERNEL ]] || { echo "run-in-guest: no UML kernel at $KERNEL" >&2; exit 125; }

# One private directory for everything: the share the guest mounts, the
# console FIFOs and log, and UML's own runtime dir (uml_dir).
WORK=$(mktemp -d /tmp/rftp-lab.XXXXXX)
SHARE=$WORK/share
mkdir "$SHARE"
trap 'rm -rf "$WORK"' EXIT

. "$HERE/guest-share.sh"
write_share "$SHARE" "$(awk -F': *' '/^cpu MHz/{print $2; exit}' /proc/cpuinfo)" "$@"
# The disk image lives in the private directory on the host's own disk
# (not /dev/shm: it may grow to gigabytes) and goes with it.
UBD=()
if [[ -n $DISK ]]; then
    make_disk "$WORK/disk.img" "$DISK" || exit 125
    UBD=(ubd0="$WORK/disk.img")
fi

# Guest tty1/tty2 -> our stdout/stderr through FIFOs: UML makes its channel
# fds non-blocking, which must not leak onto the caller's stdout/stderr.
mkfifo "$WORK/out" "$WORK/err"
LOG=$WORK/console.log
# The guest's output also goes to a file whose age tells the watchdog
# whether the guest still makes progress.
PROGRESS=$WORK/progress
tee "$PROGRESS" <"$WORK/out" & cat_out=$!
cat <"$WORK/err" >&2 & cat_err=$!

start=$(date +%s.%N)
# Guest RAM is a sparse file UML creates in $TMPDIR: keep it on tmpfs.
PIN=()
[[ -n $CPU ]] && PIN=(taskset -c "$CPU")
TMPDIR=/dev/shm "${PIN[@]}" "$KERNEL" mem="$MEM" root=/dev/root rootfstype=hostfs rootflags=/ ro \
    init="$HERE/guest-init.sh" uml_dir="$WORK" "${UBD[@]}" \
    con=null ssl=null con0=null,fd:3 con1=null,fd:4 con2=null,fd:5 \
    RFTP_LAB_SHARE="$SHARE" \
    </dev/null 3>>"$LOG" 4>"$WORK/out" 5>"$WORK/err" >>"$LOG" 2>&1 &
uml=$!
# UML runs its helper processes in the process group it leads: killing the
# group leaves no stray processes behind.
stop_uml() {
    kill -TERM "$uml" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$uml" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- -"$uml" 2>/dev/null
}
trap 'echo "run-in-guest: interrupted, stopping the guest" >&2; stop_uml; rm -rf "$WORK"; exit 130' INT TERM HUP
# Where the UML process spends its time, by guest kernel symbol, sampled
# from the host (perf, where installed): this still answers when the guest
# kernel no longer serves its management console.
sample_guest_kernel() {
    command -v perf >/dev/null || return
    timeout 20 perf record -q -o "$WORK/perf.data" -p "$uml" -- sleep 3 >/dev/null 2>&1 || return
    { echo "run-in-guest: where the guest kernel's process spent 3 s (host perf):"
      perf report -q -i "$WORK/perf.data" --stdio --no-children --sort dso,sym 2>/dev/null | grep -v "^$" | head -30
    } >&2
    sample_guest_faults
}
# The stall seen so far is the guest kernel faulting on one access again and
# again (host page faults and SIGSEGV deliveries fill the profile): where in
# the guest kernel, and on which address, says what to fix or avoid.
sample_guest_faults() {
    local ip n
    timeout 20 perf record -q -e exceptions:page_fault_user -o "$WORK/faults.data" -p "$uml" -- sleep 1 \
        >/dev/null 2>&1 || return
    echo "run-in-guest: the guest kernel's own page faults in 1 s (host perf), by instruction:" >&2
    perf script -i "$WORK/faults.data" 2>/dev/null |
        grep -o 'address=0x[0-9a-f]* ip=0x[0-9a-f]*' | sort | uniq -c | sort -rn | head -5 |
        while read -r n ip; do
            echo "  $n x $ip in $(addr2line -f -e "$KERNEL" "${ip##*ip=}" 2>/dev/null | head -1)" >&2
        done
}
# What the guest kernel runs and what is blocked, into the console log,
# from a guest that still answers its management console.
dump_guest_tasks() {
    local sock pid
    sample_guest_kernel  # needs no console
    sock=$(ls "$WORK"/*/mconsole 2>/dev/null | head -1)
    [[ -n $sock ]] || return
    mc() { timeout 20 python3 "$HERE/mconsole.py" "$sock" "$@" >/dev/null; sleep 1; }
    # Which task runs now (sysrq p names it; its registers read 0 on UML)
    # and its stack, three times, then every blocked task. Not sysrq t:
    # UML panics printing a workqueue worker.
    for _ in 1 2 3; do
        mc sysrq p || { echo "run-in-guest: the guest did not answer sysrq" >&2; return; }
        pid=$(grep -o '^Pid: [0-9]*' "$LOG" | tail -1 | cut -d' ' -f2)
        [[ -n $pid ]] && mc stack "$pid"
    done
    mc sysrq w
}
# Host-side watchdog, for a guest that hangs beyond its own timeout, or
# (--stall) prints nothing for too long. Both bounds are scaled by the
# slowness the guest measured at boot (guest-speed.sh), once it has.
(
    trap 'kill $sleeper 2>/dev/null; exit 0' TERM
    started=$SECONDS bound=$TIMEOUT stall=$STALL scaled=0 LAB_SPEED_TEXT="not measured yet"
    while :; do
        sleep 5 & sleeper=$!
        wait $sleeper
        if ((!scaled)) && [[ -f $SHARE/speed ]] && grep -q '^LAB_BOUND=' "$SHARE/speed"; then
            . "$SHARE/speed"
            bound=$LAB_BOUND stall=$(awk -v s="$STALL" -v f="$LAB_SLOWNESS" 'BEGIN { printf "%d", s * f }') scaled=1
        fi
        if ((SECONDS - started >= bound + 60)); then
            echo "run-in-guest: guest still running after $((bound + 60)) s, killing it ($LAB_SPEED_TEXT)" >&2
            break
        fi
        if ((stall)) && [[ -f $PROGRESS ]] && (($(date +%s) - $(stat -c %Y "$PROGRESS") >= stall)); then
            echo "run-in-guest: the guest printed nothing for $stall s, killing it ($LAB_SPEED_TEXT)" >&2
            break
        fi
    done
    dump_guest_tasks
    touch "$WORK/killed"
    stop_uml
) & watchdog=$!

wait "$uml"; uml_rc=$?
kill "$watchdog" 2>/dev/null; wait "$watchdog" 2>/dev/null
# Helpers of a UML that did not shut down cleanly would hold the FIFOs open.
kill -KILL -- -"$uml" 2>/dev/null
wait "$cat_out" "$cat_err"
elapsed=$(echo "$(date +%s.%N) - $start" | bc)

((VERBOSE)) && { echo "---- guest console ----"; cat "$LOG"; echo "----"; } >&2
rc=$(command_status run-in-guest "$SHARE" "$LOG" "$elapsed") && exit "$rc"
if [[ -f $WORK/killed ]]; then
    echo "run-in-guest: killed by the host-side watchdog; console tail:" >&2
    # From the task dump on, where the guest answered it.
    if grep -q "sysrq: Show Regs" "$LOG"; then sed -n '/sysrq: Show Regs/,$p' "$LOG" | tail -800 >&2
    else tail -30 "$LOG" >&2; fi
    exit 137
fi
echo "run-in-guest: the guest ended without an exit status (UML rc=$uml_rc); console tail:" >&2
tail -30 "$LOG" >&2
exit 125
