"""determined.experimental.core_v2: a plain script (not submitted) reports to the master as an
unmanaged experiment that shows like any other (REST lists, det experiment list/describe,
metrics, checkpoints, logs) and ends COMPLETED on close or ERROR when the script raises; a re-run
with external ids resumes the same trial; the same script submitted as an experiment runs as
an ordinary managed trial."""

import json
import os
import pathlib
import subprocess
import uuid

from cluster import BIN, PYTHON, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "core_v2"


def script_env(cluster, **extra):
    env = dict(cluster.env)
    # As Determined's own tests run detached scripts: the user comes from DET_USER/DET_PASS.
    env.update({"DET_USER": "determined", "DET_PASS": ""})
    env.update(extra)
    return env


def run_script(cluster, name, timeout=120, **extra):
    return subprocess.run(
        [PYTHON, str(FIXTURES / name)], env=script_env(cluster, **extra), capture_output=True,
        text=True, timeout=timeout, cwd=str(cluster.tmp),
    )


def ids_from(output):
    for line in output.splitlines():
        if line.startswith("core_v2 experiment "):
            words = line.split()
            return int(words[2]), int(words[4])
    raise AssertionError(f"no 'core_v2 experiment N trial M' line in:\n{output}")


def listed(cluster):
    return {e["id"]: e for e in cluster.request("GET", "/api/v1/experiments?limit=1000")["experiments"]}


def trial(cluster, trial_id):
    return cluster.request("GET", f"/api/v1/trials/{trial_id}")["trial"]


def test_detached_script_reports_an_unmanaged_experiment(cluster):
    name = f"detached-{uuid.uuid4().hex[:8]}"
    storage = cluster.data_dir / "checkpoints" / f"ckpt-{name}"  # under the allowed roots
    go = cluster.tmp / f"go-{name}"
    proc = subprocess.Popen(
        [PYTHON, str(FIXTURES / "train.py")],
        env=script_env(cluster, CORE_V2_NAME=name, CORE_V2_STORAGE=str(storage),
                       CORE_V2_GO_FILE=str(go)),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=str(cluster.tmp),
    )
    try:
        # While the script runs, its experiment is listed as running and unmanaged.
        exp = wait_for(
            lambda: next((e for e in listed(cluster).values()
                          if e["name"] == name and e["state"] == "STATE_RUNNING"), None),
            60, "the detached experiment to be listed as running")
        assert exp["unmanaged"] is True
        assert exp["labels"] == ["detached"] and exp["description"] == "a core_v2 script"
        running = cluster.det("experiment", "list").stdout
        assert any(str(exp["id"]) in line and name in line and "RUNNING" in line
                   for line in running.splitlines()), running
        # No agent runs it: it is no job and holds no slot.
        jobs = cluster.request("GET", "/api/v1/job-queues-v2")["jobs"]
        assert str(exp["id"]) not in [(j.get("full") or {}).get("entityId") for j in jobs], jobs
        assert cluster.request("GET", "/api/v1/tasks").get("allocationIdToSummary", {}) == {}
        # `det trial logs -f` follows the running trial until its script closes it.
        (running_trial,) = cluster.trials(exp["id"])
        follow_out = cluster.tmp / f"follow-{name}.txt"
        with open(follow_out, "w") as sink:
            follow = subprocess.Popen(
                [str(BIN / "det"), "trial", "logs", "-f", str(running_trial["id"])],
                env=cluster.env, stdout=sink, stderr=subprocess.STDOUT)
        wait_for(lambda: "waiting for the test" in follow_out.read_text(), 60,
                 "the script's output in the followed logs")
        assert follow.poll() is None, "det trial logs -f stopped while the trial runs"
    finally:
        go.touch()
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert follow.wait(timeout=60) == 0
    assert "checkpoint " in follow_out.read_text()
    exp_id, trial_id = ids_from(out)
    assert exp_id == exp["id"]

    exp = cluster.experiment(exp_id)
    assert exp["state"] == "STATE_COMPLETED" and exp["progress"] == 1, exp
    assert exp["unmanaged"] is True and exp["config"]["checkpoint_storage"]["host_path"] == str(storage)
    assert listed(cluster)[exp_id]["state"] == "STATE_COMPLETED"
    lines = cluster.det("experiment", "list").stdout.splitlines()
    assert any(str(exp_id) in line and name in line and "COMPLETED" in line for line in lines), lines
    described = cluster.det("experiment", "describe", str(exp_id)).stdout
    assert name in described and "COMPLETED" in described, described

    t = trial(cluster, trial_id)
    assert t["state"] == "STATE_COMPLETED" and t["experimentId"] == exp_id
    assert t["hparams"] == {"lr": 0.5}
    training = cluster.metrics(trial_id, "training")
    assert [m["stepsCompleted"] for m in training] == list(range(20))
    assert training[3]["metrics"]["avgMetrics"]["loss"] == 0.25
    validation = cluster.metrics(trial_id, "validation")
    assert [(m["stepsCompleted"], m["metrics"]["avgMetrics"]["loss"]) for m in validation] == [
        (9, 0.05), (19, 0.025)]

    ckpts = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    assert sorted(c["metadata"]["steps_completed"] for c in ckpts) == [9, 19], ckpts
    latest = max(ckpts, key=lambda c: c["metadata"]["steps_completed"])
    assert latest["taskId"] == t["taskId"]
    target = cluster.tmp / f"download-{name}"
    cluster.det("checkpoint", "download", latest["uuid"], "-o", str(target))
    assert (target / "step").read_text() == "19"
    assert json.loads((target / "metadata.json").read_text())["steps_completed"] == 19

    # The script's output was shipped to the master.
    logs = cluster.det("trial", "logs", str(trial_id)).stdout
    assert f"checkpoint {latest['uuid']} at step 19" in logs, logs


