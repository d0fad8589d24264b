"""Experiment lifecycle end to end: pause/activate, cancel versus kill of a trial that ignores
preemption, a kill -9 of the master with 20 s of downtime, and max_concurrent_trials.

Everything runs on real master, agent, det and trial processes on loopback; every wait is a poll
with a deadline (wait_for), never a bare sleep, except where the elapsed time is the point."""

import os
import pathlib
import re
import signal
import time
from typing import Optional, Tuple

import yaml

from cluster import Cluster, wait_for
from readoption import assert_readopted, metrics_by_step, read_starts

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
TERMINAL = {"STATE_COMPLETED", "STATE_CANCELED", "STATE_ERROR"}


def flaky_config(tmp_path: pathlib.Path, name: str, *, batches: int, top: Optional[dict] = None,
                 **hparams) -> pathlib.Path:
    """flaky.yaml with `hparams` overriding its hyperparameters, `batches` as max_length and `top`
    merged into the top level."""
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["hyperparameters"].update(hparams)
    cfg["searcher"]["max_length"] = {"batches": batches}
    cfg.update(top or {})
    out = tmp_path / name
    out.write_text(yaml.safe_dump(cfg))
    return out


def held_slots(cluster: Cluster) -> list:
    """(agent, slot, container id) of every slot that is allocated right now."""
    return [(a["id"], sid, s["container"]["id"])
            for a in cluster.request("GET", "/api/v1/agents")["agents"]
            for sid, s in a["slots"].items() if s["container"]]


def training_steps(cluster: Cluster, trial_id: int) -> list:
    return [m["stepsCompleted"] for m in cluster.metrics(trial_id, "training")]


def logs(cluster: Cluster, trial_id: int) -> str:
    return cluster.det("trial", "logs", str(trial_id)).stdout


def start_trial(cluster: Cluster, cfg: pathlib.Path, min_steps: int) -> Tuple[int, dict]:
    exp_id = cluster.create(cfg, FIXTURES)
    (trial,) = wait_for(lambda: cluster.trials(exp_id), 60, f"experiment {exp_id}'s trial")
    wait_for(lambda: len(cluster.metrics(trial["id"], "training")) >= min_steps, 90,
             f"{min_steps} training metrics of trial {trial['id']}")
    return exp_id, trial


# 1. Pause frees the slot; activate resumes from the checkpoint taken at the pause. -----------

def test_pause_frees_slot_and_activate_resumes_from_pause_checkpoint(cluster, tmp_path):
    total = 30
    cfg = flaky_config(tmp_path, "pause.yaml", batches=total, sleep_per_step=0.25)
    exp_id, trial = start_trial(cluster, cfg, min_steps=2)
    tid = trial["id"]

    cluster.det("experiment", "pause", str(exp_id))
    wait_for(lambda: cluster.experiment(exp_id)["state"] == "STATE_PAUSED"
             and cluster.trials(exp_id)[0]["state"] == "STATE_PAUSED", 60,
             "experiment and trial to be PAUSED")
    # The trial checkpoints and exits on the preemption signal: no slot stays allocated.
    wait_for(lambda: not held_slots(cluster), 60, "every agent slot to be free while paused")
    agents = cluster.request("GET", "/api/v1/agents")["agents"]
    assert all(a["numContainers"] == 0 for a in agents), agents

    out = wait_for(lambda: (lambda s: s if "flaky: preempted at step" in s else None)(
        logs(cluster, tid)), 30, "the trial's preemption log line")
    paused_at = int(re.search(r"flaky: preempted at step (\d+)", out).group(1))
    assert paused_at < total, f"the trial finished ({paused_at}) before the pause took effect"
    ckpts = re.findall(rf"flaky: checkpoint (\S+) at step {paused_at}\b", out)
    assert ckpts, f"no checkpoint at the pause step {paused_at}:\n{out}"
    pause_ckpt = ckpts[-1]
    steps = training_steps(cluster, tid)
    assert steps == list(range(1, paused_at + 1)), steps
    # Nothing trains while paused.
    time.sleep(1.0)
    assert training_steps(cluster, tid) == steps
    assert cluster.experiment(exp_id)["state"] == "STATE_PAUSED"

    cluster.det("experiment", "activate", str(exp_id))
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    (trial,) = cluster.trials(exp_id)
    assert trial["state"] == "STATE_COMPLETED"
    assert trial["restarts"] == 0, "a pause is not a failure"
    out = logs(cluster, tid)
    resumed = re.findall(r"flaky: resumed from (\S+) at step (\d+)", out)
    assert resumed == [(pause_ckpt, str(paused_at))], (resumed, pause_ckpt, paused_at, out)
    ck = cluster.request("GET", f"/api/v1/checkpoints/{pause_ckpt}")["checkpoint"]
    assert ck["metadata"]["steps_completed"] == paused_at
    # Every training step is stored exactly once, the second run continuing where it stopped.
    assert training_steps(cluster, tid) == list(range(1, total + 1))
    assert [m["stepsCompleted"] for m in cluster.metrics(tid, "validation")] == [total]


