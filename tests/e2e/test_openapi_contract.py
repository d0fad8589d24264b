"""End-to-end: the master's answers, and the requests of `det` and of the Python SDK, hold to
the REST contract api/openapi.yaml (checked by api/contract_check.py).

One cluster (this file's own) with real data: an experiment that ran to completion with
checkpoints, one still running (jobs, tasks, containers), a model with a version, a template, a
workspace with a project, a user. Every GET operation of the document is called; the main
writes too. A failure lists each broken answer as "METHOD /path -> STATUS: $.json.path: what
(rule)".
"""

import base64
import json
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

from cluster import BIN, PYTHON, REPO, Cluster, brought_up, wait_for
from contract_proxy import RecordingProxy

sys.path.insert(0, str(REPO / "api"))

from contract_check import Contract, Exchange, check_exchanges, format_problems  # noqa: E402

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class ContractClient:
    """Calls the master directly and checks every request and answer against the contract."""

    def __init__(self, cluster: Cluster, contract: Contract) -> None:
        self.cluster = cluster
        self.contract = contract
        self.problems: List[str] = []
        self.used: Set[Tuple[str, str]] = set()

    def call(self, method: str, path: str, body: Any = None, expect: Optional[int] = 200,
             headers: Optional[Dict[str, str]] = None, auth: bool = True,
             bad_request: bool = False) -> Any:
        """`bad_request`: a request that breaks the contract on purpose (only its answer is
        checked)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.cluster.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", f"Bearer {self.cluster.token()}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with _OPENER.open(req, timeout=120) as resp:
                status, ctype, raw = resp.status, resp.headers.get("Content-Type", ""), resp.read()
        except urllib.error.HTTPError as e:
            status, ctype, raw = e.code, e.headers.get("Content-Type", ""), e.read()
        text = raw.decode(errors="replace") if ctype.startswith(
            ("application/json", "application/x-ndjson", "text/")) else ""
        if bad_request:
            self.problems += self.contract.check_response(method, path, status, ctype, text)
        else:
            problems, used = check_exchanges(
                self.contract, [Exchange(method, path, body, status, ctype, text)])
            self.problems += problems
            self.used |= used
        if expect is not None:
            assert status == expect, f"{method} {path}: {status} (wanted {expect}): {text[:500]}"
        if ctype.startswith("application/json") and text:
            return json.loads(text)
        if ctype.startswith("application/x-ndjson"):
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return raw

    def assert_clean(self) -> None:
        assert not self.problems, (
            f"{len(self.problems)} answers break api/openapi.yaml:\n"
            + format_problems(self.problems))


@pytest.fixture(scope="module")
def contract() -> Contract:
    return Contract()


@pytest.fixture(scope="module")
def cluster():
    """A cluster for this file alone: its tests create users, workspaces, models and templates
    that tests of the shared cluster must not see."""
    with brought_up(Cluster(agents=1, slots=2)) as c:
        yield c


@pytest.fixture(scope="module")
def world(cluster, tmp_path_factory) -> Dict[str, Any]:
    """Data behind every route: a finished experiment with checkpoints, a running one, a model
    version, a template, a second workspace with a project."""
    tmp = tmp_path_factory.mktemp("contract")
    done = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES)
    slow = tmp / "slow.yaml"
    text = (FIXTURES / "flaky.yaml").read_text()
    # 20 steps of 5 s: it runs until the module's tests end (then it is killed).
    text = text.replace("sleep_per_step: 0.0", "sleep_per_step: 5.0")
    text = text.replace("name: flaky-fixture", "name: contract-running")
    slow.write_text(text)
    running = cluster.create(slow, FIXTURES)
    cluster.wait_state(done, "STATE_COMPLETED")
    cluster.wait_state(running, "STATE_RUNNING")
    (trial,) = cluster.trials(done)
    (running_trial,) = cluster.trials(running)

    def kept_by_gc():
        ckpts = cluster.request("GET", f"/api/v1/experiments/{done}/checkpoints")["checkpoints"]
        kept = sorted((c["metadata"]["steps_completed"], c["uuid"]) for c in ckpts
                      if c["state"] == "STATE_COMPLETED")
        return kept if [s for s, _ in kept] == [8, 9, 10] else None

    # checkpoints.yaml keeps the last three after GC; wait for it, so the files stay.
    completed = [u for _, u in wait_for(kept_by_gc, 60, "checkpoint GC to keep steps 8, 9, 10")]
    tag = uuid.uuid4().hex[:8]
    w = {
        "done": done, "running": running, "trial": trial["id"],
        "running_trial": running_trial["id"], "checkpoint": completed[0], "tag": tag,
        "model": f"contract-model-{tag}", "template": f"contract-template-{tag}",
    }
    cluster.request("POST", "/api/v1/models", {"name": w["model"], "labels": ["contract"],
                                               "metadata": {"k": 1}})
    cluster.request("POST", f"/api/v1/models/{w['model']}/versions",
                    {"checkpointUuid": w["checkpoint"], "name": "v1"})
    cluster.request("POST", f"/api/v1/templates/{w['template']}",
                    {"name": w["template"], "config": {"description": "from a template"}})
    ws = cluster.request("POST", "/api/v1/workspaces", {"name": f"contract-ws-{tag}"})["workspace"]
    project = cluster.request("POST", f"/api/v1/workspaces/{ws['id']}/projects",
                              {"name": f"contract-project-{tag}"})["project"]
    w["workspace"], w["project"] = ws["id"], project["id"]
    # The running trial's allocation, once its process group started.
    tasks = wait_for(
        lambda: [(a, t) for a, t in cluster.request("GET", "/api/v1/tasks")[
            "allocationIdToSummary"].items()
            if t["taskId"] == running_trial["taskId"] and t.get("resources")], 60,
        "the running trial's allocation")
    alloc_id, task = tasks[0]
    w["allocation"], w["resources"] = alloc_id, task["resources"][0]["resourcesId"]
    (agent,) = [a for a in cluster.request("GET", "/api/v1/agents")["agents"] if a["connected"]]
    w["agent"] = agent["id"]
    yield w
    cluster.det("experiment", "kill", str(running), check=False)


def test_every_get_answers_per_contract(cluster, contract, world):
    c = ContractClient(cluster, contract)
    w = world
    done, trial, ck, model = w["done"], w["trial"], w["checkpoint"], w["model"]
    running, rt = w["running"], w["running_trial"]
    gets = [
        "/info", "/api/v1/master", "/api/v1/master/logs?limit=20",
        "/api/v1/master/logs?offset=-5", "/api/v1/me", "/api/v1/auth/user", "/api/v1/users",
        "/api/v1/users?admin=true&limit=1", "/api/v1/users/1", "/api/v1/users/determined/by-username",
        "/api/v1/users?sortBy=SORT_BY_USER_NAME&orderBy=ORDER_BY_DESC",
        "/api/v1/agents", "/api/v1/agents?sortBy=SORT_BY_TIME&orderBy=ORDER_BY_DESC&limit=1",
        "/api/v1/agents?sortBy=1&offset=0", f"/api/v1/agents/{w['agent']}",
        f"/api/v1/agents/{w['agent']}/slots",
        f"/api/v1/agents/{w['agent']}/slots/0",
        "/api/v1/resource-pools", "/api/v1/job-queues-v2", "/api/v1/job-queues-v2?orderBy=ORDER_BY_DESC",
        "/api/v1/tasks",
        "/api/v1/experiments", "/api/v1/experiments?limit=1&offset=1&sortBy=SORT_BY_NAME",
        "/api/v1/experiments?sortBy=SORT_BY_CHECKPOINT_COUNT&orderBy=ORDER_BY_DESC",
        f"/api/v1/experiments?states=STATE_COMPLETED&experimentIdFilter.gte={done}",
        f"/api/v1/experiments/{done}", f"/api/v1/experiments/{running}",
        f"/api/v1/experiments/{done}/trials", f"/api/v1/experiments/{running}/trials",
        f"/api/v1/experiments/{done}/trials?sortBy=SORT_BY_BEST_VALIDATION_METRIC"
        "&orderBy=ORDER_BY_DESC&states=STATE_COMPLETED",
        f"/api/v1/experiments/{done}/file_tree",
        f"/api/v1/experiments/{done}/checkpoints",
        f"/api/v1/experiments/{done}/checkpoints?sortByAttr=SORT_BY_SEARCHER_METRIC&limit=2",
        f"/api/v1/experiments/{done}/searcher/best_searcher_validation_metric",
        f"/api/v1/experiments/{done}/validation-history",
        f"/api/v1/experiments/{done}/model_def",
        f"/api/v1/tasks/{w['allocation'].rsplit('.', 1)[0]}/context_directory",
        f"/api/v1/trials/{trial}", f"/api/v1/trials/{trial}/remaining_log_retention_days",
        f"/api/v1/trials/{rt}", f"/api/v1/trials/{trial}/checkpoints",
        f"/api/v1/trials/{trial}/checkpoints?sortByMetric=x&orderBy=ORDER_BY_ASC"
        "&states=STATE_COMPLETED",
        f"/api/v1/trials/{trial}/workloads", f"/api/v1/trials/{trial}/workloads?includeBatchMetrics=true",
        f"/api/v1/trials/{trial}/metrics", f"/api/v1/trials/{trial}/metrics?group=validation",
        f"/api/v1/trials/metrics/trial_metrics?trialIds={trial}&group=training",
        f"/api/v1/trials/metrics/training_metrics?trialIds={trial}",
        f"/api/v1/trials/metrics/validation_metrics?trialIds={trial}&trialIds={rt}",
        f"/api/v1/trials/time-series?trialIds={trial}&trialIds={rt}&maxDatapoints=4"
        "&metricNames=loss&group=training",
        f"/api/v1/trials/time-series?trialIds={trial}&metricIds=validation.x&startBatches=2",
        f"/api/v1/trials/{trial}/summarize?metricNames=x&metricType=METRIC_TYPE_VALIDATION"
        "&maxDatapoints=3"
        "&scale=SCALE_LOG",
        f"/api/v1/trials/{trial}/summarize?metricNames=loss&endBatches=5",
        f"/api/v1/trials/{trial}/logs", f"/api/v1/trials/{trial}/logs?limit=3&orderBy=ORDER_BY_DESC",
        f"/api/v1/trials/{trial}/logs?levels=LOG_LEVEL_INFO&sources=master",
        f"/api/v1/trials/{trial}/searcher/operation?timeoutSeconds=0",
        f"/api/v1/trials/{rt}/searcher/operation?timeoutSeconds=0",
        f"/api/v1/runs/{trial}/metadata",
        f"/api/v1/trials/{trial}/profiler/available_series",
        f"/api/v1/trials/{trial}/profiler/metrics?labels.name=cpu_util_simple"
        "&labels.metricType=PROFILER_METRIC_TYPE_SYSTEM",
        f"/api/v1/allocations/{w['allocation']}/signals/preemption?timeoutSeconds=0",
        f"/api/v1/allocations/{w['allocation']}/resources/{w['resources']}/rendezvous"
        "?timeoutSeconds=5",
        f"/api/v1/checkpoints/{ck}", f"/api/v1/checkpoints/{ck}/metrics",
        "/api/v1/workspaces", "/api/v1/workspaces?sortBy=SORT_BY_NAME&pinned=false",
        "/api/v1/workspaces/1", f"/api/v1/workspaces/{w['workspace']}",
        "/api/v1/workspaces/1/projects", f"/api/v1/workspaces/{w['workspace']}/projects",
        "/api/v1/workspaces/1/projects?sortBy=SORT_BY_NAME&orderBy=ORDER_BY_ASC",
        "/api/v1/projects/1", f"/api/v1/projects/{w['project']}", "/api/v1/projects/1/experiments",
        "/api/v1/models", "/api/v1/models?labels=contract&sortBy=SORT_BY_NAME", "/api/v1/model/labels",
        f"/api/v1/models/{model}", f"/api/v1/models/{model}/versions",
        f"/api/v1/models/{model}/versions/1", f"/api/v1/models/{model}/versions/1/metrics",
        "/api/v1/templates", f"/api/v1/templates?name={w['template']}",
        "/api/v1/templates?sortBy=SORT_BY_NAME&orderBy=ORDER_BY_DESC",
        f"/api/v1/templates/{w['template']}",
        "/api/v1/job-queues/stats", "/api/v1/job-queues/stats?resourcePools=default",
        "/api/v1/tasks/count", "/api/v1/users/setting", "/api/v1/resource-pools?unbound=true",
        "/api/v1/resource-pools/default/workspace-bindings",
        f"/api/v1/workspaces/{w['workspace']}/available-resource-pools",
        f"/api/v1/trials/{trial}/logs/fields",
        f"/api/v1/tasks/{w['allocation'].rsplit('.', 1)[0]}/logs/fields",
        "/api/v1/resources/allocation/aggregated?startDate=2024-01-01&endDate=2024-01-02"
        "&period=RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY",
        "/resources/allocation/allocations-csv?timestamp_after=2024-01-01T00:00:00Z"
        "&timestamp_before=2030-01-01T00:00:00Z",
    ]
    answers = {path: c.call("GET", path) for path in gets}
    # The master config is for admins only (403 for the default non-admin user).
    admin = c.call("POST", "/api/v1/auth/login",
                   {"username": "admin", "password": "", "isHashed": True}, auth=False)["token"]
    c.call("GET", "/api/v1/master/config", headers={"Authorization": f"Bearer {admin}"},
           auth=False)
    c.call("GET", "/api/v1/master/config", expect=403)
    # The cluster message (admins): none, then one set, read back and cleared.
    as_admin = {"Authorization": f"Bearer {admin}"}
    assert c.call("GET", "/api/v1/master/cluster_message", headers=as_admin,
                  auth=False)["clusterMessage"] is None
    c.call("PUT", "/api/v1/master/cluster_message", {"message": "contract", "duration": "1h"},
           headers=as_admin, auth=False)
    shown = c.call("GET", "/api/v1/master/cluster_message", headers=as_admin, auth=False)
    assert shown["clusterMessage"]["message"] == "contract", shown
    assert c.call("GET", "/info", auth=False)["clusterMessage"]["message"] == "contract"
    c.call("DELETE", "/api/v1/master/cluster_message", headers=as_admin, auth=False)
    c.call("GET", "/api/v1/master/cluster_message", expect=403)
    # Webhooks: the global one an admin registers, seen by every user.
    hook = c.call("POST", "/api/v1/webhooks",
                  {"url": "http://127.0.0.1:9/contract", "webhookType": "WEBHOOK_TYPE_DEFAULT",
                   "triggers": [{"triggerType": "TRIGGER_TYPE_EXPERIMENT_STATE_CHANGE",
                                 "condition": {"state": "COMPLETED"}}]},
                  headers=as_admin, auth=False)["webhook"]
    assert hook["id"] in [w["id"] for w in c.call("GET", "/api/v1/webhooks")["webhooks"]]
    c.call("PATCH", f"/api/v1/webhooks/{hook['id']}", {"url": "http://127.0.0.1:9/moved"},
           headers=as_admin, auth=False)
    c.call("DELETE", f"/api/v1/webhooks/{hook['id']}", headers=as_admin, auth=False)
    # The agent command poll takes the agent's own credential (cluster-up's secret and the key
    # the agent keeps in its data dir), not a user's token.
    agent_credential = {
        "X-Det-Agent-Secret": (cluster.data_dir / "agent_token").read_text().strip(),
        "X-Det-Agent-Key": (cluster.data_dir / w["agent"] / "agent.key").read_text().strip(),
    }
    c.call("GET", f"/agents/{w['agent']}/commands?after=0&timeoutSeconds=0",
           headers=agent_credential, auth=False)
    # The routes the merged branches added answer real data, not only well-formed JSON.
    (listed,) = [e for e in answers[
        f"/api/v1/experiments?states=STATE_COMPLETED&experimentIdFilter.gte={done}"][
        "experiments"] if e["id"] == done]
    assert listed["checkpointCount"] == 3 and int(listed["checkpointSize"]) > 0, listed
    assert listed["bestTrialId"] == trial and listed["bestTrialSearcherMetric"] is not None
    tree = answers[f"/api/v1/experiments/{done}/file_tree"]["files"]
    assert "checkpoints.py" in [f["name"] for f in tree if not f["isDir"]], tree
    series = answers[f"/api/v1/trials/time-series?trialIds={trial}&trialIds={rt}"
                     "&maxDatapoints=4&metricNames=loss&group=training"]["trials"]
    assert [t["trial"]["id"] for t in series] == sorted([trial, rt]), series
    done_series = next(t for t in series if t["trial"]["id"] == trial)["metrics"]
    assert [(m["group"], len(m["data"])) for m in done_series] == [("training", 4)], done_series
    summary = answers[f"/api/v1/trials/{trial}/summarize?metricNames=x"
                      "&metricType=METRIC_TYPE_VALIDATION&maxDatapoints=3&scale=SCALE_LOG"]
    assert summary["trial"]["id"] == trial
    assert [(m["type"], len(m["data"])) for m in summary["metrics"]] == [
        ("METRIC_TYPE_VALIDATION", 3)], summary
    paged = answers["/api/v1/agents?sortBy=SORT_BY_TIME&orderBy=ORDER_BY_DESC&limit=1"]
    assert len(paged["agents"]) == 1 and paged["pagination"]["limit"] == 1, paged
    # Outside /api/v1: the checkpoint archive, the web UI (if built) and its redirect.
    archive = c.call("GET", f"/checkpoints/{ck}", headers={"Accept": "application/gzip"})
    assert archive[:2] == b"\x1f\x8b", "not a gzip stream"
    c.call("GET", "/", expect=302, auth=False)
    c.call("GET", "/det/experiments", expect=None, auth=False)
    c.call("GET", "/det/assets/no-such-file.js", expect=404, auth=False)
    # Errors have the error shape: unknown ids, a bad parameter, no token.
    c.call("GET", "/api/v1/experiments/999999", expect=404)
    # The rung view is for adaptive searches only (a 400 naming the searcher).
    c.call("GET", f"/api/v1/experiments/{done}/searcher/rungs", expect=400)
    c.call("GET", "/api/v1/trials/999999", expect=404)
    c.call("GET", "/api/v1/checkpoints/00000000-0000-4000-8000-000000000000", expect=404)
    # Not a uuid at all: refused before any look-up (issue #32).
    c.call("GET", "/api/v1/checkpoints/no-such-uuid", expect=400, bad_request=True)
    c.call("GET", "/api/v1/experiments?limit=x", expect=400, bad_request=True)
    c.call("GET", "/api/v1/agents?sortBy=SORT_BY_NAME", expect=400, bad_request=True)
    c.call("GET", f"/api/v1/trials/time-series?trialIds={trial}&timeSeriesFilter.name=x",
           expect=400, bad_request=True)
    c.call("GET", "/api/v1/experiments/999999/file_tree", expect=404)
    # Commands, notebooks, shells and TensorBoards (tests/e2e/test_ntsc.py runs real ones):
    # the lists answer per contract, unknown ids have the error shape.
    for kind in ("commands", "notebooks", "shells", "tensorboards"):
        c.call("GET", f"/api/v1/{kind}")
        c.call("GET", f"/api/v1/{kind}/no-such-task", expect=404)
    c.call("GET", "/api/v1/tasks/no-such-task", expect=404)
    c.call("GET", "/api/v1/tasks/no-such-task/logs", expect=404)
    c.call("GET", "/proxy/no-such-task/", expect=404)
    c.call("GET", "/api/v1/experiments", expect=401, auth=False)
    c.assert_clean()

    gets_in_doc = {(m, t) for m, t in ((op.method, op.template) for op in contract.operations)
                   if m == "GET"}
    missed = sorted(gets_in_doc - c.used)
    assert not missed, f"GET operations of api/openapi.yaml this test does not call: {missed}"


def test_main_writes_answer_per_contract(cluster, contract, world):
    c = ContractClient(cluster, contract)
    w = world
    done, tag, model, template = w["done"], w["tag"], w["model"], w["template"]

    # Auth and users.
    login = c.call("POST", "/api/v1/auth/login",
                   {"username": "determined", "password": "", "isHashed": True}, auth=False)
    c.call("POST", "/api/v1/auth/logout", headers={"Authorization": f"Bearer {login['token']}"},
           auth=False)
    admin = c.call("POST", "/api/v1/auth/login",
                   {"username": "admin", "password": "", "isHashed": True}, auth=False)["token"]
    as_admin = {"Authorization": f"Bearer {admin}"}
    user = c.call("POST", "/api/v1/users",
                  {"user": {"username": f"contract-{tag}", "active": True}, "password": "pw1"},
                  headers=as_admin, auth=False)["user"]
    c.call("PATCH", f"/api/v1/users/{user['id']}", {"displayName": "Contract User"},
           headers=as_admin, auth=False)
    c.call("POST", f"/api/v1/users/{user['id']}/password", {"password": "pw2"},
           headers=as_admin, auth=False)

    # Agents and slots: disable (draining, so the running trial stays) and enable again, on a
    # slot no container holds.
    agent = w["agent"]
    disabled = c.call("POST", f"/api/v1/agents/{agent}/disable", {"agentId": agent, "drain": True},
                      headers=as_admin, auth=False)["agent"]
    assert (disabled["enabled"], disabled["draining"]) == (False, True), disabled
    c.call("POST", f"/api/v1/agents/{agent}/enable", headers=as_admin, auth=False)
    assert c.call("GET", f"/api/v1/agents/{agent}")["agent"]["enabled"] is True
    slots = c.call("GET", f"/api/v1/agents/{agent}/slots")["slots"]
    free = next(s["id"] for s in slots if s.get("container") is None)
    slot = c.call("POST", f"/api/v1/agents/{agent}/slots/{free}/disable",
                  {"agentId": agent, "slotId": free}, headers=as_admin, auth=False)["slot"]
    assert slot["enabled"] is False, slot
    slot = c.call("POST", f"/api/v1/agents/{agent}/slots/{free}/enable", headers=as_admin,
                  auth=False)["slot"]
    assert slot["enabled"] is True, slot
    c.call("POST", f"/api/v1/agents/{agent}/enable", expect=403)  # not an admin

    # The experiment's files.
    got = c.call("POST", f"/api/v1/experiments/{done}/file",
                 {"experimentId": done, "path": "checkpoints.py"})["file"]
    assert base64.b64decode(got) == (FIXTURES / "checkpoints.py").read_bytes()
    c.call("POST", f"/api/v1/experiments/{done}/file", {"path": "../etc/passwd"}, expect=400)
    c.call("POST", f"/api/v1/experiments/{done}/file", {"path": "no-such.py"}, expect=404)

    # Experiments.
    c.call("PATCH", f"/api/v1/experiments/{done}",
           {"id": done, "notes": "checked", "description": "contract"})
    c.call("PUT", f"/api/v1/experiments/{done}/labels/contract")
    c.call("DELETE", f"/api/v1/experiments/{done}/labels/contract")
    c.call("POST", f"/api/v1/experiments/{done}/archive", {})
    c.call("POST", f"/api/v1/experiments/{done}/unarchive", {})
    c.call("POST", f"/api/v1/experiments/{done}/move", {"destinationProjectId": w["project"]})
    c.call("POST", "/api/v1/experiments/move",
           {"destinationProjectId": 1, "experimentIds": [done]})
    c.call("POST", "/api/v1/experiments",
           {"config": (FIXTURES / "checkpoints.yaml").read_text(), "modelDefinition": [],
            "validateOnly": True})
    c.call("POST", f"/api/v1/experiments/{done}/activate", {}, expect=400)

    # Jobs: move the running job's priority.
    jobs = c.call("GET", "/api/v1/job-queues-v2")["jobs"]
    job_id = next(j["full"]["jobId"] for j in jobs
                  if j.get("full", {}).get("entityId") == str(w["running"]))
    c.call("POST", "/api/v1/job-queues", {"updates": [{"jobId": job_id, "priority": 40}]})

    # Trials and checkpoints.
    c.call("POST", f"/api/v1/runs/{w['trial']}/metadata", {"metadata": {"contract": {"ok": True}}})
    md = c.call("GET", f"/api/v1/checkpoints/{w['checkpoint']}")["checkpoint"]["metadata"]
    c.call("POST", f"/api/v1/checkpoints/{w['checkpoint']}/metadata",
           {"checkpoint": {"uuid": w["checkpoint"], "metadata": dict(md, contract=1)}})
    c.call("POST", "/api/v1/trial-source-info",
           {"trialSourceInfo": {"trialId": w["trial"], "checkpointUuid": w["checkpoint"],
                                "trialSourceInfoType": "TRIAL_SOURCE_INFO_TYPE_INFERENCE"}})
    c.call("POST", "/api/v1/checkpoints/rm", {"checkpointUuids": [w["checkpoint"]]})

    # Workspaces and projects.
    ws = c.call("POST", "/api/v1/workspaces", {"name": f"contract-ws2-{tag}"})["workspace"]
    c.call("PATCH", f"/api/v1/workspaces/{ws['id']}", {"name": f"contract-ws3-{tag}"})
    for action in ("pin", "unpin", "archive", "unarchive"):
        c.call("POST", f"/api/v1/workspaces/{ws['id']}/{action}", {})
    p = c.call("POST", f"/api/v1/workspaces/{ws['id']}/projects",
               {"name": "p", "description": "d"})["project"]
    c.call("PATCH", f"/api/v1/projects/{p['id']}", {"description": "e"})
    c.call("POST", f"/api/v1/projects/{p['id']}/archive", {})
    c.call("POST", f"/api/v1/projects/{p['id']}/unarchive", {})
    c.call("POST", f"/api/v1/projects/{p['id']}/move", {"destinationWorkspaceId": w["workspace"]})
    c.call("DELETE", f"/api/v1/projects/{p['id']}")
    c.call("DELETE", f"/api/v1/workspaces/{ws['id']}")

    # Model registry.
    m2 = f"contract-model2-{tag}"
    c.call("POST", "/api/v1/models", {"name": m2, "description": "d", "metadata": {"a": [1]}})
    c.call("PATCH", f"/api/v1/models/{m2}", {"model": {"description": "e", "labels": ["x"]}})
    c.call("POST", f"/api/v1/models/{m2}/versions",
           {"checkpointUuid": w["checkpoint"], "name": "first", "labels": ["a"]})
    c.call("PATCH", f"/api/v1/models/{m2}/versions/1", {"modelVersion": {"comment": "c"}})
    c.call("POST", f"/api/v1/models/{m2}/archive", {})
    c.call("POST", f"/api/v1/models/{m2}/unarchive", {})
    c.call("POST", f"/api/v1/models/{m2}/move", {"destinationWorkspaceId": w["workspace"]})
    c.call("DELETE", f"/api/v1/models/{m2}/versions/1")
    c.call("DELETE", f"/api/v1/models/{m2}")
    c.call("GET", f"/api/v1/models/{model}")

    # Templates.
    t2 = f"{template}-2"
    c.call("PUT", f"/api/v1/templates/{t2}", {"name": t2, "config": {"max_restarts": 2}})
    c.call("PATCH", f"/api/v1/templates/{t2}", {"max_restarts": 3})
    c.call("PATCH", "/api/v1/template/rename", {"oldName": t2, "newName": f"{t2}-renamed"})
    c.call("DELETE", f"/api/v1/templates/{t2}-renamed")
    c.call("POST", f"/api/v1/templates/{template}", {"name": template, "config": {}}, expect=409)

    # Continue the finished experiment (it runs again, then completes).
    c.call("POST", f"/api/v1/experiments/{done}/continue", {"id": done, "overrideConfig": "{}"})
    cluster.wait_state(done, "STATE_COMPLETED")
    c.assert_clean()


def test_det_cli_requests_follow_contract(cluster, contract, world, tmp_path):
    """Every request `det` makes, and every answer it gets, through a recording proxy."""
    proxy = RecordingProxy(cluster.url).start()
    w = world
    try:
        env = dict(cluster.env, DET_MASTER=proxy.url, XDG_CONFIG_HOME=str(tmp_path / "config"))

        def det(*args: str) -> str:
            proc = subprocess.run([str(BIN / "det"), *args], env=env, capture_output=True,
                                  text=True, timeout=300)
            assert proc.returncode == 0, f"det {' '.join(args)}: {proc.stdout}{proc.stderr}"
            return proc.stdout

        det("user", "login", "determined")
        det("user", "whoami")
        det("master", "info")
        det("agent", "list")
        det("experiment", "list", "--all")
        det("experiment", "describe", str(w["done"]))
        det("experiment", "list-trials", str(w["done"]))
        det("experiment", "list-checkpoints", str(w["done"]))
        det("experiment", "label", "add", str(w["done"]), "cli")
        det("experiment", "label", "remove", str(w["done"]), "cli")
        det("trial", "describe", str(w["trial"]))
        det("trial", "logs", str(w["trial"]))
        det("checkpoint", "list", str(w["done"]))
        det("job", "list")
        det("model", "list")
        det("model", "describe", w["model"])
        det("template", "list")
        det("workspace", "list")
        det("project", "list", "Uncategorized")
        det("checkpoint", "describe", w["checkpoint"])
        det("checkpoint", "add-metadata", w["checkpoint"], "cli=1")
        det("checkpoint", "remove-metadata", w["checkpoint"], "cli")
        det("checkpoint", "download", w["checkpoint"], "--mode", "master", "-o",
            str(tmp_path / "ckpt"))
        tag = w["tag"]
        det("model", "create", f"cli-model-{tag}", "--description", "from det")
        det("model", "register-version", f"cli-model-{tag}", w["checkpoint"])
        det("model", "list-versions", f"cli-model-{tag}")
        template = tmp_path / "template.yaml"
        template.write_text("description: from a det template\n")
        det("template", "create", f"cli-template-{tag}", str(template))
        det("template", "describe", f"cli-template-{tag}")
        det("workspace", "create", f"cli-ws-{tag}")
        det("project", "create", f"cli-ws-{tag}", f"cli-project-{tag}", "--description", "d")
        det("project", "list-experiments", "Uncategorized", "Uncategorized")
        det("workspace", "describe", f"cli-ws-{tag}")
        det("user", "list")
        out = det("experiment", "create", str(FIXTURES / "checkpoints.yaml"), str(FIXTURES),
                  "--paused")
        assert "Created experiment" in out, out
        created = int(out.split("Created experiment")[1].split()[0])
        det("job", "update", cluster.experiment(w["running"])["jobId"], "--priority", "30")
        det("experiment", "set", "priority", str(created), "20")
        det("experiment", "kill", str(created))
    finally:
        proxy.stop()
    exchanges = proxy.take()
    problems, used = check_exchanges(contract, exchanges)
    assert len(used) >= 25, f"det used only {sorted(used)}"
    assert not problems, (f"{len(problems)} problems in {len(exchanges)} requests of det:\n"
                          + format_problems(problems))


def test_python_sdk_requests_follow_contract(cluster, contract, world, tmp_path, monkeypatch):
    """Every request of determined.experimental, and its answer, through a recording proxy."""
    from determined.experimental import Determined

    proxy = RecordingProxy(cluster.url).start()
    w = world
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for var in ("DET_USER", "DET_USER_TOKEN", "DET_PASS", "DET_MASTER"):
        monkeypatch.delenv(var, raising=False)
    try:
        d = Determined(master=proxy.url, user="determined", password="")
        assert d.whoami().username == "determined"
        exp = d.get_experiment(w["done"])
        exp.reload()
        trials = exp.list_trials()
        assert [t.id for t in trials] == [w["trial"]]
        ckpts = exp.list_checkpoints()
        assert ckpts
        (best,) = exp.list_checkpoints(max_results=1)
        trial = d.get_trial(w["trial"])
        trial.list_checkpoints(max_results=1)
        trial.list_checkpoints()
        list(trial.iter_metrics("validation"))
        list(trial.iter_logs(tail=3))
        ckpt = d.get_checkpoint(best.uuid)
        ckpt.add_metadata({"sdk": 1})
        ckpt.remove_metadata(["sdk"])
        list(d.list_experiments())
        m = d.create_model(f"sdk-model-{w['tag']}", labels=["sdk"], metadata={"a": 1})
        m.set_description("from the sdk")
        m.add_metadata({"b": 2})
        version = m.register_version(best.uuid)
        version.set_name("sdk version")
        m.list_versions()
        d.get_model(m.name).get_version()
        d.list_models()
        version.delete()
        m.delete()
    finally:
        proxy.stop()
    exchanges = proxy.take()
    problems, used = check_exchanges(contract, exchanges)
    assert len(used) >= 12, f"the SDK used only {sorted(used)}"
    assert not problems, (f"{len(problems)} problems in {len(exchanges)} requests of the SDK:\n"
                          + format_problems(problems))


def test_core_v2_script_requests_follow_contract(cluster, contract, tmp_path):
    """A detached core_v2 script (an unmanaged experiment: its own trial, metrics, checkpoints,
    logs, state) through the recording proxy: every request and answer checked."""
    proxy = RecordingProxy(cluster.url).start()
    go = tmp_path / "go"
    go.write_text("")
    external = f"contract-{uuid.uuid4().hex[:8]}"
    env = dict(cluster.env, DET_MASTER=proxy.url, DET_USER="determined", DET_PASS="",
               XDG_CONFIG_HOME=str(tmp_path / "config"), CORE_V2_NAME=external,
               CORE_V2_STORAGE=str(cluster.data_dir / "checkpoints" / external), CORE_V2_GO_FILE=str(go),
               CORE_V2_EXTERNAL_ID=external)
    try:
        proc = subprocess.run([PYTHON, str(FIXTURES / "core_v2" / "train.py")], env=env,
                              capture_output=True, text=True, timeout=180, cwd=str(tmp_path))
        assert proc.returncode == 0, proc.stdout + proc.stderr
    finally:
        proxy.stop()
    exchanges = proxy.take()
    problems, used = check_exchanges(contract, exchanges)
    for op in (("PUT", "/api/v1/experiments/by-external-id/{externalExperimentId}"),
               ("PUT", "/api/v1/trials"), ("POST", "/api/v1/trials/{id}/metrics"),
               ("POST", "/api/v1/checkpoints")):
        assert op in used, f"{op} not used by the core_v2 script: {sorted(used)}"
    assert not problems, (f"{len(problems)} problems in {len(exchanges)} requests of core_v2:\n"
                          + format_problems(problems))


def test_agent_requests_follow_contract(cluster, contract, tmp_path):
    """A second agent that talks to the master through the recording proxy: its registration
    and command polls, and the master's answers, checked."""
    proxy = RecordingProxy(cluster.url).start()
    agent_id = f"contract-agent-{uuid.uuid4().hex[:6]}"
    agent = subprocess.Popen(
        [str(BIN / "determined-agent"), "--master-url", proxy.url, "--agent-id", agent_id,
         "--slots", "1", "--data-dir", str(tmp_path / "agent"), "--poll-timeout", "1",
         "--agent-token-file", str(cluster.data_dir / "agent_token")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: any(a["id"] == agent_id and a["connected"]
                             for a in cluster.request("GET", "/api/v1/agents")["agents"]),
                 60, f"agent {agent_id} to register")
        wait_for(lambda: sum(1 for x in proxy.exchanges if "/commands" in x.path) >= 2, 30,
                 "two command polls")
    finally:
        agent.terminate()
        agent.wait(timeout=30)
        proxy.stop()
    exchanges = proxy.take()
    problems, used = check_exchanges(contract, exchanges)
    assert {("POST", "/agents/{id}/register"), ("GET", "/agents/{id}/commands")} <= used, used
    assert not problems, (f"{len(problems)} problems in {len(exchanges)} requests of the agent:\n"
                          + format_problems(problems))
