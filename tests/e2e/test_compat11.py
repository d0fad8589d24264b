"""Issue #11's remaining gaps: trial summary metrics, Determined's sortBy/orderBy on lists,
project notes, DELETE tensorboard-files, workspace options we refuse, `det user logout --all`."""

import json
import pathlib
import subprocess
import sys

import pytest

from cluster import BIN, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "compat11"


@pytest.fixture(scope="module")
def grid(cluster, tmp_path_factory):
    """A finished grid experiment of three trials (x = 3, 1, 2) with shared_fs storage."""
    # Under the master's own storage: the only root a default cluster allows.
    storage = cluster.data_dir / "checkpoints" / "compat11-storage"
    storage.mkdir(parents=True, exist_ok=True)
    exp_id = cluster.create(FIXTURES / "grid.yaml", FIXTURES, "--config",
                            "checkpoint_storage.type=shared_fs", "--config",
                            f"checkpoint_storage.host_path={storage}")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=240)
    return exp_id, storage


def x_of(trial):
    return trial["hparams"]["x"]


def test_trial_summary_metrics(cluster, grid):
    exp_id, _ = grid
    for t in cluster.trials(exp_id):
        summary = cluster.request("GET", f"/api/v1/trials/{t['id']}")["trial"]["summaryMetrics"]
        assert summary == t["summaryMetrics"]  # the list carries the same summary
        x = x_of(t)
        loss = summary["avg_metrics"]["loss"]
        assert loss["type"] == "number" and loss["count"] == 2
        assert loss["min"] == pytest.approx(x) and loss["max"] == pytest.approx(2 * x)
        assert loss["sum"] == pytest.approx(3 * x) and loss["mean"] == pytest.approx(1.5 * x)
        assert loss["last"] == pytest.approx(2 * x)
        assert summary["avg_metrics"]["phase"] == {"type": "string", "last": "warm"}
        val = summary["validation_metrics"]["loss"]
        assert val["count"] == 1 and val["last"] == pytest.approx(x)
        assert t["checkpointCount"] == 1 and int(t["totalCheckpointSize"]) > 0