def test_detached_script_that_raises_ends_in_error(cluster):
    external = f"raises-{uuid.uuid4().hex[:8]}"
    proc = run_script(cluster, "raises.py", timeout=60, CORE_V2_EXTERNAL_ID=external,
                      CORE_V2_STORAGE=str(cluster.data_dir / "checkpoints" / f"ckpt-{external}"))
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "ValueError: oops at step 15" in proc.stderr
    (exp,) = [e for e in listed(cluster).values() if e.get("externalExperimentId") == external]
    assert exp["state"] == "STATE_ERROR", exp
    (t,) = cluster.trials(exp["id"])
    assert t["state"] == "STATE_ERROR"
    assert len(cluster.metrics(t["id"], "training")) == 16
    logs = cluster.det("trial", "logs", str(t["id"])).stdout
    assert "ValueError: oops at step 15" in logs, logs


def test_rerun_with_external_ids_resumes_the_same_trial(cluster):
    external = f"resume-{uuid.uuid4().hex[:8]}"
    extra = {"CORE_V2_NAME": external, "CORE_V2_EXTERNAL_ID": external,
             "CORE_V2_STORAGE": str(cluster.data_dir / "checkpoints" / f"ckpt-{external}")}
    first = run_script(cluster, "train.py", **extra)
    assert first.returncode == 0, first.stdout + first.stderr
    # The second run logs in through the SDK's Determined() client.
    second = run_script(cluster, "train.py", CORE_V2_SDK_CLIENT="1", **extra)
    assert second.returncode == 0, second.stdout + second.stderr
    assert ids_from(first.stdout) == ids_from(second.stdout)
    exp_id, trial_id = ids_from(second.stdout)
    assert "at step 20" in second.stdout, second.stdout  # resumed from the step-19 checkpoint
    training = cluster.metrics(trial_id, "training")
    assert [m["stepsCompleted"] for m in training] == list(range(40))
    assert {m["trialRunId"] for m in training} == {1, 2}
    assert cluster.experiment(exp_id)["state"] == "STATE_COMPLETED"
    assert len(cluster.trials(exp_id)) == 1


def test_core_v2_script_submitted_as_a_managed_experiment_completes(cluster):
    exp_id = cluster.create(FIXTURES / "managed.yaml", FIXTURES)
    exp = cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    assert exp["unmanaged"] is False
    (t,) = cluster.trials(exp_id)
    assert [m["stepsCompleted"] for m in cluster.metrics(t["id"], "training")] == list(range(20))
    ckpts = cluster.request("GET", f"/api/v1/trials/{t['id']}/checkpoints")["checkpoints"]
    assert sorted(c["metadata"]["steps_completed"] for c in ckpts) == [9, 19]
    # The config passed to core_v2.init is ignored on the cluster: the experiment's name holds.
    assert exp["name"] == "core-v2-managed"


