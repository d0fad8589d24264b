"""End-to-end: the master's /api/v1 answers carry what Determined 0.38's generated client needs.

Determined's Python bindings construct each message with `from_json`, which indexes every
required field directly (a missing one is a KeyError traceback in `det`), and its requests send
every unset field as JSON null. The required-field lists below are those of the 0.38 bindings.
"""

import base64
import io
import json
import pathlib
import re
import tarfile
import threading
import urllib.request
from typing import Any, Dict, List

import pytest

from cluster import Cluster, brought_up, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

REQUIRED = {
    "GetMasterResponse": ["clusterId", "clusterName", "hasCustomLogo", "masterId",
                          "strictJobQueueControl", "version"],
    "Agent": ["id", "slotStats"],
    "SlotStats": ["brandStats", "typeStats"],
    "DeviceStats": ["disabled", "draining", "total"],
    "Container": ["id", "state"],
    "ResourcePool": [
        "agentDockerImage", "agentDockerNetwork", "agentDockerRuntime", "agentFluentImage",
        "auxContainerCapacity", "auxContainerCapacityPerAgent", "auxContainersRunning",
        "clusterName", "containerStartupScript", "defaultAuxPool", "defaultComputePool",
        "description", "details", "imageId", "instanceType", "location", "masterCertName",
        "masterUrl", "maxAgentStartingPeriod", "maxAgents", "maxIdleAgentPeriod", "minAgents",
        "name", "numAgents", "preemptible", "resourceManagerMetadata", "schedulerFittingPolicy",
        "schedulerType", "slotType", "slotsAvailable", "slotsUsed", "startupScript", "type",
    ],
    "ResourcePoolPrioritySchedulerDetail": ["defaultPriority", "preemption"],
    "User": ["active", "admin", "username"],
    "Workspace": ["archived", "errorMessage", "id", "immutable", "name", "numExperiments",
                  "numProjects", "pinned", "state", "userId", "username"],
    "Project": ["archived", "errorMessage", "id", "immutable", "key", "name", "notes",
                "numActiveExperiments", "numExperiments", "numRuns", "state", "userId",
                "username", "workspaceId"],
    "LogEntry": ["id", "level", "message", "timestamp"],
    "Experiment": ["archived", "config", "id", "jobId", "name", "numTrials", "originalConfig",
                   "projectId", "projectOwnerId", "searcherType", "startTime", "state",
                   "username"],
    "Job": ["allocatedSlots", "entityId", "isPreemptible", "jobId", "name", "requestedSlots",
            "resourcePool", "submissionTime", "type", "username", "workspaceId"],
    "JobSummary": ["jobsAhead", "state"],
    "Allocation": ["allocationId", "slots", "taskId"],
}

DEVICE_TYPES = {"TYPE_CPU", "TYPE_CUDA", "TYPE_ROCM"}
LOG_LEVELS = {"LOG_LEVEL_TRACE", "LOG_LEVEL_DEBUG", "LOG_LEVEL_INFO", "LOG_LEVEL_WARNING",
              "LOG_LEVEL_ERROR", "LOG_LEVEL_CRITICAL"}


def require(obj: Dict[str, Any], message: str) -> Dict[str, Any]:
    missing = [f for f in REQUIRED[message] if f not in obj or obj[f] is None]
    assert not missing, f"{message} lacks required {missing}: {json.dumps(obj)[:2000]}"
    return obj


def require_pagination(body: Dict[str, Any], total: int) -> None:
    p = body["pagination"]
    assert p["total"] == total and p["startIndex"] <= p["endIndex"] <= total, p


def slow_config(tmp_path: pathlib.Path) -> pathlib.Path:
    """flaky.yaml with 2 s per step: it holds its slot for the length of the test."""
    text = (FIXTURES / "flaky.yaml").read_text().replace("sleep_per_step: 0.0",
                                                           "sleep_per_step: 2.0")
    assert "sleep_per_step: 2.0" in text
    cfg = tmp_path / "slow.yaml"
    cfg.write_text(text)
    return cfg