def test_sdk_trial_summary_metrics(cluster, grid):
    exp_id, _ = grid
    script = (
        "import json, sys\n"
        "from determined.experimental import client\n"
        "client.login(master=sys.argv[1], user='determined', password='')\n"
        "trials = client.get_experiment(int(sys.argv[2])).list_trials()\n"
        "print(json.dumps([t.summary_metrics for t in trials]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script, cluster.url, str(exp_id)],
                         env=cluster.env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    summaries = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(summaries) == 3
    assert all(s["avg_metrics"]["loss"]["count"] == 2 for s in summaries)


def test_experiment_trials_sort_and_filter(cluster, grid):
    exp_id, _ = grid

    def xs(query):
        return [x_of(t) for t in cluster.request(
            "GET", f"/api/v1/experiments/{exp_id}/trials{query}")["trials"]]

    assert xs("?sortBy=SORT_BY_BEST_VALIDATION_METRIC") == [1.0, 2.0, 3.0]
    assert xs("?sortBy=SORT_BY_LATEST_VALIDATION_METRIC&orderBy=ORDER_BY_DESC") == [3.0, 2.0, 1.0]
    ids = [t["id"] for t in cluster.request(
        "GET", f"/api/v1/experiments/{exp_id}/trials?sortBy=SORT_BY_ID&orderBy=ORDER_BY_DESC")[
            "trials"]]
    assert ids == sorted(ids, reverse=True)
    assert len(xs("?states=STATE_COMPLETED")) == 3
    assert xs("?states=STATE_ACTIVE") == []
    assert xs("?sortBy=SORT_BY_BEST_VALIDATION_METRIC&limit=1") == [1.0]
    code, body = cluster.request_status(
        "GET", f"/api/v1/experiments/{exp_id}/trials?sortBy=SORT_BY_NAME",
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert code == 400 and "sortBy" in json.dumps(body) and "SORT_BY_NAME" in json.dumps(body)


def test_other_lists_sort(cluster):
    auth = {"Authorization": f"Bearer {cluster.token()}"}
    names = [u["username"] for u in cluster.request(
        "GET", "/api/v1/users?sortBy=SORT_BY_USER_NAME&orderBy=ORDER_BY_DESC")["users"]]
    assert names == sorted(names, key=str.lower, reverse=True) and len(names) >= 2
    for name in ("zz-compat11", "aa-compat11"):
        cluster.request("POST", "/api/v1/workspaces", {"name": name})
    ws = [w["name"] for w in cluster.request(
        "GET", "/api/v1/workspaces?sortBy=SORT_BY_NAME")["workspaces"]]
    assert ws == sorted(ws, key=str.lower)
    ws_id = next(w["id"] for w in cluster.request("GET", "/api/v1/workspaces")["workspaces"]
                 if w["name"] == "zz-compat11")
    for name, desc in (("p-b", "2"), ("p-a", "3"), ("p-c", "1")):
        cluster.request("POST", f"/api/v1/workspaces/{ws_id}/projects",
                        {"name": name, "description": desc, "workspaceId": ws_id})
    projects = cluster.request(
        "GET", f"/api/v1/workspaces/{ws_id}/projects?sortBy=SORT_BY_DESCRIPTION")["projects"]
    assert [p["name"] for p in projects] == ["p-c", "p-b", "p-a"]
    projects = cluster.request(
        "GET", f"/api/v1/workspaces/{ws_id}/projects?sortBy=SORT_BY_NAME&orderBy=ORDER_BY_DESC"
    )["projects"]
    assert [p["name"] for p in projects] == ["p-c", "p-b", "p-a"]
    agents = cluster.request("GET", "/api/v1/agents?sortBy=SORT_BY_ID")
    assert agents["agents"] and "pagination" in agents
    code, body = cluster.request_status("GET", "/api/v1/templates?sortBy=SORT_BY_SIZE",
                                        headers=auth)
    assert code == 400 and "SORT_BY_SIZE" in json.dumps(body)


def test_project_notes(cluster):
    auth = {"Authorization": f"Bearer {cluster.token()}"}
    ws_id = cluster.request("POST", "/api/v1/workspaces", {"name": "notes-ws-compat11"})[
        "workspace"]["id"]
    pid = cluster.request("POST", f"/api/v1/workspaces/{ws_id}/projects",
                          {"name": "notes-compat11", "workspaceId": ws_id})["project"]["id"]
    out = cluster.request("PUT", f"/api/v1/projects/{pid}/notes",
                          {"notes": [{"name": "a", "contents": "x"}], "projectId": pid})
    assert out == {"notes": [{"name": "a", "contents": "x"}]}
    out = cluster.request("POST", f"/api/v1/projects/{pid}/notes", {"name": "b", "contents": "y"})
    assert [n["name"] for n in out["notes"]] == ["a", "b"]
    assert cluster.request("GET", f"/api/v1/projects/{pid}")["project"]["notes"] == out["notes"]
    code, body = cluster.request_status("POST", f"/api/v1/projects/{pid}/notes",
                                        {"name": 1, "contents": "y"}, headers=auth)
    assert code == 400 and "note.name" in json.dumps(body)
    code, _ = cluster.request_status("PUT", "/api/v1/projects/9999/notes", {"notes": []},
                                     headers=auth)
    assert code == 404


def test_delete_tensorboard_files(cluster, grid):
    exp_id, storage = grid
    tb = list(storage.glob(f"*/tensorboard/experiment/{exp_id}"))
    assert tb and any(p.is_file() for p in tb[0].rglob("*")), "no TensorBoard files uploaded"
    checkpoints = [p for p in storage.iterdir() if p.is_dir() and (p / "w").exists()]
    assert len(checkpoints) == 3
    assert cluster.request("DELETE", f"/api/v1/experiments/{exp_id}/tensorboard-files") == {}
    wait_for(lambda: not tb[0].exists() or not any(tb[0].rglob("*")), 60,
             "the TensorBoard files to be deleted")
    assert all((p / "w").exists() for p in checkpoints)  # checkpoints stay
    code, _ = cluster.request_status("DELETE", "/api/v1/experiments/9999/tensorboard-files",
                                     headers={"Authorization": f"Bearer {cluster.token()}"})
    assert code == 404


def test_workspace_options_we_do_not_support_are_refused(cluster):
    auth = {"Authorization": f"Bearer {cluster.token()}"}
    code, body = cluster.request_status(
        "POST", "/api/v1/workspaces",
        {"name": "ws-opt-compat11", "checkpointStorageConfig": {"type": "shared_fs"}},
        headers=auth)
    assert code == 400 and "checkpointStorageConfig" in json.dumps(body)
    code, body = cluster.request_status(
        "POST", "/api/v1/workspaces", {"name": "ws-opt-compat11", "clusterQuotaPairs": {"c": 4}},
        headers=auth)
    assert code == 400 and "Kubernetes" in json.dumps(body)
    # Unset values, as clients send them, pass.
    code, body = cluster.request_status(
        "POST", "/api/v1/workspaces",
        {"name": "ws-opt-compat11", "defaultComputePool": "", "clusterNamespaceMeta": {},
         "agentUserGroup": None}, headers=auth)
    assert code == 200, body
    ws_id = body["workspace"]["id"]
    # Default pools are served (test_pool_bindings.py); one that does not exist is refused
    # naming the field.
    code, body = cluster.request_status("PATCH", f"/api/v1/workspaces/{ws_id}",
                                        {"defaultComputeResourcePool": "gpu"}, headers=auth)
    assert code == 400 and "defaultComputeResourcePool" in json.dumps(body)
    assert "not available to the workspace" in json.dumps(body)


def test_user_logout_all(cluster):
    admin = cluster.request("POST", "/api/v1/auth/login", {"username": "admin", "password": ""},
                            auth=False)["token"]
    code, body = cluster.request_status(
        "POST", "/api/v1/users",
        {"user": {"username": "logout-all", "active": True}, "password": "Pass-word1"},
        headers={"Authorization": f"Bearer {admin}"})
    assert code == 200, body

    def login(user, password):
        proc = subprocess.run([str(BIN / "det"), "user", "login", user], env=cluster.env,
                              input=password + "\n", capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr

    login("determined", "")
    login("logout-all", "Pass-word1")
    auth = pathlib.Path(cluster.env["XDG_CONFIG_HOME"]) / "determined" / "auth.json"
    tokens = json.loads(auth.read_text())["masters"][cluster.url]["tokens"]
    assert {"determined", "logout-all"} <= set(tokens)
    cluster.det("user", "logout", "--all")
    entry = json.loads(auth.read_text())["masters"][cluster.url]
    assert not entry.get("tokens")
    assert not entry.get("active_user")
    # The tokens were revoked on the master, not only forgotten.
    code, _ = cluster.request_status("GET", "/api/v1/me",
                                     headers={"Authorization": f"Bearer {tokens['logout-all']}"})
    assert code == 401