# 2. Cancel versus kill of a trial whose code never checks should_preempt. --------------------

def ignoring_config(tmp_path, name, preemption_timeout):
    # ~200 s of work: it never ends on its own within these tests.
    return flaky_config(tmp_path, name, batches=2000, sleep_per_step=0.1, ignore_preemption=True,
                        top={"preemption_timeout": preemption_timeout, "max_restarts": 0})


def test_cancel_kills_trial_ignoring_preemption_after_preemption_timeout(cluster, tmp_path):
    timeout = 4
    exp_id, trial = start_trial(cluster, ignoring_config(tmp_path, "cancel.yaml", timeout), 2)
    before = len(training_steps(cluster, trial["id"]))
    t0 = time.monotonic()
    cluster.det("experiment", "cancel", str(exp_id))
    cluster.wait_state(exp_id, "STATE_CANCELED", timeout=90)
    elapsed = time.monotonic() - t0
    assert elapsed >= timeout - 0.5, (
        f"canceled after {elapsed:.1f}s: the trial ignores preemption, so only the kill at "
        f"preemption_timeout={timeout}s may end it")
    (trial,) = cluster.trials(exp_id)
    assert trial["state"] == "STATE_CANCELED"
    assert trial["restarts"] == 0
    # It kept training during the grace period, and never acknowledged the preemption.
    steps = training_steps(cluster, trial["id"])
    assert len(steps) > before, (before, steps)
    assert steps == list(range(1, len(steps) + 1)), steps
    assert len(steps) < 2000
    out = logs(cluster, trial["id"])
    assert "flaky: preempted" not in out and "flaky: done" not in out, out
    wait_for(lambda: not held_slots(cluster), 30, "the slot to be free after cancel")


def test_kill_ends_trial_ignoring_preemption_at_once(cluster, tmp_path):
    timeout = 60
    exp_id, trial = start_trial(cluster, ignoring_config(tmp_path, "kill.yaml", timeout), 2)
    t0 = time.monotonic()
    cluster.det("experiment", "kill", str(exp_id))
    cluster.wait_state(exp_id, "STATE_CANCELED", timeout=30)
    elapsed = time.monotonic() - t0
    assert elapsed < timeout / 2, f"kill took {elapsed:.1f}s"
    (trial,) = cluster.trials(exp_id)
    assert trial["state"] == "STATE_CANCELED"
    assert trial["restarts"] == 0
    wait_for(lambda: not held_slots(cluster), 30, "the slot to be free after kill")
    # The process is gone: no metric arrives any more.
    steps = training_steps(cluster, trial["id"])
    time.sleep(1.0)
    assert training_steps(cluster, trial["id"]) == steps
    assert "flaky: preempted" not in logs(cluster, trial["id"])


def test_kill_overrides_a_cancel_waiting_for_preemption_timeout(cluster, tmp_path):
    timeout = 60
    exp_id, trial = start_trial(cluster, ignoring_config(tmp_path, "cancel-kill.yaml", timeout), 2)
    t0 = time.monotonic()
    cluster.det("experiment", "cancel", str(exp_id))
    # The cancel waits for the trial, which keeps training.
    seen = len(training_steps(cluster, trial["id"]))
    wait_for(lambda: len(training_steps(cluster, trial["id"])) >= seen + 3, 30,
             "the trial to keep training after cancel")
    assert cluster.experiment(exp_id)["state"] == "STATE_STOPPING_CANCELED"
    cluster.det("experiment", "kill", str(exp_id))
    cluster.wait_state(exp_id, "STATE_CANCELED", timeout=30)
    elapsed = time.monotonic() - t0
    assert elapsed < timeout / 2, f"cancel then kill took {elapsed:.1f}s"
    assert cluster.trials(exp_id)[0]["state"] == "STATE_CANCELED"
    wait_for(lambda: not held_slots(cluster), 30, "the slot to be free after kill")


