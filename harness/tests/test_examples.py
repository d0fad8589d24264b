"""Run the digits example and the e2e fixture as trial processes against the fake master."""

import json
import os
import subprocess
import sys

import pytest

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HARNESS)
DIGITS = os.path.join(REPO, "examples", "digits")
FIXTURES = os.path.join(REPO, "tests", "e2e", "fixtures")


def _run(master, tmp_path, script_dir, script, hparams, timeout=60, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DET_")}
    env.update(master.env(tmp_path, DET_HPARAMS=json.dumps(hparams), **env_extra))
    env["PYTHONPATH"] = HARNESS
    return subprocess.Popen(
        [sys.executable, script], cwd=script_dir, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def _finish(proc, timeout=60):
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def _groups(master, group):
    return [b["metrics"] for b in master.metrics if b["group"] == group]


def test_flaky_fail_once_then_resume(master, tmp_path):
    master.ops = [12]
    rc, out = _finish(_run(master, tmp_path, FIXTURES, "flaky.py", {"fail_once": True, "x": 0.5}))
    assert rc == 1, out
    (ckpt,) = master.checkpoints.values()
    assert ckpt["metadata"] == {"steps_completed": 5}
    assert [m["stepsCompleted"] for m in _groups(master, "training")] == [1, 2, 3, 4, 5]

    master.run_id = 2
    rc, out = _finish(_run(master, tmp_path, FIXTURES, "flaky.py", {"fail_once": True, "x": 0.5},
                           DET_LATEST_CHECKPOINT=ckpt["uuid"], DET_STEPS_COMPLETED="5"))
    assert rc == 0, out
    assert "resumed from" in out
    steps = [m["stepsCompleted"] for m in _groups(master, "training")]
    assert steps == list(range(1, 13))
    assert [m["trialRunId"] for m in _groups(master, "training")][-1] == 2
    (val,) = _groups(master, "validation")
    assert val["stepsCompleted"] == 12 and val["metrics"]["avgMetrics"]["batches"] == 12
    assert master.completed_ops == [{"op": {"length": 12}, "searcherMetric": pytest.approx(1 / 13)}]
    assert sorted(c["metadata"]["steps_completed"] for c in master.checkpoints.values()) == [5, 10, 12]


def test_flaky_always_fail(master, tmp_path):
    master.ops = [12]
    rc, out = _finish(_run(master, tmp_path, FIXTURES, "flaky.py", {"always_fail": True, "exit_code": 3}))
    assert rc == 3, out
    assert len(_groups(master, "training")) == 1
    assert master.checkpoints == {}


def test_flaky_invalid_hp(master, tmp_path):
    master.ops = [12]
    rc, out = _finish(_run(master, tmp_path, FIXTURES, "flaky.py", {"invalid_hp": True}))
    assert rc == 0, out
    assert master.early_exits == [{"reason": "EXITED_REASON_INVALID_HP"}]


def test_flaky_preempted(master, tmp_path):
    master.ops = [100000]
    proc = _run(master, tmp_path, FIXTURES, "flaky.py", {"sleep_per_step": 0.01, "checkpoint_every": 0})
    master.wait_for(lambda: len(master.metrics) >= 3, timeout=30)
    master.set_preempt()
    rc, out = _finish(proc)
    assert rc == 0, out
    assert master.acks == 1
    (ckpt,) = master.checkpoints.values()
    assert ckpt["metadata"]["steps_completed"] == _groups(master, "training")[-1]["stepsCompleted"]
    assert master.completed_ops == []


def test_digits_trains_checkpoints_and_resumes(master, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("sklearn")
    master.ops = [50, 100]
    hp = {"lr": 0.1, "hidden_size": 32, "dropout": 0.0, "batch_size": 32, "report_every": 25}
    rc, out = _finish(_run(master, tmp_path, DIGITS, "train.py", hp))
    assert rc == 0, out
    assert [m["stepsCompleted"] for m in _groups(master, "training")] == [25, 50, 75, 100]
    vals = _groups(master, "validation")
    assert [v["stepsCompleted"] for v in vals] == [50, 100]
    assert set(vals[-1]["metrics"]["avgMetrics"]) == {"validation_loss", "accuracy"}
    assert vals[-1]["metrics"]["avgMetrics"]["accuracy"] > 0.5
    assert [c["op"]["length"] for c in master.completed_ops] == [50, 100]
    assert master.progress == [0.5, 1.0, 0.75, 1.0]
    ckpts = sorted(master.checkpoints.values(), key=lambda c: c["metadata"]["steps_completed"])
    assert [c["metadata"]["steps_completed"] for c in ckpts] == [50, 100]
    assert "state.pt" in ckpts[-1]["resources"]

    # A later run (say after a pause) resumes from the latest checkpoint.
    master.run_id = 2
    master.ops = [150]
    rc, out = _finish(_run(master, tmp_path, DIGITS, "train.py", hp,
                           DET_LATEST_CHECKPOINT=ckpts[-1]["uuid"], DET_STEPS_COMPLETED="100"))
    assert rc == 0, out
    run2 = [m for m in _groups(master, "training") if m["trialRunId"] == 2]
    assert [m["stepsCompleted"] for m in run2] == [125, 150]
    assert [c["op"]["length"] for c in master.completed_ops] == [50, 100, 150]
