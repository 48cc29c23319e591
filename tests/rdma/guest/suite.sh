#!/bin/bash
# The whole RDMA suite, run INSIDE one lab guest: booting is cheap (~1 s) but
# every process start in the guest is slow, so tests/rdma/run.sh boots once
# and this script runs each guest test in turn.
# Usage: suite.sh BIN_DIR   (where run.sh built the guest-side helpers)
# Each test prints "N passed, M failed" last; the suite adds them up and
# prints the total the same way (a test that dies without it counts as failed).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: suite.sh BIN_DIR}

TESTS=(
    "$HERE/smoke.sh $BIN/write_imm_probe"
    "$HERE/rdma_e2e.sh"
)

passed=0 failed=0
for t in "${TESTS[@]}"; do
    echo "### ${t%% *}"
    start=$SECONDS
    $t 2>&1 | tee /tmp/suite-test.log
    last=$(tail -1 /tmp/suite-test.log)
    echo "### ${t%% *} took $((SECONDS - start)) s"
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
    else
        echo "### ${t%% *} ended without a result line"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
((failed == 0))
