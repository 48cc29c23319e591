#!/bin/bash
# Builds rftp with sanitizers and runs tests under them: each set of
# sanitizers in a build directory of its own (build-sanitize-<set>), at
# -O1, as the sanitizers' authors advise. A report fails the run: every
# sanitizer is built not to recover (RFTP_SANITIZE in CMakeLists.txt).
# These builds mostly start from nothing (a fresh clone, CI), so they are
# unity builds (CMAKE_UNITY_BUILD): eight sources a compiler run, which
# halves their time.
#
# Usage: run.sh [--e2e] SET...   e.g. run.sh --e2e address,undefined thread
#   the unit tests, and with --e2e also the end-to-end tests that feed rftpd
#   and rftp hostile input and move blocks on parallel streams (E2E below),
#   against the sanitized test builds of rftpd and rftp.
# Env: BUILD_ROOT (where the build directories go, default the project),
#      JOBS (default nproc).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD_ROOT=${BUILD_ROOT:-$ROOT}
JOBS=${JOBS:-$(nproc)}
E2E_TESTS=(test_daemon_hostile.py test_daemon_ftplib.py test_daemon_operations.py test_client_hostile_server.py
           test_client_hostile_listings.py test_tcp_integrity.py test_tls_daemon.py test_tls_client.py
           test_client_sync.py test_data_keep.py test_files_in_a_row.py)
e2e=0
[[ ${1:-} = --e2e ]] && { e2e=1; shift; }
(($#)) || { echo "usage: run.sh [--e2e] SET... (address,undefined or thread)" >&2; exit 2; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$HERE/tsan.supp"

failed=()
for set in "$@"; do
    dir=$BUILD_ROOT/build-sanitize-${set//,/-}
    echo "== sanitizers: $set ($dir)"
    start=$SECONDS
    [[ -f $dir/build.ninja ]] ||
        cmake -S "$ROOT" -B "$dir" -G Ninja -DRFTP_SANITIZE="$set" -DCMAKE_BUILD_TYPE=None \
              -DCMAKE_CXX_FLAGS="-O1" -DCMAKE_UNITY_BUILD=ON >/dev/null
    targets=(unit_tests)
    # The e2e tests run the test builds; the install test installs the others.
    ((e2e)) && targets+=(rftpd_testing rftp_testing rftpd rftp)
    # libstdc++'s regex draws -Wmaybe-uninitialized notes at -O1: the log
    # keeps them, and the end of it is shown when the build fails.
    if ! ninja -C "$dir" -j "$JOBS" "${targets[@]}" >"$dir/ninja.log" 2>&1; then
        tail -60 "$dir/ninja.log"
        echo "== sanitizers: $set FAILED to build (all of it in $dir/ninja.log)"
        failed+=("$set")
        continue
    fi
    ok=1
    (cd "$dir" && ./tests/unit/unit_tests --gtest_brief=1) || ok=0
    if ((ok && e2e)); then
        (cd "$ROOT/tests/e2e" && RFTP_BUILD=$dir python3 -m pytest -q -p no:cacheprovider "${E2E_TESTS[@]}") || ok=0
    fi
    if ((ok)); then
        echo "== sanitizers: $set passed in $((SECONDS - start)) s"
    else
        echo "== sanitizers: $set FAILED"
        failed+=("$set")
    fi
done
((${#failed[@]} == 0)) || { echo "sanitizers: failed under ${failed[*]}"; exit 1; }
