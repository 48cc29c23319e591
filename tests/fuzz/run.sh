#!/bin/bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cpp) with clang under
# AddressSanitizer and UndefinedBehaviorSanitizer, in build-fuzz, and runs
# each for a bounded time: first every input of its corpus
# (tests/fuzz/corpus/<target>/: seeds, and each crash once found, kept as
# a regression input), then new inputs. A crash, a hang (-timeout), a
# sanitizer report or memory beyond -rss_limit_mb fails the run; the input
# that did it is kept in build-fuzz/artifacts/.
#
# Usage: run.sh [SECONDS]   each target fuzzes for SECONDS (default 10)
# Env: BUILD_ROOT (where build-fuzz goes, default the project), JOBS.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD_ROOT=${BUILD_ROOT:-$ROOT}
JOBS=${JOBS:-$(nproc)}
SECONDS_EACH=${1:-10}
CLANG=${CLANG:-clang++-19}
dir=$BUILD_ROOT/build-fuzz

command -v "$CLANG" >/dev/null || { echo "fuzz: $CLANG missing: run make deps" >&2; exit 2; }
[[ -f $dir/build.ninja ]] ||
    cmake -S "$ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$CLANG" -DRFTP_FUZZ=ON \
          -DRFTP_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g" \
          -DCMAKE_UNITY_BUILD=ON >/dev/null  # a unity build, as tests/sanitizers/run.sh says why
start=$SECONDS
if ! ninja -C "$dir" -j "$JOBS" fuzz_targets >"$dir/ninja.log" 2>&1; then
    tail -60 "$dir/ninja.log"
    echo "fuzz: the targets FAILED to build (all of it in $dir/ninja.log)"
    exit 1
fi
echo "== fuzz: built in $((SECONDS - start)) s; $SECONDS_EACH s a target"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0 failed=()
mkdir -p "$dir/artifacts"
for target in "$dir"/tests/fuzz/*_fuzz; do
    name=$(basename "$target" _fuzz)
    seeds=$HERE/corpus/$name
    work=$dir/corpus/$name  # what this machine found; the seeds stay as they are
    mkdir -p "$work"
    log=$dir/$name.log
    if "$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
                 -artifact_prefix="$dir/artifacts/$name-" "$work" "$seeds" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "   $name: ${runs:-?} inputs, no finding"
        passed=$((passed + 1))
    else
        tail -40 "$log"
        echo "   $name: FAILED (the input is in $dir/artifacts/, the log in $log)"
        failed+=("$name")
    fi
done
echo "fuzz: $passed passed, ${#failed[@]} failed${failed:+ (${failed[*]})}"
((${#failed[@]} == 0))
