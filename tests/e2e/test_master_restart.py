"""A kill -9 of the master while a trial runs loses nothing: the master restores the experiment,
the agent re-registers, the running trial is re-adopted, and no metric is lost or stored twice.

Re-adoption is proven, not assumed: the store merges repeated metric reports, so a silent rerun
from scratch would also leave steps 1..N stored once. The trial is killed before its first
checkpoint (checkpoint_every 0), and the test checks that its process started exactly once (the
fixture's start_log), that every metric comes from that one process and run, and that the
metrics read before the kill are unchanged after it."""

import os
import pathlib
import signal

import yaml

from cluster import Cluster, wait_for  # noqa: F401
from readoption import assert_readopted, read_starts, metrics_by_step

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def test_master_kill9_while_trial_runs(own_cluster, tmp_path):
    c = own_cluster
    starts = tmp_path / "starts.jsonl"
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["hyperparameters"].update(sleep_per_step=0.25, checkpoint_every=0, start_log=str(starts))
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp_id = c.create(path, FIXTURES)
    trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 30, "trial")
    wait_for(lambda: len(c.metrics(trial["id"], "training")) >= 3, 60, "some training metrics")
    before = metrics_by_step(c, trial["id"])
    (start,) = read_starts(starts)
    assert c.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"] == [], \
        "the kill must come before the first checkpoint, or a rerun could resume from it"

    pid = int((c.data_dir / "master.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
    c.master_up()

    c.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    (t,) = c.trials(exp_id)
    assert t["restarts"] == 0
    steps = [m["stepsCompleted"] for m in c.metrics(t["id"], "training")]
    assert steps == list(range(1, 21)), steps
    assert_readopted(c, t["id"], starts, start, before, total=20)
