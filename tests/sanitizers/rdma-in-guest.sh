#!/bin/bash
# Runs INSIDE the QEMU guest (run.sh --rdma): first the canary, whose report
# must appear, then the chosen lab tests against the sanitized test builds
# ($RFTP_BUILD). Every sanitized process writes its report to a file of its
# own in REPORTS (a daemon's stderr is only its log); run.sh fails the run on
# any file left there. Prints rdma_e2e.sh's tally last.
# Usage: rdma-in-guest.sh CANARY REPORTS TEST...
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
canary=$1 reports=$2
shift 2

log_to() {   # log_to PREFIX: each sanitizer's reports go to PREFIX.<pid>
    export ASAN_OPTIONS=$ASAN_OPTIONS:log_path=$1 UBSAN_OPTIONS=$UBSAN_OPTIONS:log_path=$1
    export TSAN_OPTIONS=$TSAN_OPTIONS:log_path=$1
}

(log_to "$reports/canary"; "$canary" >/dev/null 2>&1)
if ! compgen -G "$reports/canary.*" >/dev/null; then
    echo "the sanitizer did not report the canary's defect in this guest: reports from the tests would be lost"
    echo "0 passed, 1 failed"
    exit 1
fi
rm -f "$reports"/canary.*
log_to "$reports/report"
exec "$HERE/../rdma/guest/rdma_e2e.sh" "$@"
