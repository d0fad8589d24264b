"""Trials in container images (docs/operations.md, "Containers"): an experiment whose
environment.image is not the built-in default runs through the agent's container runtime
(podman here; docker where an engine runs). The image is built locally (container_image.py): no
registry is reachable. Checks, from inside: bind mounts (read-only and read-write), environment
variables, DET_* variables, shm size; and from outside: logs, exit codes, kill, and the error
of an agent without a runtime."""

import json
import os
import pathlib
import re
from typing import Any, Dict

import pytest
import yaml

import container_image
from cluster import Cluster, wait_for

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "containers"


def config(image: str, rw_mount: pathlib.Path, **extra: Any) -> Dict[str, Any]:
    cfg: Dict[str, Any] = {
        "name": "in-a-container",
        "entrypoint": "python3 inspect.py",
        "searcher": {"name": "single", "metric": "loss", "max_length": {"batches": 1}},
        "max_restarts": 0,
        "environment": {
            "image": {"cpu": image, "cuda": image},
            "environment_variables": ["GREETING=hello from the config",
                                      f"RW_MOUNT={rw_mount}"],
        },
        "bind_mounts": container_image.bind_mounts() + [
            {"host_path": str(rw_mount), "container_path": str(rw_mount), "read_only": False,
             "propagation": "rprivate"}],
        "resources": {"shm_size": "96M"},
    }
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(cfg.get(k), dict):
            cfg[k].update(v)
        else:
            cfg[k] = v
    return cfg


def create(c: Cluster, tmp: pathlib.Path, cfg: Dict[str, Any]) -> int:
    path = tmp / f"exp-{len(list(tmp.glob('exp-*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return c.create(path, FIXTURE)


def trial_logs(c: Cluster, exp_id: int) -> str:
    (trial,) = c.trials(exp_id)
    return c.det("trial", "logs", str(trial["id"])).stdout


@pytest.fixture(scope="module")
def podman_cluster(tmp_path_factory):
    if container_image.podman() is None:
        pytest.skip("podman is not installed (Debian package podman): container tests skipped")
    c = Cluster(agents=1, slots=2)
    c.env["CONTAINERS_CONF"] = str(container_image.containers_conf(c.tmp))
    c.env["HOST_ONLY_VAR"] = "the agent's own environment"
    image = container_image.build(c.env)
    c.image = image
    try:
        c.up()
        yield c
    finally:
        c.down()
        container_image.remove(image, c.env)  # before cleanup removes its containers.conf
        c.cleanup()


def test_trial_runs_in_the_image(podman_cluster, tmp_path):
    c = podman_cluster
    rw = tmp_path / "rw"
    rw.mkdir()
    (rw / "input.txt").write_text("written on the host")
    exp_id = create(c, tmp_path, config(c.image, rw))
    c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    logs = trial_logs(c, exp_id)
    line = re.search(r"INSPECT (\{.*\})$", logs, re.M)
    assert line, logs
    seen = json.loads(line.group(1))
    (trial,) = c.trials(exp_id)

    # It ran in a container of this agent's runtime.
    assert seen["cgroup_container"], seen
    agent_log = (c.data_dir / "agent-1.log").read_text()
    assert re.search(r"runs in container det-\S+ \(podman\)", agent_log), agent_log[-3000:]
    # Environment: the config's variables and the DET_* ones, not the agent's own.
    assert seen["greeting"] == "hello from the config"
    assert seen["det_trial_id"] == str(trial["id"])
    assert seen["det_master"] == c.url
    assert seen["host_path_var"] is None
    # Bind mounts: read-write both ways, read-only refused.
    assert seen["input"] == "written on the host"
    assert (rw / "from-container.txt").read_text() == f"trial {trial['id']}\n"
    assert seen["usr_write"] in ("OSError", "PermissionError"), seen
    # shm_size: 96M.
    assert seen["shm_bytes"] == 96 * 1024 * 1024, seen
    # Both streams were shipped, and metrics reached the master.
    assert "to stderr" in logs
    assert c.metrics(trial["id"], "training"), "no training metrics"
    # --rm: nothing is left behind.
    assert container_image.containers_of(c.data_dir, c.env) == []


def test_exit_code_reaches_the_master(podman_cluster, tmp_path):
    c = podman_cluster
    rw = tmp_path / "rw"
    rw.mkdir()
    (rw / "input.txt").write_text("x")
    cfg = config(c.image, rw)
    cfg["environment"]["environment_variables"].append("EXIT_CODE=7")
    exp_id = create(c, tmp_path, cfg)
    c.wait_state(exp_id, "STATE_ERROR", timeout=180)
    logs = trial_logs(c, exp_id)
    assert re.search(r"exited with code 7", logs), logs


def test_kill_reaches_the_container(podman_cluster, tmp_path):
    c = podman_cluster
    rw = tmp_path / "rw"
    rw.mkdir()
    (rw / "input.txt").write_text("x")
    cfg = config(c.image, rw)
    cfg["environment"]["environment_variables"].append("SLEEP_FOREVER=1")
    exp_id = create(c, tmp_path, cfg)
    wait_for(lambda: (rw / "from-container.txt").exists(), 120, "the trial to start")
    assert len(container_image.containers_of(c.data_dir, c.env)) == 1
    c.det("experiment", "kill", str(exp_id))
    c.wait_state(exp_id, "STATE_CANCELED", timeout=120)
    wait_for(lambda: container_image.containers_of(c.data_dir, c.env) == [], 60,
             "the killed trial's container to be gone")


def test_missing_image_fails_with_the_runtimes_error(podman_cluster, tmp_path):
    c = podman_cluster
    rw = tmp_path / "rw"
    rw.mkdir()
    cfg = config("localhost/det-e2e-no-such-image:1", rw)
    exp_id = create(c, tmp_path, cfg)
    c.wait_state(exp_id, "STATE_ERROR", timeout=180)
    logs = trial_logs(c, exp_id)
    assert "det-e2e-no-such-image" in logs, logs


def test_agent_without_a_runtime_fails_clearly(tmp_path):
    """Needs no podman: the agent is told to use none."""
    c = Cluster(agents=1, slots=1)
    c.env["DET_AGENT_CONTAINER_RUNTIME"] = "none"
    try:
        c.up()
        rw = tmp_path / "rw"
        rw.mkdir()
        exp_id = create(c, tmp_path, config("localhost/some-image:1", rw))
        c.wait_state(exp_id, "STATE_ERROR", timeout=120)
        logs = trial_logs(c, exp_id)
        assert re.search(r"agent \S+ has no container runtime .* to run image "
                         r"localhost/some-image:1", logs), logs
    finally:
        c.cleanup()


def test_pause_preempts_the_trial_in_its_container(podman_cluster, tmp_path):
    c = podman_cluster
    rw = tmp_path / "rw"
    rw.mkdir()
    (rw / "input.txt").write_text("x")
    cfg = config(c.image, rw)
    cfg["environment"]["environment_variables"].append("SLEEP_FOREVER=1")
    exp_id = create(c, tmp_path, cfg)
    wait_for(lambda: (rw / "from-container.txt").exists(), 120, "the trial to start")
    c.det("experiment", "pause", str(exp_id))
    # The trial sees the preemption through the master and exits; its container goes with it.
    wait_for(lambda: container_image.containers_of(c.data_dir, c.env) == [], 120,
             "the paused trial's container to be gone")
    assert c.experiment(exp_id)["state"] == "STATE_PAUSED"
    c.det("experiment", "kill", str(exp_id))
    c.wait_state(exp_id, "STATE_CANCELED", timeout=120)
