# The stable interfaces: make setup | build | test | demo | bench.
SHELL := /bin/bash
BUILD_DIR ?= build
PYTHON ?= /usr/bin/python3
JOBS ?= $(shell nproc)

DEBIAN_PACKAGES := build-essential cmake ninja-build ccache pkg-config \
  libboost-dev libboost-system-dev nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev libpq-dev \
  libarchive-dev libcurl4-openssl-dev libssl-dev libcrypt-dev libcli11-dev libspdlog-dev libre2-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  python3 python3-torch python3-numpy python3-yaml python3-pytest python3-pytest-xdist \
  python3-sklearn python3-boto3 \
  python3-psutil python3-optuna \
  python3-protobuf \
  python3-jsonschema \
  podman \
  runc \
  uidmap \
  postgresql-15 \
  slurmctld \
  slurmd \
  slurm-client \
  munge \
  openssh-server \
  python3-notebook \
  python3-ipykernel \
  python3-websocket \
  nodejs \
  chromium \
  clang

FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60

.PHONY: setup configure build test unit-test e2e-test e2e-test-pg harness-test demo bench clean fuzz fuzz-smoke sim \
  fuzz-configure fuzz-config fuzz-router \
  webui webui-deps webui-test \
  thread-safety

setup:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  SUDO=$$( [ $$(id -u) -eq 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "all packages present"; fi
	@# s3rver (the S3-compatible server the storage tests start on loopback), from its lock file.
	@if [ -f tools/s3rver/node_modules/.det-installed ] && \
	   [ ! tools/s3rver/package-lock.json -nt tools/s3rver/node_modules/.det-installed ]; then \
	  echo "s3rver present"; \
	else npm ci --prefix tools/s3rver --no-audit --no-fund && touch tools/s3rver/node_modules/.det-installed; fi
	@$(MAKE) --no-print-directory webui-deps

configure: setup
	@[ -f $(BUILD_DIR)/build.ninja ] || cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)
	@$(MAKE) --no-print-directory webui

# The web UI (webui/): npm ci from its lock file when node_modules is older than the lock (no
# browser download: the tests drive Debian's chromium), then tsc + vite into $(BUILD_DIR)/webui,
# where the master finds it from $(BUILD_DIR)/bin.
webui-deps:
	@if [ -f webui/node_modules/.det-installed ] && \
	   [ ! webui/package-lock.json -nt webui/node_modules/.det-installed ]; then \
	  echo "webui node_modules present"; \
	else PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix webui --no-audit --no-fund && \
	  touch webui/node_modules/.det-installed; fi

WEBUI_SOURCES := $(shell find webui/src -type f 2>/dev/null) webui/index.html webui/package-lock.json \
  webui/tsconfig.json webui/vite.config.mts

webui: webui-deps $(BUILD_DIR)/webui/index.html

$(BUILD_DIR)/webui/index.html: $(WEBUI_SOURCES)
	cd webui && ./node_modules/.bin/tsc -p . && \
	  ./node_modules/.bin/vite build --config vite.config.mts --logLevel warn \
	    --outDir $(abspath $(BUILD_DIR))/webui --emptyOutDir
	@touch $@

# Browser tests: a real local cluster, a real search, Debian's chromium driven by playwright-core.
# Screenshots go to $(BUILD_DIR)/webui-test-artifacts.
webui-test: build
	set -o pipefail; cd webui && DET_BUILD_DIR=$(abspath $(BUILD_DIR)) node --test \
	  --test-reporter=spec tests/ | \
	  awk '{print} / pass [0-9]+$$/{p=$$NF} / fail [0-9]+$$/{f=$$NF} END{print p+0 " passed, " f+0 " failed"}'

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# pytest-xdist workers. e2e: one per test file at a time (--dist loadfile), each worker with its
# own session cluster (tests/e2e/conftest.py); the trials mostly wait, so more workers than
# cores pays off (see tests/e2e/README.md for the measured wall times).
HARNESS_WORKERS ?= $(JOBS)
E2E_WORKERS ?= 3

harness-test: setup
	cd harness && PYTHONPATH=. $(PYTHON) -m pytest -q -n $(HARNESS_WORKERS) tests

e2e-test: build
	PYTHONPATH=harness DET_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest -q \
	  -n $(E2E_WORKERS) --dist loadfile tests/e2e

# The same suite with every cluster's master on PostgreSQL: one server per pytest worker, a fresh
# database per cluster (DET_E2E_DB, tests/e2e/cluster.py). Narrow it with E2E_ARGS, e.g.
# E2E_ARGS='tests/e2e/test_lifecycle.py -k pause'.
E2E_ARGS ?= tests/e2e
e2e-test-pg: build
	DET_E2E_DB=postgres PYTHONPATH=harness DET_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTHON) -m pytest \
	  -q -n $(E2E_WORKERS) --dist loadfile $(E2E_ARGS)

