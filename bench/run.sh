#!/usr/bin/env bash
# make bench: every benchmark prints its baseline, our number and the ratio.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
export DET_BUILD_DIR="${BUILD_DIR:-$(dirname "$here")/build}"
"$PYTHON" "$here/launch_latency.py"
"$PYTHON" "$here/metrics_ingest.py"
"$PYTHON" "$here/trainer_vs_plain.py"
"$PYTHON" "$here/checkpoint_throughput.py"
"$DET_BUILD_DIR/bin/searcher_bench"
"$PYTHON" "$here/tpe_vs_optuna.py"
"$PYTHON" "$here/scheduling_overhead.py"
"$PYTHON" "$here/metrics_trials.py"
"$DET_BUILD_DIR/bin/metrics_store_bench" --batches 100
"$DET_BUILD_DIR/bin/store_scale"
"$PYTHON" "$here/create_large_search.py"
"$DET_BUILD_DIR/bin/searcher_persist_bench"
"$PYTHON" "$here/containers_bench.py"
"$PYTHON" "$here/webui_first_paint.py"
"$PYTHON" "$here/ingest_pg.py"
"$PYTHON" "$here/slurm_launch_latency.py"
