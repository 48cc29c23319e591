#!/bin/bash
# Runs each libFuzzer target (tests/fuzz/*_fuzz.cpp) for a bounded time:
# first every input of its corpus (tests/fuzz/corpus/<target>/: seeds, and
# each crash once found, kept as a regression input), then new inputs. A
# crash, a hang (-timeout), a sanitizer report or memory beyond
# -rss_limit_mb fails the run; the input that did it is kept in
# DIR/fuzz/artifacts/. The targets are built with clang under
# AddressSanitizer and UBSan, in the one build the sanitizer step uses too
# (tests/sanitizers/build.sh: DIR is build-sanitize-address-undefined).
#
# Usage: run.sh [SECONDS]   each target fuzzes for SECONDS (default 10)
# Env: BUILD_ROOT (where the build goes, default the project), JOBS.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/../sanitizers/build.sh"
SECONDS_EACH=${1:-10}
command -v clang++-19 >/dev/null || { echo "fuzz: clang++-19 missing: run make deps" >&2; exit 2; }
build=$(sanitized_dir address,undefined)
dir=$build/fuzz
start=$SECONDS
if ! sanitized_build address,undefined fuzz_targets; then
    echo "fuzz: the targets FAILED to build (all of it in $build/ninja.log)"
    exit 1
fi
echo "== fuzz: built in $((SECONDS - start)) s; $SECONDS_EACH s a target"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$dir/artifacts"
# fuzz_one TARGET: runs it, and leaves its log and, on success, a .ok file.
fuzz_one() {
    local target=$1 name work log
    name=$(basename "$target" _fuzz)
    work=$dir/corpus/$name  # what this machine found; the seeds stay as they are
    log=$dir/$name.log
    mkdir -p "$work"
    rm -f "$dir/$name.ok"
    "$target" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
              -artifact_prefix="$dir/artifacts/$name-" "$work" "$HERE/corpus/$name" >"$log" 2>&1 &&
        touch "$dir/$name.ok"
    return 0
}
# Each target runs on one thread for a fixed time: one a core at a time
# halves the step.
targets=("$build"/tests/fuzz/*_fuzz)
for target in "${targets[@]}"; do
    while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
    fuzz_one "$target" &
done
wait || true
passed=0 failed=()
for target in "${targets[@]}"; do
    name=$(basename "$target" _fuzz)
    log=$dir/$name.log
    if [[ -f $dir/$name.ok ]]; then
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
