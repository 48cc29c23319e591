#!/bin/bash
# Builds rftp with sanitizers (build.sh says where and how) and runs tests
# under them. A report fails the run.
#
# Usage: run.sh [--e2e] [--rdma|--rdma-all] [--build-only] SET...
#   e.g. run.sh --e2e --rdma-all address,undefined thread
#   the unit tests, and with --e2e also the end-to-end tests that feed rftpd
#   and rftp hostile input and move blocks on parallel streams (E2E below),
#   against the sanitized test builds of rftpd and rftp; with --rdma also
#   the lab tests that drive the RDMA engine's threads (RDMA_TESTS below,
#   and RDMA_MORE_TESTS with --rdma-all), in
#   the QEMU guest: the UML guest's address space has no room for the
#   sanitizers' shadow memory (tests/rdma/qemu/prepare-kernel.sh);
#   with --build-only, only the builds those need (tests/head_start.sh).
# Env: BUILD_ROOT (where the build directories go, default the project),
#      JOBS (default nproc).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/build.sh"
E2E_TESTS=(test_daemon_hostile.py test_daemon_ftplib.py test_daemon_operations.py test_client_hostile_server.py
           test_client_hostile_listings.py test_tcp_integrity.py test_tls_daemon.py test_tls_client.py
           test_client_sync.py test_data_keep.py test_files_in_a_row.py)
# Each moves real blocks through the sender, the completion dispatcher and
# its workers, the disk readers and writers, both notice paths' bookkeeping
# and the failure latch, on rxe and siw: four queue pairs over one channel,
# completion workers, damaged blocks sent again, and a peer that breaks the
# control protocol. An emulated CPU runs them slowly (about a minute and a
# half for these), so --rdma-all adds the rest: one queue pair, memory to
# memory, damaged uploads, and a flood of grants.
RDMA_TESTS=("test_rdma_transfers.py::test_odd_sizes_up_and_down_over_one_channel[rxe0-4]"
            "test_rdma_transfers.py::test_odd_sizes_up_and_down_over_one_channel[siw0-4]"
            test_rdma_transfers.py::test_odd_sizes_up_and_down_with_completion_workers
            test_rdma_integrity.py::test_damaged_download_blocks_are_caught_and_sent_again
            test_rdma_hostile.py::test_malformed_control_message_aborts_only_that_channel
            # The TLS relay with the kernel carrying records (kTLS), on
            # Debian's own kernel: the host's has no CONFIG_TLS.
            test_ktls.py)
RDMA_MORE_TESTS=("test_rdma_transfers.py::test_odd_sizes_up_and_down_over_one_channel[rxe0-1]"
                 "test_rdma_transfers.py::test_odd_sizes_up_and_down_over_one_channel[siw0-1]"
                 test_rdma_transfers.py::test_memory_to_memory
                 test_rdma_integrity.py::test_damaged_upload_blocks_are_caught_and_sent_again
                 test_rdma_hostile.py::test_a_flood_of_grants_ends_only_that_channel)
e2e=0 rdma=0 build_only=0
while [[ ${1:-} = --* ]]; do
    case $1 in
        --e2e) e2e=1 ;;
        --rdma) rdma=1 ;;
        --rdma-all) rdma=1; RDMA_TESTS+=("${RDMA_MORE_TESTS[@]}") ;;
        --build-only) build_only=1 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
(($#)) || { echo "usage: run.sh [--e2e] [--rdma|--rdma-all] [--build-only] SET... (address,undefined or thread)" >&2
            exit 2; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$HERE/tsan.supp"

# rdma_tests_under DIR SET: RDMA_TESTS in the QEMU guest against DIR's test
# builds, after a canary built with SET shows that the guest's reports reach
# DIR/rdma-reports; any report left there fails the run, whether or not a
# test saw its process fail.
rdma_tests_under() {
    local dir=$1 set=$2 reports=$1/rdma-reports rc
    rm -rf "$reports"
    mkdir -p "$reports"
    echo "== sanitizers: the RDMA engine in the QEMU guest (rxe0, siw0)"
    local share=()   # a build outside the project, which the guest shares anyway
    [[ $dir/ = "$ROOT"/* ]] || share=(--rw "$dir")
    RFTP_BUILD=$dir LAB_DEVICE_AGNOSTIC_TESTS=all "$ROOT/tests/rdma/qemu/run-in-qemu.sh" --times -t 900 "${share[@]}" -- \
        "$HERE/rdma-in-guest.sh" "$dir/sanitizer-canary" "$reports" "${RDMA_TESTS[@]}"
    rc=$?
    if compgen -G "$reports/*" >/dev/null; then
        for f in "$reports"/*; do echo "---- $f"; cat "$f"; done
        echo "== sanitizers: the RDMA tests left the reports above"
        return 1
    fi
    return "$rc"
}

# build_set SET: what the tests asked for need, the canary among them.
build_set() {
    local set=$1 dir targets=(unit_tests)
    dir=$(sanitized_dir "$set")
    # The e2e tests run the test builds; the install test installs the others.
    ((e2e)) && targets+=(rftpd_testing rftp_testing rftpd rftp)
    ((rdma)) && targets+=(rftpd_testing rftp_testing rdma_peer)
    # The fuzz step shares the address,undefined build: one build for both.
    [[ $set = address,undefined ]] && targets+=(fuzz_targets)
    sanitized_build "$set" "${targets[@]}" || return 1
    if ((rdma)); then
        # shellcheck disable=SC2046 # the flags are words
        "$(sanitized_cxx "$set")" -std=c++17 $(sanitized_flags "$set") -fsanitize="$set" -pthread \
            -o "$dir/sanitizer-canary" "$HERE/canary.cpp" || return 1
    fi
}

failed=()
for set in "$@"; do
    dir=$(sanitized_dir "$set")
    echo "== sanitizers: $set ($dir)"
    start=$SECONDS
    build_set "$set" || { echo "== sanitizers: $set FAILED to build (all of it in $dir/ninja.log)"
                          failed+=("$set"); continue; }
    ((build_only)) && continue
    ok=1
    (cd "$dir" && ./tests/unit/unit_tests --gtest_brief=1) || ok=0
    if ((ok && e2e)); then
        (cd "$ROOT/tests/e2e" && RFTP_BUILD=$dir python3 -m pytest -q -p no:cacheprovider "${E2E_TESTS[@]}") || ok=0
    fi
    if ((ok && rdma)); then
        rdma_tests_under "$dir" "$set" || ok=0
    fi
    if ((ok)); then
        echo "== sanitizers: $set passed in $((SECONDS - start)) s"
    else
        echo "== sanitizers: $set FAILED"
        failed+=("$set")
    fi
done
((${#failed[@]} == 0)) || { echo "sanitizers: failed under ${failed[*]}"; exit 1; }
