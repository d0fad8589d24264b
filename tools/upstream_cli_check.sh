#!/usr/bin/env bash
# Developer check (not part of `make test`: it needs a clone of Determined's source): starts a
# local cluster, runs a fixed list of commands of Determined 0.38's own CLI against it, and
# reports every command that printed a Python traceback or exited non-zero.
#
#   tools/upstream_cli_check.sh [UPSTREAM_DIR (default /tmp/det-upstream)] [BUILD_DIR (default build)]
#
# Exit status: 0 when no command printed a traceback (a non-zero exit without a traceback, such
# as a refused request, is listed but does not fail the check), 1 otherwise.
set -u -o pipefail

UPSTREAM=${1:-/tmp/det-upstream}
BUILD=${2:-build}
PY=/usr/bin/python3
DET="$BUILD/bin/det"
[ -d "$UPSTREAM/harness/determined/cli" ] || { echo "no Determined source at $UPSTREAM" >&2; exit 2; }
[ -x "$DET" ] || { echo "no $DET: run make build first" >&2; exit 2; }

WORK=$(mktemp -d /tmp/upstream-cli-check.XXXXXX)
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
cleanup() {
  "$DET" deploy local cluster-down --data-dir "$WORK/cluster" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

"$DET" deploy local cluster-up --master-port "$PORT" --agents 1 --slots-per-agent 2 \
  --data-dir "$WORK/cluster" >"$WORK/cluster-up.log" 2>&1 || {
  cat "$WORK/cluster-up.log" >&2; exit 2; }

export DET_MASTER="$URL"
export HOME="$WORK/home"   # the upstream CLI's token cache
mkdir -p "$HOME"

# One small experiment (our det), finished, with a checkpoint, to describe and list.
cat >"$WORK/exp.yaml" <<'YAML'
name: upstream-cli-check
entrypoint: >-
  python3 -c "import determined as det;
  ctx = det.core.init().__enter__();
  [ (ctx.train.report_training_metrics(steps_completed=op.length, metrics={'loss': 1.0}),
     ctx.train.report_validation_metrics(steps_completed=op.length, metrics={'loss': 0.5}),
     op.report_completed(0.5)) for op in ctx.searcher.operations() ];
  print('done')"
searcher: {name: single, metric: loss, max_length: 1}
max_restarts: 0
YAML
EXP=$("$DET" experiment create "$WORK/exp.yaml" | sed -n 's/^Created experiment \([0-9]*\)$/\1/p')
[ -n "$EXP" ] || { echo "could not create the experiment" >&2; exit 2; }
"$DET" experiment wait "$EXP" --polling-interval 1 >/dev/null 2>&1
TRIAL=$(curl -s -H "Authorization: Bearer $(curl -s -X POST "$URL/api/v1/auth/login" \
  -d '{"username":"determined","password":""}' | $PY -c 'import json,sys; print(json.load(sys.stdin)["token"])')" \
  "$URL/api/v1/experiments/$EXP/trials" | $PY -c 'import json,sys; print(json.load(sys.stdin)["trials"][0]["id"])')

cat >"$WORK/tpl.yaml" <<'YAML'
description: from a template
resources: {slots_per_trial: 1}
YAML

FAILED=0
TOTAL=0
REFUSED=()
# run [ -u USER ] ARGS...: one upstream CLI command.
run() {
  local user=determined
  if [ "$1" = "-u" ]; then user=$2; shift 2; fi
  TOTAL=$((TOTAL + 1))
  local out
  out=$(cd "$WORK" && DET_USER=$user DET_PASS= PYTHONPATH="$UPSTREAM/harness" \
        timeout 120 $PY -m determined.cli -m "$URL" "$@" </dev/null 2>&1)
  local rc=$?
  if grep -q "Traceback (most recent call last)" <<<"$out"; then
    FAILED=$((FAILED + 1))
    echo "TRACEBACK det $*"
    sed 's/^/    /' <<<"$out" | tail -15
  elif [ $rc -ne 0 ]; then
    REFUSED+=("det $* (exit $rc): $(tail -1 <<<"$out")")
    echo "exit $rc  det $*"
  else
    echo "ok       det $*"
  fi
}

run master info
run master config
run user list
run user whoami
run agent list
run slot list
run task list
run job list
run job list --yaml
run experiment list
run experiment describe "$EXP"
run experiment describe "$EXP" --outdir .
run experiment list --show_project --all
run experiment config "$EXP"
run experiment list-trials "$EXP"
run experiment list-checkpoints "$EXP"
run experiment logs "$EXP" --tail 3
run experiment download-model-def "$EXP"
run experiment wait "$EXP"
run trial describe "$TRIAL"
run trial describe "$TRIAL" --metrics-summary --metrics
run trial logs "$TRIAL" --tail 3
run trial logs "$TRIAL" --level INFO --stdtype stdout --rank-id 0
run trial logs "$TRIAL" --timestamp-after 2000-01-01T00:00:00Z --source task --json
run template create check-tpl "$WORK/tpl.yaml"
run template list
run template list --details
run template describe check-tpl
run template set check-tpl "$WORK/tpl.yaml"
run template set-value config check-tpl "$WORK/tpl.yaml"
run experiment create "$WORK/exp.yaml" --template check-tpl --paused
run template remove check-tpl
run workspace list
run workspace create check-ws
run workspace describe check-ws
run workspace edit check-ws --name check-ws2
run project create check-ws2 check-proj --description "a project"
run project list check-ws2
run workspace list-projects check-ws2
run experiment move "$EXP" check-ws2 check-proj
run project describe check-ws2 check-proj
run project list-experiments check-ws2 check-proj
run project edit check-ws2 check-proj --description changed
run experiment move "$EXP" Uncategorized Uncategorized
run project archive check-ws2 check-proj
run project unarchive check-ws2 check-proj
run workspace archive check-ws2
run workspace unarchive check-ws2
run project delete check-ws2 check-proj --yes
run workspace delete check-ws2 --yes
run -u admin user create check-user --password Check-Pass1
run -u admin user deactivate check-user
run -u admin user activate check-user
run -u admin user edit check-user --display-name "Check User"
run -u admin user rename check-user check-user2
run model list
# compat11: options this master refuses (a clear 400, no traceback) and logout of every user.
run workspace create check-ws3 --default-compute-pool gpu
run user logout --all
run user whoami

echo
echo "$TOTAL commands, $FAILED with a traceback, ${#REFUSED[@]} refused:"
for r in "${REFUSED[@]}"; do echo "  $r"; done
[ "$FAILED" -eq 0 ]
