#!/bin/bash
# The whole RDMA suite, run INSIDE one lab guest: booting is cheap (~1 s) but
# every process start in the guest is slow, so tests/rdma/run.sh boots once
# and this script runs each guest test in turn.
# Usage: suite.sh BIN_DIR   (where run.sh built the guest-side helpers)
# Each test prints "N passed, M failed" last; the suite adds them up and
# prints the total as "suite: N passed, M failed" (a test that dies without
# its line counts as failed).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${1:?usage: suite.sh BIN_DIR}

TESTS=(
    "$HERE/smoke.sh $BIN/write_imm_probe"
    "$HERE/rdma_e2e.sh"
)

passed=0 failed=0
# $LAB_RESULTS (tests/rdma/run.sh) gets what runs now and each part's time,
# beside the pytest tests' own (lab_timing.py), for the host to report.
export LAB_RESULTS=${LAB_RESULTS:-/tmp/suite-results}
RESULTS=$LAB_RESULTS
mkdir -p "$RESULTS"
for t in "${TESTS[@]}"; do
    part=${t%% *} part=${part##*/}
    echo "### $part"
    printf '%s\t%s\n' "$part" "$EPOCHSECONDS" > "$RESULTS/current"
    outcome=failed
    start=$EPOCHREALTIME
    $t 2>&1 | tee /tmp/suite-test.log
    last=$(tail -1 /tmp/suite-test.log)
    took=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    echo "### $part took $took s"
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
        ((BASH_REMATCH[2] == 0)) && outcome=passed
    else
        echo "### $part ended without a result line"
        failed=$((failed + 1))
    fi
    # smoke.sh is one entry; the pytest part's tests have theirs already.
    [[ $part = smoke.sh ]] && printf '%s\t%s\t%s\n' "$took" "$outcome" "$part" >> "$RESULTS/times.tsv"
done
: > "$RESULTS/current"
echo "suite: $passed passed, $failed failed"
((failed == 0))
