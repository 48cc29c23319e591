# Sourced by guest-init.sh (and usable in any guest shell): how fast this
# guest runs what the tests are made of, measured by a fixed loop at boot.
#
# measure_guest_speed prints shell assignments:
#   LAB_PROCESS_START_MS  one fork+exec+exit of /bin/true, in ms
#   LAB_SYSCALL_US        one read or write system call, in µs
#   LAB_SLOWNESS          how many times slower than the reference guest,
#                         at least 1, the worse of the two, one decimal
#   LAB_SPEED_TEXT        the three as one line, for messages
#
# The reference is a lab guest on an idle host of the project's kind on
# which the whole suite fits its bounds with room to spare (docs/testing.md).
# Bounds are written for that guest and multiplied by LAB_SLOWNESS.

LAB_REFERENCE_PROCESS_START_MS=${LAB_REFERENCE_PROCESS_START_MS:-15}
LAB_REFERENCE_SYSCALL_US=${LAB_REFERENCE_SYSCALL_US:-20}

measure_guest_speed() {
    local starts=40 syscalls=20000 t0 t1 t2
    t0=$EPOCHREALTIME
    for ((i = 0; i < starts; i++)); do /bin/true; done
    t1=$EPOCHREALTIME
    # bs=1: one read and one write per byte, so 2 x $syscalls calls.
    dd if=/dev/zero of=/dev/null bs=1 count=$syscalls status=none
    t2=$EPOCHREALTIME
    awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v n="$starts" -v c="$syscalls" \
        -v rp="$LAB_REFERENCE_PROCESS_START_MS" -v rs="$LAB_REFERENCE_SYSCALL_US" 'BEGIN {
        start_ms = (t1 - t0) * 1000 / n
        # the dd process start is counted out of its calls
        call_us = ((t2 - t1) * 1000 - start_ms) * 1000 / (2 * c)
        slow = start_ms / rp; if (call_us / rs > slow) slow = call_us / rs
        if (slow < 1) slow = 1
        slow = int(slow * 10 + 0.999) / 10
        printf "LAB_PROCESS_START_MS=%.1f\nLAB_SYSCALL_US=%.1f\nLAB_SLOWNESS=%.1f\n", start_ms, call_us, slow
        printf "LAB_SPEED_TEXT=\"process start %.1f ms, system call %.1f us: slowness %.1f\"\n", start_ms, call_us, slow
    }'
}