# 3. kill -9 of the master with 20 s of downtime loses and duplicates nothing. ----------------

def test_master_down_20s_loses_and_duplicates_no_report(own_cluster, tmp_path):
    c = own_cluster
    total = 40
    starts = tmp_path / "starts.jsonl"
    # No checkpoint before the end (checkpoint_every 0): a rerun could only start from scratch,
    # and assert_readopted tells that apart from the re-adopted process.
    cfg = flaky_config(tmp_path, "downtime.yaml", batches=total, sleep_per_step=0.2,
                       checkpoint_every=0, start_log=str(starts))
    exp_id, trial = start_trial(c, cfg, min_steps=3)
    tid = trial["id"]
    before = metrics_by_step(c, tid)
    (start,) = read_starts(starts)
    assert c.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"] == []

    def up():
        try:
            return c.request("GET", "/info", auth=False)
        except OSError:
            return None

    pid = int((c.data_dir / "master.pid").read_text().split()[0])
    os.kill(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
    # 20 s of downtime, checking all along that the master is indeed down.
    while time.monotonic() - killed_at < 20:
        assert up() is None, "the master answered while it should be down"
        time.sleep(0.5)
    c.master_up()

    c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    (t,) = c.trials(exp_id)
    assert t["state"] == "STATE_COMPLETED"
    assert t["restarts"] == 0, (f"the trial should ride out the downtime:\n{logs(c, tid)[-3000:]}"
                                f"\n--- master.log ---\n{(c.data_dir / 'master.log').read_text()[-4000:]}"
                                f"\n--- agent-1.log ---\n{(c.data_dir / 'agent-1.log').read_text()[-3000:]}")
    assert training_steps(c, tid) == list(range(1, total + 1))
    assert [m["stepsCompleted"] for m in c.metrics(tid, "validation")] == [total]
    assert_readopted(c, tid, starts, start, before, total=total)
    out = logs(c, tid)
    # The agent ships the output written while the master was down (a batch in flight at the
    # kill may legitimately arrive twice, so only presence is checked).
    step_lines = {int(s) for s in re.findall(r"flaky: step (\d+)\b", out)}
    assert step_lines == set(range(1, total + 1)), sorted(step_lines)
    assert f"flaky: done at step {total}" in out


# 4. max_concurrent_trials is never exceeded. -------------------------------------------------

def test_max_concurrent_trials_is_never_exceeded(tmp_path):
    c = Cluster(agents=1, slots=4)
    c.up()
    try:
        cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
        cfg["hyperparameters"]["x"] = {"type": "double", "minval": 0.0, "maxval": 1.0}
        cfg["hyperparameters"]["sleep_per_step"] = 0.2
        cfg["searcher"] = {"name": "random", "metric": "validation_loss",
                           "smaller_is_better": True, "max_length": {"batches": 10},
                           "max_trials": 6, "max_concurrent_trials": 2}
        path = tmp_path / "concurrent.yaml"
        path.write_text(yaml.safe_dump(cfg))
        exp_id = c.create(path, FIXTURES)

        max_live = max_running = max_held = 0
        samples = 0
        deadline = time.monotonic() + 300
        while True:
            assert time.monotonic() < deadline, "experiment did not finish in 300 s"
            state = c.experiment(exp_id)["state"]
            trials = c.trials(exp_id)
            held = held_slots(c)
            live = [t for t in trials if t["state"] not in TERMINAL]
            running = [t for t in trials if t["state"] == "STATE_RUNNING"]
            max_live = max(max_live, len(live))
            max_running = max(max_running, len(running))
            max_held = max(max_held, len(held))
            samples += 1
            assert len(live) <= 2, f"{len(live)} live trials: {[(t['id'], t['state']) for t in live]}"
            assert len(held) <= 2, f"{len(held)} slots held: {held}"
            if state in TERMINAL:
                break
            time.sleep(0.1)
        assert state == "STATE_COMPLETED", state
        assert max_live == 2, f"never 2 live trials at once ({samples} samples)"
        assert max_held == 2, f"never 2 slots held at once ({samples} samples)"
        assert max_running == 2, f"never 2 RUNNING trials at once ({samples} samples)"
        trials = c.trials(exp_id)
        assert len(trials) == 6
        assert all(t["state"] == "STATE_COMPLETED" for t in trials), trials
        assert len({t["hparams"]["x"] for t in trials}) == 6
        for t in trials:
            assert training_steps(c, t["id"]) == list(range(1, 11))
    finally:
        c.cleanup()