def test_the_rest_calls_of_determined_detached_clients(cluster):
    """The calls Determined 0.38's core_v2 makes, in its order and shapes, straight over REST."""
    config = "name: rest-detached\nsearcher: {name: single, metric: unmanaged}\n"
    exp = cluster.request("POST", "/api/v1/experiments", {"config": config, "unmanaged": True})
    exp_id = exp["experiment"]["id"]
    assert exp["experiment"]["state"] == "STATE_PAUSED" and exp["experiment"]["unmanaged"] is True
    assert exp["config"]["entrypoint"] is None
    t = cluster.request("POST", "/api/v1/trials",
                        {"experimentId": exp_id, "hparams": {"a": 1}, "unmanaged": True})["trial"]
    assert t["taskId"].startswith(f"{exp_id}.") and t["state"] == "STATE_PAUSED"
    started = cluster.request("POST", f"/api/v1/trials/{t['id']}/start",
                              {"trialId": t["id"], "resume": True})
    assert started == {"trialRunId": 1, "stepsCompleted": 0}
    assert cluster.request("POST", "/api/v1/runs/start",
                           {"runId": t["id"], "checkpointStorage": None}) == {}
    status, _ = cluster.request_status("POST", "/api/v1/runs/start", {"runId": 999999},
                                       {"Authorization": f"Bearer {cluster.token()}"})
    assert status == 404
    assert cluster.experiment(exp_id)["state"] == "STATE_RUNNING"
    hb = cluster.request("PATCH", f"/api/v1/trials/{t['id']}", {"trialId": t["id"]})
    assert hb["trial"]["state"] == "STATE_RUNNING"
    cluster.request("POST", "/task-logs", [{"task_id": t["taskId"], "timestamp":
                                            "2024-01-02T03:04:05.000001+00:00",
                                            "log": "hello from a detached script\n"}])
    assert "hello from a detached script" in cluster.det("trial", "logs", str(t["id"])).stdout
    done = cluster.request("PATCH", f"/api/v1/trials/{t['id']}",
                           {"trialId": t["id"], "state": "STATE_COMPLETED"})
    assert done["trial"]["state"] == "STATE_COMPLETED"
    assert cluster.experiment(exp_id)["state"] == "STATE_COMPLETED"
    # Killing it afterwards changes nothing (as Determined answers for unmanaged experiments);
    # activating or pausing it is refused: only its script runs it.
    cluster.request("POST", f"/api/v1/experiments/{exp_id}/kill", {})
    assert cluster.experiment(exp_id)["state"] == "STATE_COMPLETED"
    auth = {"Authorization": f"Bearer {cluster.token()}"}
    for action in ("activate", "pause"):
        status, body = cluster.request_status(
            "POST", f"/api/v1/experiments/{exp_id}/{action}", {}, auth)
        assert status == 400 and "is unmanaged" in body["error"]["error"], body
    # An unknown trial is 404, and a managed experiment takes no unmanaged trials.
    status, body = cluster.request_status(
        "PATCH", f"/api/v1/trials/{t['id'] + 100000}", {"state": "STATE_COMPLETED"}, auth)
    assert status == 404, body
    managed = cluster.request("POST", "/api/v1/experiments", {
        "config": "name: paused\nentrypoint: python3 x.py\nsearcher: {name: single, metric: x}\n",
        "activate": False})["experiment"]
    status, body = cluster.request_status(
        "POST", "/api/v1/trials", {"experimentId": managed["id"], "unmanaged": True}, auth)
    assert status == 400 and "not unmanaged" in body["error"]["error"], body


def test_the_detached_example_runs_and_resumes(cluster):
    example = FIXTURES.parents[3] / "examples" / "detached"
    storage = cluster.data_dir / "checkpoints" / "example-ckpts"  # under the allowed roots
    script = (example / "train.py").read_text().replace(
        "/tmp/determined-detached-checkpoints", str(storage))
    copy = cluster.tmp / "detached_example.py"
    copy.write_text(script)
    for run in (1, 2):
        proc = subprocess.run([PYTHON, str(copy)], env=script_env(cluster), capture_output=True,
                              text=True, timeout=120, cwd=str(cluster.tmp))
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "resuming at step 100" in proc.stdout, proc.stdout
    (exp,) = [e for e in listed(cluster).values()
              if e.get("externalExperimentId") == "detached-example"]
    assert exp["state"] == "STATE_COMPLETED"
    (t,) = cluster.trials(exp["id"])
    assert len(cluster.metrics(t["id"], "training")) == 200
