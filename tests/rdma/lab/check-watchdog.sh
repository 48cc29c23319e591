#!/bin/bash
# Checks the host-side watchdog of run-in-guest.sh on a guest that goes
# silent: it must be killed (status 137) after the guest kernel was asked
# what it runs (sysrq p) and what is blocked (sysrq w), and that answer must
# be printed; where the host has perf, so must its profile of the UML
# process and of that process's own page faults. This path only runs for
# real when a guest kernel hangs, so it is checked here, before the suite,
# rather than discovered broken then.
# Usage: check-watchdog.sh KERNEL. Prints PASS or FAIL and why; exit 0 or 1.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KERNEL=${1:?usage: check-watchdog.sh KERNEL}

out=$("$HERE/run-in-guest.sh" -k "$KERNEL" -t 120 --stall 5 -- bash -c 'echo started; sleep 600' 2>&1)
rc=$?
fail() { echo "FAIL watchdog: $*"; echo "$out" | tail -40; exit 1; }
((rc == 137)) || fail "a silent guest ended with status $rc, not 137"
grep -Eq "printed nothing for [0-9]+ s" <<<"$out" || fail "no stall message"
grep -q "^Pid: [0-9]*, comm:" <<<"$out" || fail "the running task (sysrq p) was not printed"
grep -q "sysrq: Show Blocked State" <<<"$out" || fail "the blocked tasks (sysrq w) were not printed"
if command -v perf >/dev/null; then
    grep -q "process spent 3 s (host perf)" <<<"$out" || fail "no host perf profile of the guest kernel"
    grep -q "own page faults in 1 s (host perf)" <<<"$out" || fail "no host perf record of the guest kernel's faults"
fi
echo "PASS watchdog: a silent guest was killed after its kernel state was printed"
