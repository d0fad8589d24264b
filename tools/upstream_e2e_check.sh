#!/usr/bin/env bash
# Developer check (not part of `make test`: it needs a copy of Determined's source, and fetches
# nothing itself): runs Determined 0.38's own end-to-end tests marked e2e_cpu, with upstream's
# harness, `det` and test helpers on the client side, against a local cluster of ours shaped as
# upstream's CI runs them (one agent with one slot; the master config of its
# .circleci/devcluster/double.devcluster.yaml less the database, the socat proxy and the build
# root, which do not apply locally). Prints one line per file and then
#   N passed, M failed, K skipped of T
#
#   tools/upstream_e2e_check.sh [-d UPSTREAM_DIR] [-b BUILD_DIR] [-t SECONDS_PER_TEST] [FILE...]
#
# UPSTREAM_DIR (default /tmp/det-upstream) holds Determined's harness/ and e2e_tests/ (e.g.
# `git archive <tag> harness e2e_tests examples/tutorials | tar -x -C /tmp/det-upstream`). FILE
# names test files under e2e_tests/ (default: every file with an e2e_cpu test). Each test gets
# SECONDS_PER_TEST (default 300; python3-pytest-timeout), each file 30 minutes. A file's JUnit
# report and output stay in the printed work directory.
set -u -o pipefail

UPSTREAM=/tmp/det-upstream
BUILD=build
PER_TEST=300
while getopts "d:b:t:" opt; do
  case $opt in
    d) UPSTREAM=$OPTARG ;;
    b) BUILD=$OPTARG ;;
    t) PER_TEST=$OPTARG ;;
    *) sed -n '2,16p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
PY=/usr/bin/python3
BUILD=$(cd "$BUILD" && pwd)
DET="$BUILD/bin/det"
[ -d "$UPSTREAM/harness/determined" ] && [ -d "$UPSTREAM/e2e_tests/tests" ] || {
  echo "no Determined harness/ and e2e_tests/ under $UPSTREAM" >&2; exit 2; }
[ -x "$DET" ] || { echo "no $DET: run make build first" >&2; exit 2; }
$PY -c "import pytest_timeout, ruamel.yaml, termcolor, tabulate, pathspec, filelock, requests, dateutil, kubernetes, docker" 2>/dev/null || {
  echo "needs Debian packages: apt-get install python3-pytest-timeout python3-ruamel.yaml python3-termcolor python3-tabulate python3-pathspec python3-filelock python3-requests python3-dateutil python3-kubernetes python3-docker" >&2; exit 2; }

WORK=$(mktemp -d /tmp/upstream-e2e.XXXXXX)
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() { "$DET" deploy local cluster-down --data-dir "$WORK/cluster" >/dev/null 2>&1; }
trap cleanup EXIT

mkdir -p "$WORK/bin" "$WORK/home" "$WORK/checkpoints"
cat >"$WORK/master.yaml" <<YAML
checkpoint_storage:
  type: shared_fs
  host_path: $WORK/checkpoints
  storage_path: determined-cp
checkpoint_storage_allowed_roots: [/tmp]
log:
  level: debug
cache:
  cache_dir: $WORK/cache
launch_error: false
telemetry:
  enabled: false
resource_manager:
  type: agent
  default_aux_resource_pool: default
  default_compute_resource_pool: default
resource_pools:
  - pool_name: default
    task_container_defaults:
      environment_variables:
        - SOMEVAR=SOMEVAL
      startup_hook: "echo 'hello from rp tcd startup hook'"
task_container_defaults:
  startup_hook: "echo 'hello from master tcd startup hook'"
scim:
  enabled: true
  auth:
    type: basic
    username: determined
    password: password
YAML

"$DET" deploy local cluster-up --master-port "$PORT" --agents 1 --slots-per-agent 1 \
  --data-dir "$WORK/cluster" --master-config-path "$WORK/master.yaml" >"$WORK/cluster-up.log" 2>&1 || {
  cat "$WORK/cluster-up.log" "$WORK/cluster/master.log" >&2 2>/dev/null; exit 2; }

# Upstream's tests run `det` as a subprocess: upstream's CLI, from its harness.
cat >"$WORK/bin/det" <<SH
#!/bin/sh
PYTHONPATH="$UPSTREAM/harness" exec $PY -m determined.cli "\$@"
SH
chmod +x "$WORK/bin/det"
export PATH="$WORK/bin:$PATH" HOME="$WORK/home" DET_MASTER="http://127.0.0.1:$PORT"
export PYTHONPATH="$UPSTREAM/harness:$UPSTREAM/e2e_tests"
unset DET_USER DET_PASS DET_USER_TOKEN
# Upstream's harness run from source (not installed) calls itself 2!0.0.0+unknown; its CI runs
# an installed one of the master's version. The tests compare agents' and the master's versions
# with these.
VERSION=$($PY -c "import json, urllib.request; print(json.load(urllib.request.urlopen('$DET_MASTER/info'))['version'])")
export DET_AGENT_VERSION="$VERSION"

cd "$UPSTREAM/e2e_tests" || exit 2
if [ $# -eq 0 ]; then
  mapfile -t FILES < <(grep -rl --include='test_*.py' 'pytest.mark.e2e_cpu$\|pytest.mark.e2e_cpu)' tests | sort)
else
  FILES=("$@")
fi

total_pass=0 total_fail=0 total_skip=0
for f in "${FILES[@]}"; do
  name=$(echo "$f" | tr '/' '_')
  # --no-compare-stats: upstream's session check of its allocation-usage reports (not served here).
  timeout 1800 $PY -m pytest -q -p no:cacheprovider -m e2e_cpu --timeout "$PER_TEST" --no-compare-stats \
    --master-port "$PORT" --master-host 127.0.0.1 --det-version "$VERSION" --junitxml "$WORK/$name.xml" "$f" \
    >"$WORK/$name.out" 2>&1
  read -r p fl s < <($PY - "$WORK/$name.xml" <<'PYX'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    print(0, 1, 0); sys.exit()
suites = [root] if root.tag == "testsuite" else list(root)
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
k = sum(int(s.get("skipped", 0)) for s in suites)
print(t - f - k, f, k)
PYX
)
  total_pass=$((total_pass + p)) total_fail=$((total_fail + fl)) total_skip=$((total_skip + s))
  printf '%-60s %3d passed %3d failed %3d skipped\n' "$f" "$p" "$fl" "$s"
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped of $((total_pass + total_fail + total_skip))"
echo "reports and output: $WORK"
