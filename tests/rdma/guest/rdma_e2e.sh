#!/bin/bash
# The pytest end-to-end RDMA tests, run INSIDE the lab guest by suite.sh:
# the real rftpd and rftp on both soft devices. Prints pytest's report, then
# "N passed, M failed" for the suite's tally.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOG=/tmp/rdma-e2e.log
cd "$HERE" || exit 1
# lab_timing: each test's time as it ends, the slowest at the end.
PYTHONPATH=$HERE${PYTHONPATH:+:$PYTHONPATH} \
    python3 -m pytest -q -p no:cacheprovider -p lab_timing -o addopts="" --basetemp=/tmp/rdma-e2e "$@" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[0]}
last=$(tail -1 "$LOG")
passed=$(grep -oE '[0-9]+ passed' <<<"$last" | grep -oE '[0-9]+' || true)
failed=0
for n in $(grep -oE '[0-9]+ (failed|errors?)' <<<"$last" | grep -oE '^[0-9]+'); do failed=$((failed + n)); done
passed=${passed:-0}
if [[ $rc != 0 && $failed = 0 ]]; then failed=1; fi   # collection error, crash, or no tests
echo "$passed passed, $failed failed"
[[ $rc = 0 ]]
