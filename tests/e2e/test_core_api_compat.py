"""Code written for Determined's Core API runs unchanged: fixtures of our own that use the
surface Determined's Core API tutorials use (det.LOG_FORMAT, report_progress, alert,
checkpoints and resuming, preemption, searcher operations, a hyperparameter search, and one
worker per slot with allgather) reach COMPLETED with the metrics the counter implies."""

import json
import pathlib

from cluster import wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "core_api_compat"


def trial_logs(cluster, trial_id):
    """The trial's log records (the REST stream: one JSON object per line)."""
    raw = cluster.request("GET", f"/api/v1/trials/{trial_id}/logs", raw=True)
    return [json.loads(line)["result"] for line in raw.splitlines() if line.strip()]


def log_text(records):
    return "\n".join(r["log"] for r in records)


def test_single_trial_pause_resume_completes(cluster):
    exp_id = cluster.create(FIXTURES / "single.yaml", FIXTURES)
    (trial,) = wait_for(lambda: cluster.trials(exp_id), 60, "the trial")

    # report_progress reaches the master while the trial runs.
    wait_for(lambda: len(cluster.metrics(trial["id"], "training")) >= 2, 120, "training metrics")
    assert 0 < cluster.experiment(exp_id)["progress"] < 1

    # Pausing preempts the trial: it checkpoints, exits, and resumes where it stopped.
    cluster.det("experiment", "pause", str(exp_id))
    cluster.wait_state(exp_id, "STATE_PAUSED", timeout=60)
    cluster.det("experiment", "activate", str(exp_id))
    exp = cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    assert exp["progress"] == 1

    training = cluster.metrics(trial["id"], "training")
    steps = [m["stepsCompleted"] for m in training]
    assert steps == list(range(5, 61, 5)), steps
    # x was restored from the checkpoint: always 3 per step, across the pause.
    assert all(m["metrics"]["avgMetrics"]["x"] == 3 * m["stepsCompleted"] for m in training)
    (validation,) = cluster.metrics(trial["id"], "validation")
    assert (validation["stepsCompleted"], validation["metrics"]["avgMetrics"]["x"]) == (60, 180)

    records = trial_logs(cluster, trial["id"])
    text = log_text(records)
    assert "preempted at step" in text and "resumed from" in text, text
    assert "alert sent" in text, text
    # The master keeps the alert as a line of the trial's log at the alert's level.
    alerts = [r for r in records if r["log"].startswith("alert: counter done: x=")]
    assert len(alerts) == 1 and alerts[0]["level"] == "LOG_LEVEL_WARNING", alerts
    # det.LOG_FORMAT lines carry their level to the master.
    levels = {r["level"] for r in records if "report_progress(" in r["log"]}
    assert levels == {"LOG_LEVEL_DEBUG"}, levels


def test_hyperparameter_search_completes(cluster):
    exp_id = cluster.create(FIXTURES / "hpsearch.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    trials = cluster.trials(exp_id)
    assert len(trials) == 4
    for t in trials:
        assert t["state"] == "STATE_COMPLETED", t
        inc = t["hparams"]["increment_by"]
        assert 1 <= inc <= 8
        validations = cluster.metrics(t["id"], "validation")
        assert validations, f"trial {t['id']} reported no validation"
        for v in validations:
            assert v["metrics"]["avgMetrics"]["x"] == inc * v["stepsCompleted"], (t, v)


def test_one_worker_per_slot_completes(cluster):
    exp_id = cluster.create(FIXTURES / "distributed.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    (trial,) = cluster.trials(exp_id)
    (validation,) = cluster.metrics(trial["id"], "validation")
    # Two workers each add 2 per step: allgather really gathered from both.
    assert (validation["stepsCompleted"], validation["metrics"]["avgMetrics"]["x"]) == (20, 80)
    ranks = {r.get("rankId") for r in trial_logs(cluster, trial["id"]) if "resumed" not in r["log"]}
    assert {0, 1} <= ranks, ranks
