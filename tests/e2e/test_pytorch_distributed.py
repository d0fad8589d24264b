"""A PyTorchTrial on the digits data runs as a 2-slot distributed trial (gloo), is paused,
resumed, and completes with the same metrics as an uninterrupted run."""

from cluster import REPO, wait_for

EXAMPLE = REPO / "examples" / "digits-pytorch"
SEED = "reproducibility.experiment_seed=1234"


def metrics_of(cluster, trial_id):
    def values(group):
        return [(m["stepsCompleted"], m["metrics"]["avgMetrics"])
                for m in cluster.metrics(trial_id, group)]
    return values("training"), values("validation")


def test_distributed_pytorch_trial_pause_resume_matches_uninterrupted(cluster):
    straight = cluster.create(EXAMPLE / "distributed.yaml", EXAMPLE, "--config", SEED)
    cluster.wait_state(straight, "STATE_COMPLETED", timeout=300)
    (t1,) = cluster.trials(straight)
    expected = metrics_of(cluster, t1["id"])
    assert expected[0] and expected[1], "the uninterrupted run reported no metrics"
    assert expected[1][-1][0] == 200

    paused = cluster.create(EXAMPLE / "distributed.yaml", EXAMPLE, "--config", SEED)
    (t2,) = wait_for(lambda: cluster.trials(paused), 60, "trial")
    wait_for(lambda: cluster.metrics(t2["id"], "training"), 120, "first training metrics")
    cluster.det("experiment", "pause", str(paused))
    wait_for(lambda: cluster.experiment(paused)["state"] == "STATE_PAUSED"
             and cluster.trials(paused)[0]["state"] == "STATE_PAUSED", 60, "pause")
    # The trial checkpointed and exited: nothing of it runs while paused.
    wait_for(lambda: not any(s["container"] for a in cluster.request("GET", "/api/v1/agents")["agents"]
                             for s in a["slots"].values()), 60, "slots to be free")
    cluster.det("experiment", "activate", str(paused))
    cluster.wait_state(paused, "STATE_COMPLETED", timeout=300)
    (t2,) = cluster.trials(paused)
    assert t2["restarts"] == 0
    logs = cluster.det("trial", "logs", str(t2["id"])).stdout
    assert "[rank=1]" in logs, "both ranks' output comes back"
    assert metrics_of(cluster, t2["id"]) == expected


def test_legacy_trial_class_entrypoint_runs_one_worker_per_slot(cluster):
    exp_id = cluster.create(EXAMPLE / "legacy.yaml", EXAMPLE)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=300)
    (trial,) = cluster.trials(exp_id)
    logs = cluster.det("trial", "logs", str(trial["id"])).stdout
    assert "[rank=0]" in logs and "[rank=1]" in logs
    assert [m["stepsCompleted"] for m in cluster.metrics(trial["id"], "validation")] == [50, 100]
