# The front door. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install what is missing, build, then demo or test.
BUILD   ?= build
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc)
PYTEST  ?= python3 -m pytest

.PHONY: all deps deps-runtime build test unit e2e rdma check-sanitizers check-sanitizers-short fuzz fuzz-short demo bench bench-tls bench-sync bench-rdma bench-wan bench-wan-tcp bench-rdma-ab bench-disk bench-two-devices install clean

all: build

deps:
	@bash scripts/install-deps.sh

# What building and running rftp needs, without the test and benchmark tools.
deps-runtime:
	@bash scripts/install-deps.sh runtime

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: deps $(BUILD)/build.ninja
	@# Configured before GoogleTest was there (make install): configure again, to build the unit tests.
	@test -d $(BUILD)/tests/unit || cmake $(BUILD) >/dev/null
	ninja -C $(BUILD) -j $(JOBS)
	@ln -sf rftp $(BUILD)/rput && ln -sf rftp $(BUILD)/rget

# The sanitizer build (the fuzz step's too) and the two lab kernels start
# beside the unit and e2e tests, on the CPU those leave idle
# (tests/head_start.sh); the steps then come in the order the builds finish.
test: build
	@HEAD_START_LOG=$(abspath $(BUILD))/head-start.log bash tests/head_start.sh \
	    $(MAKE) --no-print-directory unit e2e check-sanitizers-short fuzz-short rdma

unit:
	@test -x $(BUILD)/tests/unit/unit_tests || { echo "make unit: no unit tests in $(BUILD) (GoogleTest missing?): run make build" >&2; exit 1; }
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

e2e:
	RFTP_BUILD=$(abspath $(BUILD)) $(PYTEST) -q tests/e2e

# Real kernel RDMA (soft-RoCE and soft-iWARP) in a User-Mode Linux guest;
# the first run on a machine builds the guest kernel (docs/testing.md).
rdma:
	RFTP_BUILD=$(abspath $(BUILD)) bash tests/rdma/run.sh

# Sanitizer builds (docs/testing.md): the unit tests, the e2e tests that
# feed rftpd and rftp hostile input or move blocks on parallel streams, and
# lab tests that drive the RDMA engine's threads (in a QEMU guest), under
# AddressSanitizer with UBSan and under ThreadSanitizer. make test runs the
# first of the two.
check-sanitizers: deps
	@bash tests/sanitizers/run.sh --e2e --rdma-all address,undefined thread

check-sanitizers-short: deps
	@bash tests/sanitizers/run.sh --e2e --rdma address,undefined

# libFuzzer targets for every parser of untrusted input (tests/fuzz), built
# with clang under AddressSanitizer and UBSan in the sanitizer step's build
# (tests/sanitizers/build.sh). make test runs each for FUZZ_SHORT seconds;
# make fuzz for FUZZ_SECONDS.
FUZZ_SHORT   ?= 10
FUZZ_SECONDS ?= 300
fuzz: deps
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS)

fuzz-short: deps
	@bash tests/fuzz/run.sh $(FUZZ_SHORT)

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: build
	@bash bench/tcp-bench.sh $(BUILD)
	@python3 bench/tls_bench.py $(BUILD) $(BENCH_ARGS)
	@python3 bench/sync_bench.py $(BUILD) $(BENCH_ARGS)
	@bash scripts/install-deps.sh peers
	@python3 bench/wan_tcp_bench.py $(BUILD)

# An unchanged dataset of 100,000 files, and 1% changed, against rsync and rclone (docs/benchmarks.md).
bench-sync: build
	@python3 bench/sync_bench.py $(BUILD) $(BENCH_ARGS)

# FTPS alone: rftp and vsftpd+curl over TLS against one core's AES-GCM (docs/benchmarks.md).
bench-tls: build
	@python3 bench/tls_bench.py $(BUILD) $(BENCH_ARGS)

# RDMA in the lab guest: ib_write_bw against rftp, per device (docs/benchmarks.md).
bench-rdma: build
	@bash bench/lab-bench.sh rdma_bench.py $(BUILD) $(BENCH_ARGS)

# rftp over TCP, siw and rxe at round trips of 0, 10 and 50 ms, and GridFTP,
# XRootD and vsftpd+curl over TCP beside it: netem in the lab guest, whose
# kernel has it (docs/benchmarks.md).
bench-wan: build
	@bash scripts/install-deps.sh peers
	@bash bench/lab-bench.sh wan_bench.py $(BUILD) $(BENCH_ARGS)

# rftp over TCP on the host at round trips of 0, 10 and 50 ms, beside
# GridFTP, XRootD and vsftpd+curl: a userspace delay line between two
# network namespaces (docs/benchmarks.md).
bench-wan-tcp: build
	@bash scripts/install-deps.sh peers
	@python3 bench/wan_tcp_bench.py $(BUILD) $(BENCH_ARGS)

# The same rftp rows for BASE (a git revision, built in $(BUILD)-base) and
# this build, in one boot of the lab guest (docs/benchmarks.md).
BASE ?= HEAD
bench-rdma-ab: build
	@bash bench/rdma-ab-bench.sh $(BUILD) $(BASE) $(BENCH_ARGS)

# Disk to disk against fio on the same disk: TCP on the host, RDMA in the lab guest (docs/benchmarks.md).
bench-disk: build
	@bash bench/disk-bench.sh $(BUILD) $(BENCH_ARGS)

bench-two-devices: build
	@bash bench/two-devices-bench.sh $(BUILD) $(OTHER_DIR) $(BENCH_ARGS)

# Only what rftp needs on a server: no test tools, no vsftpd. --prefix: a
# build directory configured before (make demo) keeps the prefix it was
# configured with, whatever PREFIX says now.
install: deps-runtime $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS) rftpd rftp
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-sanitize-*
