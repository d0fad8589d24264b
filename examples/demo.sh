#!/usr/bin/env bash
# make demo: start a local cluster on a fresh data dir, run the digits random search with -f,
# print the best trial and its validation metric, and stop the cluster.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
BUILD_DIR="${BUILD_DIR:-$repo/build}"
PYTHON="${PYTHON:-/usr/bin/python3}"
det="$BUILD_DIR/bin/det"

work="$(mktemp -d -t det-demo-XXXXXX)"
port="$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export DET_MASTER="http://127.0.0.1:$port"
export XDG_CONFIG_HOME="$work/config"
cleanup() {
  "$det" deploy local cluster-down --data-dir "$work/data" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$det" deploy local cluster-up --master-port "$port" --agents 1 --slots-per-agent 2 \
  --data-dir "$work/data"
"$det" experiment create "$here/digits/random.yaml" "$here/digits" -f | tee "$work/create.log"
exp_id="$(sed -n 's/.*Created experiment \([0-9]*\).*/\1/p' "$work/create.log" | head -1)"

# Wait for the whole search (-f follows only the first trial), then report the best trial.
"$PYTHON" - "$exp_id" <<'PY'
import json, os, sys, time, urllib.request
url, exp_id = os.environ["DET_MASTER"], sys.argv[1]
def call(method, path, body=None, token=None):
    req = urllib.request.Request(url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode())
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    return json.load(urllib.request.urlopen(req, timeout=60))
token = call("POST", "/api/v1/auth/login", {"username": "determined", "password": "", "isHashed": True})["token"]
deadline = time.time() + 900
while True:
    exp = call("GET", f"/api/v1/experiments/{exp_id}", token=token)["experiment"]
    if exp["state"] in ("STATE_COMPLETED", "STATE_ERROR", "STATE_CANCELED"):
        break
    if time.time() > deadline:
        sys.exit(f"experiment {exp_id} did not finish in time (state {exp['state']})")
    print(f"\rwaiting for experiment {exp_id}: {exp['state']} {exp['progress'] * 100:.1f}%", end="", flush=True)
    time.sleep(1)
print()
trials = call("GET", f"/api/v1/experiments/{exp_id}/trials", token=token)["trials"]
metric = exp["config"]["searcher"]["metric"]
smaller = exp["config"]["searcher"].get("smaller_is_better", True)
scored = [t for t in trials if t["searcherMetricValue"] is not None]
if exp["state"] != "STATE_COMPLETED" or not scored:
    sys.exit(f"experiment {exp_id} ended {exp['state']} with {len(scored)} scored trials")
best = (min if smaller else max)(scored, key=lambda t: t["searcherMetricValue"])
print(f"Experiment {exp_id} {exp['state'][6:]}: {len(trials)} trials")
print(f"Best trial {best['id']}: {metric} = {best['searcherMetricValue']:.4f} "
      f"hparams = {json.dumps(best['hparams'], sort_keys=True)}")
PY
