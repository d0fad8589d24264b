"""A PyTorchTrial on the digits data runs as a 2-slot distributed trial (gloo), is paused,
resumed, and completes with the same metrics as an uninterrupted run.

The same seed makes a rerun from batch 0 report the same metrics as a resume, so the paused run
uses fixtures/resume_probe.py (the example's trial plus a callback that prints the batch and
checkpoint each run starts from), and the test checks that the second run started from the
checkpoint taken at the pause, at its batch, on both ranks."""

import re
import shutil

import yaml

from cluster import REPO, wait_for

EXAMPLE = REPO / "examples" / "digits-pytorch"
PROBE = REPO / "tests" / "e2e" / "fixtures" / "resume_probe.py"
SEED = "reproducibility.experiment_seed=1234"


def metrics_of(cluster, trial_id):
    def values(group):
        return [(m["stepsCompleted"], m["metrics"]["avgMetrics"])
                for m in cluster.metrics(trial_id, group)]
    return values("training"), values("validation")


def probed_example(tmp_path):
    """The example's context plus resume_probe.py, and distributed.yaml pointing at it."""
    ctx = tmp_path / "ctx"
    shutil.copytree(EXAMPLE, ctx, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROBE, ctx / "resume_probe.py")
    cfg = yaml.safe_load((EXAMPLE / "distributed.yaml").read_text())
    assert cfg["entrypoint"].endswith("--trial model_def:DigitsTrial"), cfg["entrypoint"]
    cfg["entrypoint"] = cfg["entrypoint"].replace("model_def:DigitsTrial",
                                                  "resume_probe:ProbedDigitsTrial")
    path = tmp_path / "distributed-probed.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, ctx


def starts_of(logs):
    """(rank, first_batch, checkpoint) of every run start the probe printed, in order."""
    return [(int(r), int(b), c) for r, b, c in
            re.findall(r"resume_probe: rank=(\d+) first_batch=(\d+) checkpoint=(\S+)", logs)]


def test_distributed_pytorch_trial_pause_resume_matches_uninterrupted(cluster, tmp_path):
    straight = cluster.create(EXAMPLE / "distributed.yaml", EXAMPLE, "--config", SEED)
    cluster.wait_state(straight, "STATE_COMPLETED", timeout=300)
    (t1,) = cluster.trials(straight)
    expected = metrics_of(cluster, t1["id"])
    assert expected[0] and expected[1], "the uninterrupted run reported no metrics"
    assert expected[1][-1][0] == 200

    cfg, ctx = probed_example(tmp_path)
    paused = cluster.create(cfg, ctx, "--config", SEED)
    (t2,) = wait_for(lambda: cluster.trials(paused), 60, "trial")
    wait_for(lambda: cluster.metrics(t2["id"], "training"), 120, "first training metrics")
    cluster.det("experiment", "pause", str(paused))
    wait_for(lambda: cluster.experiment(paused)["state"] == "STATE_PAUSED"
             and cluster.trials(paused)[0]["state"] == "STATE_PAUSED", 60, "pause")
    # The trial checkpointed and exited: nothing of it runs while paused.
    wait_for(lambda: not any(s["container"] for a in cluster.request("GET", "/api/v1/agents")["agents"]
                             for s in a["slots"].values()), 60, "slots to be free")
    ckpts = cluster.request("GET", f"/api/v1/trials/{t2['id']}/checkpoints")["checkpoints"]
    assert ckpts, "the pause saved no checkpoint"
    pause_ckpt = max(ckpts, key=lambda c: c["metadata"]["steps_completed"])
    pause_batch = pause_ckpt["metadata"]["steps_completed"]
    assert 0 < pause_batch < 200, f"the pause checkpoint is at batch {pause_batch}"
    before = starts_of(cluster.det("trial", "logs", str(t2["id"])).stdout)
    assert sorted(before) == [(0, 0, "none"), (1, 0, "none")], before

    cluster.det("experiment", "activate", str(paused))
    cluster.wait_state(paused, "STATE_COMPLETED", timeout=300)
    (t2,) = cluster.trials(paused)
    assert t2["restarts"] == 0
    logs = cluster.det("trial", "logs", str(t2["id"])).stdout
    assert "[rank=1]" in logs, "both ranks' output comes back"
    # Exactly two runs; the second started on both ranks from the pause checkpoint's batch.
    starts = starts_of(logs)
    resumed = sorted(s for s in starts if s[2] != "none")
    assert sorted(s for s in starts if s[2] == "none") == [(0, 0, "none"), (1, 0, "none")], starts
    assert resumed == [(0, pause_batch, pause_ckpt["uuid"]), (1, pause_batch, pause_ckpt["uuid"])], \
        (starts, pause_ckpt)
    loaded = re.findall(r"resume_probe: rank=(\d+) loaded checkpoint (\S+)", logs)
    assert sorted(loaded) == [("0", pause_ckpt["uuid"]), ("1", pause_ckpt["uuid"])], loaded
    assert metrics_of(cluster, t2["id"]) == expected


def test_legacy_trial_class_entrypoint_runs_one_worker_per_slot(cluster):
    exp_id = cluster.create(EXAMPLE / "legacy.yaml", EXAMPLE)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=300)
    (trial,) = cluster.trials(exp_id)
    logs = cluster.det("trial", "logs", str(trial["id"])).stdout
    assert "[rank=0]" in logs and "[rank=1]" in logs
    assert [m["stepsCompleted"] for m in cluster.metrics(trial["id"], "validation")] == [50, 100]