test: thread-safety unit-test harness-test e2e-test webui-test fuzz-smoke

# clang's lock analysis over the master's services and routes (GUARDED_BY / REQUIRES, see
# common/thread_annotations.h): syntax only, no object files, two files at a time.
THREAD_SAFETY_SRCS = $(wildcard master/server/*.cc master/api/*.cc)
THREAD_SAFETY_FLAGS = -std=c++20 -fsyntax-only -Wthread-safety -Werror -I. $(shell pkg-config --cflags libpq) \
  -DBOOST_ALL_NO_LIB -DFMT_SHARED -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -DSPDLOG_SHARED_LIB
thread-safety: setup
	@printf '%s\n' $(filter-out %_test.cc,$(THREAD_SAFETY_SRCS)) | \
	  xargs -P 2 -I{} clang++ $(THREAD_SAFETY_FLAGS) {}
	@echo "thread-safety: clean"

# libFuzzer (clang only): the config parser, seeded with tests/config_corpus, and the master's
# router over a Master on a temp SQLite store, seeded with one request per route of
# api/openapi.yaml (fuzz/make_router_corpus.py). Each runs FUZZ_SECONDS; new inputs go to
# $(FUZZ_BUILD_DIR)/corpus*, findings to $(FUZZ_BUILD_DIR)/artifacts. Every library is
# instrumented, so the first router build compiles the whole master with clang.
FUZZ_COMMON_FLAGS = -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD_DIR)/artifacts/
FUZZ_FLAGS = $(FUZZ_COMMON_FLAGS) -max_len=8192
# The router's regression inputs (fuzz/corpus-router, written by fuzz/write_regression_corpus.py:
# every request shape that once broke the master) run whole: a 60,000-level body is 120 KB.
ROUTER_REGRESSIONS = fuzz/corpus-router
ROUTER_FUZZ_FLAGS = $(FUZZ_COMMON_FLAGS) -max_len=262144
fuzz: fuzz-config fuzz-router

fuzz-configure:
	@[ -f $(FUZZ_BUILD_DIR)/build.ninja ] || CXX=clang++ cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDET_BUILD_FUZZ=ON \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DDET_BUILD_TESTS=OFF -DDET_BUILD_BENCH=OFF
	mkdir -p $(FUZZ_BUILD_DIR)/corpus $(FUZZ_BUILD_DIR)/corpus-router $(FUZZ_BUILD_DIR)/artifacts

fuzz-config: fuzz-configure
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target config_fuzz
	$(FUZZ_BUILD_DIR)/bin/config_fuzz $(FUZZ_FLAGS) \
	  $(FUZZ_BUILD_DIR)/corpus tests/config_corpus/valid tests/config_corpus/invalid

fuzz-router: fuzz-configure
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target router_fuzz
	$(PYTHON) fuzz/make_router_corpus.py api/openapi.yaml $(FUZZ_BUILD_DIR)/router-seeds
	$(FUZZ_BUILD_DIR)/bin/router_fuzz $(ROUTER_FUZZ_FLAGS) \
	  $(FUZZ_BUILD_DIR)/corpus-router $(FUZZ_BUILD_DIR)/router-seeds $(ROUTER_REGRESSIONS)

# The short runs `make test` does: the config parser under libFuzzer (only where clang is
# installed), then the router target in the ordinary build with a plain mutation driver
# (fuzz/mutate_main.cc: every route's seed, then random mutations; no coverage guidance).
# The seeded cluster simulation (docs/simulation.md) over SIM_SEEDS seeds per searcher; make test
# runs 2,000. A failing seed prints its trace and the command that replays it.
SIM_SEEDS ?= 20000
sim: build
	DET_SIM_SEEDS=$(SIM_SEEDS) $(BUILD_DIR)/tests/master_cluster_sim_test

fuzz-smoke: build
	@if command -v clang++ >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory fuzz-config FUZZ_SECONDS=20; \
	else echo "clang++ not found: skipping the config fuzz run"; fi
	$(PYTHON) fuzz/make_router_corpus.py api/openapi.yaml $(BUILD_DIR)/router-seeds
	$(BUILD_DIR)/bin/router_fuzz_smoke 20 $(BUILD_DIR)/router-seeds $(ROUTER_REGRESSIONS)

demo: build
	PYTHON=$(PYTHON) BUILD_DIR=$(abspath $(BUILD_DIR)) bash examples/demo.sh

bench: build
	PYTHON=$(PYTHON) BUILD_DIR=$(abspath $(BUILD_DIR)) bash bench/run.sh

clean:
	rm -rf $(BUILD_DIR)