@pytest.fixture(scope="module")
def cluster():
    """A cluster of this module's own: the assertions below count users, workspaces and agents
    exactly, which other files sharing the session cluster would add to."""
    with brought_up(Cluster(agents=1, slots=2)) as c:
        yield c


@pytest.fixture(scope="module")
def running(cluster, tmp_path_factory):
    """An experiment whose trial is running, killed afterwards."""
    cfg = slow_config(tmp_path_factory.mktemp("restcompat"))
    exp_id = cluster.create(cfg, FIXTURES)
    cluster.wait_state(exp_id, "STATE_RUNNING")
    wait_for(lambda: cluster.request("GET", "/api/v1/tasks")["allocationIdToSummary"], 60,
             "the trial's allocation")
    yield exp_id
    cluster.det("experiment", "kill", str(exp_id), check=False)


def test_master_info(cluster):
    info = require(cluster.request("GET", "/api/v1/master", auth=False), "GetMasterResponse")
    assert info["hasCustomLogo"] is False and info["strictJobQueueControl"] is False


def test_users(cluster):
    body = cluster.request("GET", "/api/v1/users")
    users = body["users"]
    assert [u["username"] for u in users] == ["admin", "determined"]
    for u in users:
        require(u, "User")
    require_pagination(body, 2)
    assert [u["username"] for u in cluster.request("GET", "/api/v1/users?admin=true")["users"]] \
        == ["admin"]
    admin_id = users[0]["id"]
    assert cluster.request("GET", f"/api/v1/users/{admin_id}")["user"]["username"] == "admin"
    by_name = cluster.request("GET", "/api/v1/users/determined/by-username")["user"]
    assert require(by_name, "User")["admin"] is False
    assert require(cluster.request("GET", "/api/v1/me")["user"], "User")["username"] == "determined"
    # Determined's name for it, asked by its web UI on every full page load.
    assert cluster.request("GET", "/api/v1/auth/user") == cluster.request("GET", "/api/v1/me")
    status, err = cluster.request_status(
        "GET", "/api/v1/users/nobody/by-username",
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 404 and "nobody" in err["error"]["error"], err


def test_workspaces_and_projects(cluster, running):
    body = cluster.request("GET", "/api/v1/workspaces")
    require_pagination(body, 1)
    (ws,) = body["workspaces"]
    require(ws, "Workspace")
    assert (ws["id"], ws["name"], ws["numProjects"]) == (1, "Uncategorized", 1)
    assert ws["state"] == "WORKSPACE_STATE_UNSPECIFIED"
    assert ws["numExperiments"] >= 1
    assert cluster.request("GET", "/api/v1/workspaces?name=Uncategorized")["workspaces"]
    assert cluster.request("GET", "/api/v1/workspaces?name=other")["workspaces"] == []
    assert require(cluster.request("GET", "/api/v1/workspaces/1")["workspace"], "Workspace")
    (proj,) = cluster.request("GET", "/api/v1/workspaces/1/projects")["projects"]
    require(proj, "Project")
    assert (proj["id"], proj["workspaceId"], proj["notes"]) == (1, 1, [])
    assert proj["numActiveExperiments"] >= 1 and proj["numRuns"] >= 1
    assert require(cluster.request("GET", "/api/v1/projects/1")["project"], "Project")["id"] == 1
    exps = cluster.request("GET", "/api/v1/projects/1/experiments")
    assert running in [require(e, "Experiment")["id"] for e in exps["experiments"]]
    assert all(e["projectId"] == 1 and e["workspaceId"] == 1 for e in exps["experiments"])
    in_project = cluster.request("GET", "/api/v1/experiments?projectId=1")["experiments"]
    assert running in [e["id"] for e in in_project]
    other = cluster.request("GET", "/api/v1/experiments?projectId=2")
    assert other["experiments"] == [] and other["pagination"]["total"] == 0
    for path in ("/api/v1/workspaces/2", "/api/v1/projects/2"):
        status, err = cluster.request_status(
            "GET", path, headers={"Authorization": f"Bearer {cluster.token()}"})
        assert status == 404, (path, status, err)


def test_agents_slots_and_tasks(cluster, running):
    (agent,) = cluster.request("GET", "/api/v1/agents")["agents"]
    require(agent, "Agent")
    stats = require(agent["slotStats"], "SlotStats")
    cpu = require(stats["typeStats"]["TYPE_CPU"], "DeviceStats")
    assert cpu["total"] == 2 and cpu["states"].get("STATE_RUNNING", 0) >= 1, stats
    for s in stats["brandStats"].values():
        require(s, "DeviceStats")
    assert require(cluster.request("GET", f"/api/v1/agents/{agent['id']}")["agent"], "Agent")

    slots = cluster.request("GET", f"/api/v1/agents/{agent['id']}/slots")["slots"]
    assert sorted(s["id"] for s in slots) == ["0", "1"]
    assert all(s["device"]["type"] in DEVICE_TYPES for s in slots)
    tasks = cluster.request("GET", "/api/v1/tasks")["allocationIdToSummary"]
    (trial,) = cluster.trials(running)
    # The session's cluster may run other tests' trials too: look at this one's allocation.
    ((alloc_id, task),) = [(a, t) for a, t in tasks.items() if t["taskId"] == trial["taskId"]]
    held = [s for s in slots if s["container"] and s["container"]["parent"] == alloc_id]
    assert len(held) == 1, slots
    container = require(held[0]["container"], "Container")
    assert agent["containers"][container["id"]]["id"] == container["id"]
    one = cluster.request("GET", f"/api/v1/agents/{agent['id']}/slots/{held[0]['id']}")["slot"]
    assert one == held[0]

    assert task["allocationId"] == alloc_id
    assert task["name"] == f"Trial {trial['id']} (Experiment {running})"
    assert task["slotsNeeded"] == 1 and task["resourcePool"] == "default"
    assert task["schedulerType"] == "priority" and task["priority"] == 42
    (res,) = task["resources"]
    assert list(res["agentDevices"]) == [agent["id"]]
    assert res["containerId"] == container["id"], "det slot list joins slots to tasks by it"
    devices = res["agentDevices"][agent["id"]]["devices"]
    assert [d["id"] for d in devices] == [int(held[0]["id"])]


def test_resource_pools(cluster):
    body = cluster.request("GET", "/api/v1/resource-pools")
    (pool,) = body["resourcePools"]
    require(pool, "ResourcePool")
    assert pool["slotType"] in DEVICE_TYPES and pool["type"] == "RESOURCE_POOL_TYPE_STATIC"
    assert pool["numAgents"] == 1 and pool["slotsAvailable"] == 2
    assert pool["masterUrl"] == cluster.url
    require(pool["details"]["priorityScheduler"], "ResourcePoolPrioritySchedulerDetail")
    assert set(pool["stats"]) >= {"queuedCount", "scheduledCount"}


def test_model_definition_download(cluster, running):
    b64 = cluster.request("GET", f"/api/v1/experiments/{running}/model_def")["b64Tgz"]
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(b64)), mode="r:gz") as tar:
        names = {pathlib.PurePosixPath(n).name for n in tar.getnames()}
    assert {"flaky.py", "flaky.yaml"} <= names, names
    status, _ = cluster.request_status(
        "GET", "/api/v1/experiments/999999/model_def",
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 404


def test_trial_log_retention_is_forever(cluster, running):
    trial = cluster.trials(running)[0]["id"]
    got = cluster.request("GET", f"/api/v1/trials/{trial}/remaining_log_retention_days")
    assert got == {"remainingDays": -1}, got  # Determined's web UI: "retained forever"
    status, _ = cluster.request_status(
        "GET", "/api/v1/trials/999999/remaining_log_retention_days",
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 404


def test_null_fields_mean_absent(cluster, running):
    """Determined's client sends every unset field of a request as null."""
    (job,) = [j["full"] for j in cluster.request("GET", "/api/v1/job-queues-v2")["jobs"]
              if j["full"]["entityId"] == str(running)]
    require(job, "Job")
    require(job["summary"], "JobSummary")
    update = {"jobId": job["jobId"], "priority": 30, "weight": None, "resourcePool": None,
              "aheadOf": None, "behindOf": None}
    assert cluster.request("POST", "/api/v1/job-queues", {"updates": [update]}) == {}
    jobs = cluster.request("GET", "/api/v1/job-queues-v2")["jobs"]
    assert [j["full"]["priority"] for j in jobs if j["full"]["jobId"] == job["jobId"]] == [30]
    patch = {"notes": "from a null-filled body", "description": None, "labels": None,
             "name": None}
    cluster.request("PATCH", f"/api/v1/experiments/{running}", patch)
    exp = cluster.experiment(running)
    assert exp["notes"] == "from a null-filled body" and exp["name"] == "flaky-fixture", exp


def read_log_lines(cluster, query: str) -> List[Dict[str, Any]]:
    text = cluster.request("GET", f"/api/v1/master/logs{query}", raw=True)
    return [json.loads(line)["result"]["logEntry"] for line in text.splitlines() if line.strip()]


def test_master_logs(cluster):
    entries = read_log_lines(cluster, "")
    assert entries, "the master logs at startup"
    for e in entries:
        require(e, "LogEntry")
        assert e["level"] in LOG_LEVELS, e
    assert any("agent" in e["message"] and "registered" in e["message"] for e in entries)
    ids = [e["id"] for e in entries]
    assert ids == sorted(ids)
    assert [e["id"] for e in read_log_lines(cluster, "?offset=-2")] == ids[-2:]
    assert [e["id"] for e in read_log_lines(cluster, "?limit=1")] == ids[:1]


def test_master_logs_follow_streams_new_lines(cluster, tmp_path):
    req = urllib.request.Request(cluster.url + "/api/v1/master/logs?follow=true&offset=-1")
    req.add_header("Authorization", f"Bearer {cluster.token()}")
    resp = urllib.request.urlopen(req, timeout=120)
    seen: List[str] = []

    def reader():
        try:
            for raw in resp:
                line = raw.decode().strip()
                if line:
                    seen.append(json.loads(line)["result"]["logEntry"]["message"])
        except (OSError, ValueError, AttributeError):
            pass  # the test closed the stream under the reader

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    wait_for(lambda: seen, 30, "the last kept line")
    exp_id = cluster.create(FIXTURES / "flaky.yaml", FIXTURES, "--paused")
    wait_for(lambda: any(re.search(rf"created experiment {exp_id}\b", m) for m in seen), 30,
             f"'created experiment {exp_id}' on the followed stream")
    resp.close()
    cluster.det("experiment", "kill", str(exp_id), check=False)


def test_master_config_redacts_secrets(tmp_path):
    master_yaml = tmp_path / "master.yaml"
    master_yaml.write_text(
        "cluster_name: restcompat\n"
        "checkpoint_storage:\n"
        "  type: s3\n"
        "  bucket: ckpts\n"
        "  access_key: AKIAEXAMPLE\n"
        "  secret_key: do-not-show-me\n"
        "  endpoint_url: http://127.0.0.1:9\n"
    )
    c = Cluster(agents=1, slots=1)
    try:
        c.det("deploy", "local", "cluster-up", "--master-port", str(c.port), "--agents", "1",
              "--slots-per-agent", "1", "--data-dir", str(c.data_dir), "--master-config-path",
              str(master_yaml), timeout=120)
        # The master config is for admins only.
        c._token = c.request("POST", "/api/v1/auth/login",
                             {"username": "admin", "password": "", "isHashed": True},
                             auth=False)["token"]
        text = c.request("GET", "/api/v1/master/config", raw=True)
        assert "do-not-show-me" not in text and "AKIAEXAMPLE" not in text
        cfg = json.loads(text)["config"]
        assert cfg["cluster_name"] == "restcompat"
        storage = cfg["checkpoint_storage"]
        assert storage["bucket"] == "ckpts" and storage["secret_key"] == "********", storage
        assert cfg["resource_pools"][0]["pool_name"] == "default"
        assert cfg["port"] == c.port
    finally:
        c.cleanup()
