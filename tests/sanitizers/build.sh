# Sourced by tests/sanitizers/run.sh and tests/fuzz/run.sh: where each set
# of sanitizers is built, and how.
#
# AddressSanitizer with UBSan is built once, with clang and libFuzzer's
# coverage (RFTP_FUZZ), in build-sanitize-address-undefined: the fuzz
# targets, the unit tests and the test builds of rftpd and rftp come from
# the same objects. The coverage calls cost the tests little, where a second
# whole build costs a fresh two-core machine minutes. ThreadSanitizer has a
# gcc build of its own. All are unity builds (eight sources a compiler run),
# which halves their time, at -O1, as the sanitizers' authors advise, with
# line tables only for debug information: a report still names file and
# line, and full debug information costs a third more time. Every
# sanitizer is built not to recover: a report fails the run.
#
#   sanitized_dir SET              the build directory of SET
#   sanitized_cxx SET              the compiler SET is built with
#   sanitized_flags SET            and its flags
#   sanitized_build SET TARGET...  configures SET's directory once and builds
#                                  TARGETs under its lock (another run
#                                  building it is waited for); the output
#                                  goes to DIR/ninja.log, its end to stdout
#                                  on failure
# Env: BUILD_ROOT (default the project), JOBS (default nproc).
SANITIZED_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_ROOT=${BUILD_ROOT:-$SANITIZED_ROOT}
JOBS=${JOBS:-$(nproc)}

sanitized_dir() { echo "$BUILD_ROOT/build-sanitize-${1//,/-}"; }
sanitized_cxx() { if [[ $1 = address,undefined ]]; then echo clang++-19; else echo g++; fi; }
sanitized_flags() { if [[ $1 = address,undefined ]]; then echo "-O1 -gline-tables-only"; else echo "-O1 -g1"; fi; }

sanitized_build() {
    local set=$1 dir lock rc=0
    shift
    dir=$(sanitized_dir "$set")
    mkdir -p "$dir"
    exec {lock}>"$dir/.build-lock"
    flock -n "$lock" || { echo "   waiting for the build of $dir under way"; flock "$lock"; }
    if [[ ! -f $dir/build.ninja ]]; then
        local fuzz=OFF
        [[ $set = address,undefined ]] && fuzz=ON
        cmake -S "$SANITIZED_ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$(sanitized_cxx "$set")" \
              -DRFTP_FUZZ=$fuzz -DRFTP_SANITIZE="$set" \
              -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$(sanitized_flags "$set")" -DCMAKE_UNITY_BUILD=ON \
              >/dev/null || rc=1
    fi
    # libstdc++'s regex draws -Wmaybe-uninitialized notes at -O1: the log
    # keeps them, and its end is shown when the build fails.
    if ((rc == 0)) && ! ninja -C "$dir" -j "$JOBS" "$@" >"$dir/ninja.log" 2>&1; then
        tail -60 "$dir/ninja.log"
        rc=1
    fi
    exec {lock}>&-
    return "$rc"
}
