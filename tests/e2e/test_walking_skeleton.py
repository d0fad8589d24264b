"""End-to-end: experiments run through the real master, agent, det and the Python package."""

import json
import pathlib
import shutil
import tempfile

from cluster import REPO, wait_for

DIGITS = REPO / "examples" / "digits"
FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def write_config(base: pathlib.Path, name: str, **overrides) -> pathlib.Path:
    import yaml

    cfg = yaml.safe_load(base.read_text())
    for key, value in overrides.items():
        node = cfg
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    out = pathlib.Path(tempfile.mkdtemp(prefix="det-cfg-")) / name
    out.write_text(yaml.safe_dump(cfg))
    return out


def test_random_search_completes_with_metrics_and_checkpoints(cluster):
    exp_id = cluster.create(DIGITS / "random.yaml", DIGITS)
    exp = cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=300)
    assert exp["searcherType"] == "random"
    trials = cluster.trials(exp_id)
    assert len(trials) == 4
    assert all(t["state"] == "STATE_COMPLETED" for t in trials)
    hparams = {json.dumps(t["hparams"], sort_keys=True) for t in trials}
    assert len(hparams) == 4, "random search must sample distinct hyperparameters"
    for t in trials:
        training = cluster.metrics(t["id"], "training")
        steps = [m["stepsCompleted"] for m in training]
        assert steps, f"trial {t['id']} reported no training metrics"
        assert steps == sorted(set(steps)), f"training steps must arrive once each, in order: {steps}"
        validation = cluster.metrics(t["id"], "validation")
        assert [m["stepsCompleted"] for m in validation] == [200]
        assert "validation_loss" in validation[0]["metrics"]["avgMetrics"]
        assert t["searcherMetricValue"] is not None
    ckpts = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    assert ckpts, "the example checkpoints at the end of its op"
    for c in ckpts:
        meta = cluster.data_dir / "checkpoints" / c["uuid"] / "metadata.json"
        assert meta.exists(), f"missing {meta}"
        assert json.loads(meta.read_text())["steps_completed"] == c["metadata"]["steps_completed"]
    workloads = cluster.request("GET", f"/api/v1/trials/{trials[0]['id']}/workloads")["workloads"]
    kinds = {next(iter(w)) for w in workloads}
    assert kinds == {"training", "validation", "checkpoint"}
    batches = [next(iter(w.values()))["totalBatches"] for w in workloads]
    assert batches == sorted(batches)


