"""The Python client SDK (determined.experimental) against a real cluster: a user's script
that only uses the SDK, metrics followed while a trial runs, logs, and experiment control."""

import json
import pathlib
import subprocess
import time
import warnings

import pytest

from cluster import PYTHON, REPO, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def slow_config(batches: int, sleep: float, name: str) -> dict:
    return {
        "name": name,
        "entrypoint": "python3 flaky.py",
        "hyperparameters": {"x": 0.1, "sleep_per_step": sleep, "checkpoint_every": 0},
        "searcher": {"name": "single", "metric": "validation_loss", "smaller_is_better": True,
                     "max_length": {"batches": batches}},
        "max_restarts": 0,
    }


@pytest.fixture
def det(cluster, tmp_path, monkeypatch):
    """A Determined logged in as `determined`, with a token cache of its own."""
    from determined.experimental import Determined

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for var in ("DET_USER", "DET_USER_TOKEN", "DET_PASS"):
        monkeypatch.delenv(var, raising=False)
    return Determined(master=cluster.url, user="determined", password="")


def test_script_using_only_the_sdk(cluster, tmp_path):
    env = dict(cluster.env, XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONPATH=str(REPO / "harness"))
    proc = subprocess.run([PYTHON, str(FIXTURES / "sdk_script.py"), cluster.url, str(FIXTURES),
                           str(tmp_path / "out")], env=env, capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["user"] == "determined"
    assert seen["state"] == "STATE_COMPLETED"
    assert cluster.experiment(seen["experiment_id"])["state"] == "STATE_COMPLETED"
    [trial] = seen["trials"]
    assert trial["hparams"] == {"scale": 0.9} and trial["state"] == "STATE_COMPLETED"
    assert trial["experiment_id"] == seen["experiment_id"]
    # x shrinks by 0.9 a step: the last checkpoint (step 10) is the best, by either sort.
    best = seen["best"]
    assert best["steps"] == 10 and best["by_name"] == best["uuid"]
    assert best["x"] == pytest.approx(0.9 ** 9) and best["trial_id"] == trial["id"]
    assert seen["checkpoint_of_uuid"] == best["uuid"]
    # Both download modes give the files the trial wrote (metadata.json added).
    for mode in ("master", "direct"):
        got = seen["download"][mode]
        assert set(got) == {"state.json", "nested/weights.bin", "metadata.json"}, (mode, got)
        state = json.loads(bytes.fromhex(got["state.json"]))
        assert state["step"] == 10 and state["x"] == pytest.approx(0.9 ** 9)
        assert bytes.fromhex(got["nested/weights.bin"]) == bytes(range(256)) * 10
        assert json.loads(bytes.fromhex(got["metadata.json"]))["steps_completed"] == 10
    assert seen["download"]["master"] == seen["download"]["direct"]
    assert [v[0] for v in seen["validation"]] == list(range(1, 11))
    assert [v[1] for v in seen["validation"]] == pytest.approx([0.9 ** i for i in range(10)])
    assert {v[2] for v in seen["validation"]} == {"validation"}
    assert seen["training_steps"] == list(range(1, 11))
    assert len(seen["logs_tail"]) == 5 and all(line.endswith("\n") for line in seen["logs_tail"])
    assert "exited with code 0" in seen["logs_tail"][-1]
    # login() cached the token where `det` keeps it.
    cache = json.loads((tmp_path / "config" / "determined" / "auth.json").read_text())
    assert cache["masters"][cluster.url]["active_user"] == "determined"


def test_iter_metrics_follows_a_running_trial(cluster, det):
    exp = det.create_experiment(config=slow_config(16, 0.4, "sdk-follow"), model_dir=FIXTURES)
    trial = exp.await_first_trial(interval=0.1)
    # Wait until at least one report exists, so the call starts part-way through the trial.
    wait_for(lambda: len(cluster.request("GET", f"/api/v1/trials/{trial.id}/metrics"
                                                "?group=training")["metrics"]) >= 1,
             120, "a first training report")
    started = time.time()
    arrivals = []
    for m in trial.iter_metrics("training"):
        arrivals.append((m.steps_completed, time.time(), m.end_time.timestamp()))
    assert [a[0] for a in arrivals] == list(range(1, 17))
    # Reports made after the call started came out of the same call, as they arrived.
    later = [a for a in arrivals if a[2] >= int(started) + 1]
    assert len(later) >= 3, (started, arrivals)
    assert all(arrived >= reported - 1 for _, arrived, reported in later)
    # The generator ended because the trial did: it is over now.
    trial.reload()
    assert trial.state.value == "STATE_COMPLETED"
    assert exp.wait(interval=0.2).value == "STATE_COMPLETED"
    # The multi-trial form and the deprecated forms give the same reports once it has ended.
    assert [m.steps_completed for m in det.iter_trials_metrics([trial.id], "validation")] == [16]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert [m.steps_completed for m in trial.stream_training_metrics()] == list(range(1, 17))
        [v] = list(det.stream_trials_validation_metrics([trial.id]))
    assert v.group == "validation" and v.metrics["batches"] == 16


def test_pause_activate_kill_and_logs(cluster, det):
    from determined.experimental import ExperimentState

    exp = det.create_experiment(config=slow_config(400, 0.2, "sdk-control"), model_dir=FIXTURES)
    trial = exp.await_first_trial(interval=0.1)

    def state() -> str:
        exp.reload()
        return exp.state.value

    wait_for(lambda: any("flaky: step 2" in line for line in trial.iter_logs()), 120,
             "the trial to report steps")
    exp.pause()
    wait_for(lambda: state() == "STATE_PAUSED", 60, "the experiment to pause")
    with pytest.raises(ValueError, match="paused"):
        exp.wait(interval=0.1)
    exp.activate()
    wait_for(lambda: state() in ("STATE_ACTIVE", "STATE_RUNNING"), 60, "activation")
    wait_for(lambda: sum("flaky: started" in line for line in trial.iter_logs()) >= 2, 120,
             "the trial to start again after activation")
    exp.kill()
    assert exp.wait(interval=0.2) == ExperimentState.CANCELED
    # A followed log ends once the trial has ended; head/tail and filters select lines.
    lines = list(trial.iter_logs(follow=True))
    assert sum("flaky: started" in line for line in lines) == 2
    assert list(trial.iter_logs(head=2)) == lines[:2]
    assert list(trial.iter_logs(tail=3)) == lines[-3:]
    assert all("step 3" in line for line in trial.iter_logs(search_text="step 3"))
    trial.reload()
    assert trial.state.value == "STATE_CANCELED"


def test_experiment_edits_lists_and_checkpoints(cluster, det, tmp_path):
    from determined.experimental import CheckpointSortBy, OrderBy, TrialSortBy

    extra = tmp_path / "extra"
    (extra / "sub").mkdir(parents=True)
    (extra / "sub" / "data.txt").write_text("included")
    exp = det.create_experiment(config=str(FIXTURES / "checkpoints.yaml"), model_dir=FIXTURES,
                                includes=[str(extra)])
    assert exp.wait(interval=0.2).value == "STATE_COMPLETED"
    exp.set_name("sdk-renamed")
    exp.set_description("set by the sdk")
    exp.add_label("a")
    exp.add_label("b")
    exp.remove_label("a")
    exp.reload()
    assert (exp.name, exp.description, exp.labels) == ("sdk-renamed", "set by the sdk", {"b"})
    assert [e.id for e in det.list_experiments(labels=["b"]) if e.id == exp.id] == [exp.id]
    assert exp.id not in [e.id for e in det.list_experiments(labels=["zzz"])]
    assert exp.id in [e.id for e in det.list_experiments(
        states=[exp.state], experiment_ids=[exp.id])]
    ids = [e.id for e in det.list_experiments(sort_by=None)]
    assert exp.id in ids

    # The model definition comes back as the files that were sent (plus the include).
    import tarfile

    path = exp.download_code(str(tmp_path / "code"))
    with tarfile.open(path) as tf:
        names = set(tf.getnames())
    assert {"checkpoints.py", "checkpoints.yaml", "extra/sub/data.txt"} <= {
        n[2:] if n.startswith("./") else n for n in names}

    [t] = exp.list_trials(sort_by=TrialSortBy.ID, order_by=OrderBy.DESC)
    ckpts = t.list_checkpoints(sort_by=CheckpointSortBy.BATCH_NUMBER, order_by=OrderBy.ASC)
    steps = [c.metadata["steps_completed"] for c in ckpts]
    assert steps == sorted(steps) and steps[-1] == 10
    latest = ckpts[-1]
    latest.add_metadata({"note": "sdk", "n": 1})
    latest.remove_metadata(["n"])
    again = det.get_checkpoint(latest.uuid)
    assert again.metadata == {"steps_completed": 10, "note": "sdk"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert t.select_checkpoint(latest=True).uuid == latest.uuid
        assert t.select_checkpoint(uuid=latest.uuid).uuid == latest.uuid
        # Checkpoint GC runs after the experiment ends and keeps steps 8, 9, 10 (x shrinks each
        # step; save_experiment_best 3): wait for it, then rank what is left.
        wait_for(lambda: sorted(c.metadata["steps_completed"] for c in t.list_checkpoints()
                                if c.state.value == "STATE_COMPLETED") == [8, 9, 10],
                 60, "checkpoint GC to keep steps 8, 9, 10")
        assert exp.top_checkpoint(sort_by="x", smaller_is_better=False).metadata[
            "steps_completed"] == 8
        assert exp.top_checkpoint().metadata["steps_completed"] == 10
        [top] = exp.top_n_checkpoints(1)
    assert top.training.trial_id == t.id

    me = det.whoami()
    assert me.username == "determined" == det.get_session_username()
    assert det.get_user_by_name("determined").user_id == me.user_id
    assert "determined" in [u.username for u in det.list_users()]
    assert [w.name for w in det.list_workspaces()] and det.get_resource_pool("default").name


def test_login_reuses_the_cached_token(cluster, tmp_path, monkeypatch):
    from determined.common.api import errors
    from determined.experimental import Determined

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for var in ("DET_USER", "DET_USER_TOKEN", "DET_PASS"):
        monkeypatch.delenv(var, raising=False)
    first = Determined(master=cluster.url, user="determined", password="")
    token = first._session._user_token
    second = Determined(master=cluster.url)  # no credentials: the cached token
    assert second._session._user_token == token and second.whoami().username == "determined"
    second.logout()
    cache = json.loads((tmp_path / "config" / "determined" / "auth.json").read_text())
    assert "determined" not in cache["masters"][cluster.url]["tokens"]
    with pytest.raises(errors.UnauthenticatedException):
        first.whoami()  # the master ended the session
    with pytest.raises(errors.APIException):
        Determined(master=cluster.url, user="determined", password="wrong")
