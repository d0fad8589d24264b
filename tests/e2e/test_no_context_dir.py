"""`det experiment create CONFIG` without a context directory, as Determined's CLI allows: the
experiment has no model-definition files and a Core API entrypoint runs from an empty work
directory. Real master, agent, det and trial processes on loopback; waits are polls."""

import pathlib
import re

import yaml

from cluster import wait_for

# Runs from an empty work dir: everything it needs comes from the `determined` package.
TRAIN = (
    "import os, determined as det\n"
    "print('workdir files:', sorted(os.listdir('.')))\n"
    "with det.core.init() as ctx:\n"
    "    for op in ctx.searcher.operations():\n"
    "        ctx.train.report_training_metrics(steps_completed=op.length, metrics={'loss': 1.0})\n"
    "        ctx.train.report_validation_metrics(steps_completed=op.length, metrics={'loss': 0.5})\n"
    "        op.report_completed(0.5)\n"
)


def test_create_without_context_dir_runs_core_api_entrypoint(cluster, tmp_path):
    cfg = tmp_path / "no-context.yaml"
    cfg.write_text(yaml.safe_dump({
        "entrypoint": ["python3", "-c", TRAIN],
        "searcher": {"name": "single", "metric": "loss", "max_length": 2},
        "max_restarts": 0,
    }))

    out = cluster.det("experiment", "create", str(cfg), "--config", "name=x", "--paused").stdout
    assert "Preparing files to send to master... 0.0B and 0 files" in out, out
    exp_id = int(re.search(r"Created experiment (\d+)", out).group(1))
    exp = cluster.experiment(exp_id)
    assert exp["state"] == "STATE_PAUSED", exp
    assert exp["name"] == "x", exp

    cluster.det("experiment", "activate", str(exp_id))
    cluster.wait_state(exp_id, "STATE_COMPLETED")
    (trial,) = cluster.trials(exp_id)
    logs = wait_for(
        lambda: (lambda s: s if "workdir files:" in s else None)(
            cluster.det("trial", "logs", str(trial["id"])).stdout),
        60, "the trial's work dir line")
    assert "workdir files: []" in logs, logs


def test_create_without_context_dir_uploads_only_includes(cluster, tmp_path):
    extra = tmp_path / "extra.txt"
    extra.write_text("hello\n")
    cfg = tmp_path / "includes.yaml"
    cfg.write_text(yaml.safe_dump({
        "entrypoint": ["python3", "-c", "print(open('extra.txt').read().strip() + ' from include')\n"
                       + TRAIN],
        "searcher": {"name": "single", "metric": "loss", "max_length": 1},
        "max_restarts": 0,
    }))
    out = cluster.det("experiment", "create", str(cfg), "-i", str(extra)).stdout
    assert "and 1 files" in out, out
    exp_id = int(re.search(r"Created experiment (\d+)", out).group(1))
    cluster.wait_state(exp_id, "STATE_COMPLETED")
    (trial,) = cluster.trials(exp_id)
    logs = cluster.det("trial", "logs", str(trial["id"])).stdout
    assert "hello from include" in logs, logs
    assert "workdir files: ['extra.txt']" in logs, logs