def test_trial_that_fails_once_resumes_from_checkpoint(cluster):
    cfg = write_config(FIXTURES / "flaky.yaml", "fail_once.yaml",
                       **{"hyperparameters.fail_once": True, "max_restarts": 2})
    exp_id = cluster.create(cfg, FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    (trial,) = cluster.trials(exp_id)
    assert trial["restarts"] == 1
    logs = cluster.det("trial", "logs", str(trial["id"])).stdout
    assert "flaky: resumed from" in logs, logs
    steps = [m["stepsCompleted"] for m in cluster.metrics(trial["id"], "training")]
    assert steps == sorted(set(steps)) and steps[-1] == 20


def test_trial_that_always_fails_errors_after_max_restarts(cluster):
    cfg = write_config(FIXTURES / "flaky.yaml", "always_fail.yaml",
                       **{"hyperparameters.always_fail": True, "max_restarts": 1})
    exp_id = cluster.create(cfg, FIXTURES)
    cluster.wait_state(exp_id, "STATE_ERROR", timeout=120)
    (trial,) = cluster.trials(exp_id)
    assert trial["state"] == "STATE_ERROR"
    # It ran twice: one restart (the failure that ended it is none), as Determined counts.
    assert trial["restarts"] == 1
    logs = cluster.det("trial", "logs", str(trial["id"])).stdout
    assert logs.count("exited with code 1") == 2, logs


def test_trial_output_comes_back_through_det_trial_logs(cluster):
    exp_id = cluster.create(FIXTURES / "flaky.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    (trial,) = cluster.trials(exp_id)
    out = cluster.det("trial", "logs", str(trial["id"])).stdout
    assert "flaky: checkpoint" in out
    assert " || " in out
    tail = cluster.det("trial", "logs", str(trial["id"]), "--tail", "1").stdout
    assert len(tail.strip().splitlines()) == 1


def test_create_follow_streams_first_trial(cluster):
    cmd = cluster.det("experiment", "create", str(FIXTURES / "flaky.yaml"), str(FIXTURES), "-f")
    out = cmd.stdout
    assert "Preparing files to send to master..." in out
    assert "Created experiment" in out
    assert "Following first trial with ID" in out
    assert "flaky: checkpoint" in out
    assert "Trial log stream ended" in out


def test_requests_without_token_get_401(cluster):
    status, body = cluster.request_status("GET", "/api/v1/experiments")
    assert status == 401
    assert body["error"]["reason"] == "Unauthenticated"
    status, body = cluster.request_status("GET", "/api/v1/experiments",
                                          headers={"Authorization": "Bearer nope"})
    assert status == 401
    status, _ = cluster.request_status("GET", "/api/v1/master")
    assert status == 200


def count_experiments(cluster) -> int:
    return cluster.request("GET", "/api/v1/experiments")["pagination"]["total"]


def test_malformed_config_is_rejected_and_stores_nothing(cluster):
    before = count_experiments(cluster)
    bad = pathlib.Path(tempfile.mkdtemp()) / "bad.yaml"
    bad.write_text("name: bad\nentrypoint: python3 x.py\nsearcher:\n  name: random\n"
                   "  metric: loss\n  max_length: {batches: 10}\nbogus_field: 1\n")
    proc = cluster.det("experiment", "create", str(bad), str(FIXTURES), check=False)
    assert proc.returncode != 0
    assert "max_trials" in proc.stderr and "bogus_field" in proc.stderr, proc.stderr
    notyaml = pathlib.Path(tempfile.mkdtemp()) / "notyaml.yaml"
    notyaml.write_text("searcher: [unclosed\n")
    proc = cluster.det("experiment", "create", str(notyaml), str(FIXTURES), check=False)
    assert proc.returncode != 0 and "line" in proc.stderr, proc.stderr
    assert count_experiments(cluster) == before


def test_oversized_context_is_rejected_and_stores_nothing(cluster):
    before = count_experiments(cluster)
    ctx = pathlib.Path(tempfile.mkdtemp(prefix="det-big-"))
    try:
        shutil.copy(FIXTURES / "flaky.py", ctx / "flaky.py")
        with open(ctx / "big.bin", "wb") as f:
            f.truncate(96 * 1024 * 1024)
        proc = cluster.det("experiment", "create", str(FIXTURES / "flaky.yaml"), str(ctx),
                           check=False)
        assert proc.returncode != 0
        assert "maximum allowed size" in proc.stderr, proc.stderr
        # The master enforces the limit itself too.
        import base64

        content = base64.b64encode(b"\0" * (95 * 1024 * 1024 + 1)).decode()
        status, body = cluster.request_status(
            "POST", "/api/v1/experiments",
            {"config": (FIXTURES / "flaky.yaml").read_text(),
             "modelDefinition": [{"path": "big.bin", "type": 48, "content": content}]},
            headers={"Authorization": f"Bearer {cluster.token()}"},
        )
        assert status == 400 and "maximum allowed size" in body["error"]["error"], body
    finally:
        shutil.rmtree(ctx, ignore_errors=True)
    assert count_experiments(cluster) == before


def test_detignore_excludes_files(cluster):
    ctx = pathlib.Path(tempfile.mkdtemp(prefix="det-ign-"))
    try:
        shutil.copy(FIXTURES / "flaky.py", ctx / "flaky.py")
        (ctx / "data").mkdir()
        (ctx / "data" / "huge.bin").write_bytes(b"x" * 1000)
        (ctx / "__pycache__").mkdir()
        (ctx / "__pycache__" / "x.pyc").write_bytes(b"x")
        (ctx / ".detignore").write_text("data/\n")
        exp_id = cluster.create(FIXTURES / "flaky.yaml", ctx, "--paused")
        exp = cluster.experiment(exp_id)
        assert exp["state"] == "STATE_PAUSED"
        trials = cluster.trials(exp_id)
        assert trials == []
        cluster.request("POST", f"/api/v1/experiments/{exp_id}/activate")
        cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
        (trial,) = cluster.trials(exp_id)
        import base64
        import io
        import tarfile

        tgz = cluster.request("GET", f"/api/v1/tasks/{trial['taskId']}/context_directory")["b64Tgz"]
        names = tarfile.open(fileobj=io.BytesIO(base64.b64decode(tgz))).getnames()
        assert "flaky.py" in names
        assert not any(n.startswith("data") or "__pycache__" in n for n in names), names
    finally:
        shutil.rmtree(ctx, ignore_errors=True)


def test_cli_lists_and_describes(cluster):
    # Its own completed experiment: the test must not depend on which tests ran before it.
    exp_id = cluster.create(FIXTURES / "flaky.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    out = cluster.det("experiment", "list").stdout
    assert "ID" in out and "State" in out
    row = [line for line in out.splitlines() if line.split("|")[0].strip() == str(exp_id)]
    assert len(row) == 1 and "COMPLETED" in row[0], out
    out = cluster.det("agent", "list").stdout
    assert "agent-1" in out
    out = cluster.det("master", "info").stdout
    assert "0.38.1" in out
    out = cluster.det("user", "whoami").stdout
    assert "determined" in out


def test_user_login_whoami_logout(cluster, tmp_path):
    import subprocess

    from cluster import BIN

    # A token cache of its own, so a failure half-way leaves no admin login behind for the
    # tests that share this session cluster.
    env = dict(cluster.env, XDG_CONFIG_HOME=str(tmp_path / "config"))

    def det(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([str(BIN / "det"), *args], input=stdin, text=True,
                              capture_output=True, env=env, timeout=60)

    proc = det("user", "login", "admin", stdin="\n")
    assert proc.returncode == 0, proc.stderr
    assert "admin" in det("user", "whoami").stdout
    assert det("user", "logout").returncode == 0
    # Without a cached token det falls back to the blank-password `determined` user.
    assert "determined" in det("user", "whoami").stdout
    proc = det("user", "login", "nobody", stdin="\n")
    assert proc.returncode != 0 and "invalid credentials" in proc.stderr, proc.stderr
