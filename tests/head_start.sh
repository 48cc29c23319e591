#!/bin/bash
# Runs a command (make test's steps) with the builds its later steps need
# started beside it at idle CPU priority: the sanitizer build (which the
# fuzz step shares), the QEMU guest's kernel and the lab's UML kernel, in
# the order the steps need them. On a fresh two-core machine these take
# over ten minutes of both cores. The unit and e2e tests leave part of the
# CPU idle while they wait on sockets and timers, and a SCHED_IDLE build
# runs only then.
#
# Each step still asks for its build itself, under the same lock: it reuses a
# finished one, waits for one under way (which then has the CPU to itself),
# or builds it. So the head start only saves time, and a failure in it is
# the step's to report.
# Usage: head_start.sh COMMAND [ARGS...]   the exit status is COMMAND's.
# Env: HEAD_START_LOG, where the builds' output goes (default /dev/null).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log=${HEAD_START_LOG:-/dev/null}
builds() {
    "$HERE/sanitizers/run.sh" --build-only --e2e --rdma address,undefined
    "$HERE/rdma/qemu/prepare-kernel.sh"
    "$HERE/rdma/lab/build-kernel.sh"
}
# A session of its own, so that one signal ends the builds and every
# compiler under them, whatever COMMAND did.
export -f builds
export HERE
setsid chrt --idle 0 nice -n 19 bash -c builds >"$log" 2>&1 </dev/null &
started=$!
# An unfinished build resumes where it stopped next time.
trap 'kill -TERM -- -"$started" 2>/dev/null' EXIT
"$@"
