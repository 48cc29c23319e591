# The front door. `make demo` and `make test` work on a fresh Debian 12 machine:
# both install what is missing, build, then demo or test.
BUILD   ?= build
PREFIX  ?= /usr/local
JOBS    ?= $(shell nproc)
PYTEST  ?= python3 -m pytest

.PHONY: all deps build test unit e2e demo bench install clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_INSTALL_PREFIX=$(PREFIX)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD) -j $(JOBS)
	@ln -sf rftp $(BUILD)/rput && ln -sf rftp $(BUILD)/rget

test: build
	$(MAKE) --no-print-directory unit e2e

unit:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

e2e:
	RFTP_BUILD=$(abspath $(BUILD)) $(PYTEST) -q tests/e2e

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: build
	@bash bench/tcp-bench.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
