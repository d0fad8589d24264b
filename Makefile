# The stable interfaces: make setup | build | test | demo | bench.
SHELL := /bin/bash
BUILD_DIR ?= build
PYTHON ?= /usr/bin/python3
JOBS ?= $(shell nproc)

DEBIAN_PACKAGES := build-essential cmake ninja-build ccache pkg-config \
  libboost-dev libboost-system-dev nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev libpq-dev \
  libarchive-dev libcurl4-openssl-dev libssl-dev libcrypt-dev libcli11-dev libspdlog-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  python3 python3-torch python3-numpy python3-yaml python3-pytest python3-sklearn

.PHONY: setup configure build test unit-test e2e-test harness-test demo bench clean

setup:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "all packages present"; fi

configure:
	@[ -f $(BUILD_DIR)/build.ninja ] || cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

harness-test:
	cd harness && PYTHONPATH=. $(PYTHON) -m pytest -q tests

e2e-test: build
	PYTHONPATH=harness DET_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q tests/e2e

test: unit-test harness-test e2e-test

demo: build
	PYTHON=$(PYTHON) BUILD_DIR=$(abspath $(BUILD_DIR)) bash examples/demo.sh

bench: build
	PYTHON=$(PYTHON) BUILD_DIR=$(abspath $(BUILD_DIR)) bash bench/run.sh

clean:
	rm -rf $(BUILD_DIR)
