"""Bulk experiment actions (issue #34), Determined's POST /api/v1/projects/{id}/experiments/
{activate,pause,cancel,kill,archive,unarchive,move} and DELETE .../delete: by ids or by filters,
each experiment changed as its own route would change it, only for its owner or an admin (the
others get the refusal as their result and stay as they were), and bad input refused naming the
field with nothing changed."""

import json

import pytest

from cluster import Cluster, brought_up, wait_for
from test_permissions import as_user, login, new_user

CONFIG = """name: {name}
entrypoint: python3 train.py
hyperparameters: {{x: 1}}
searcher: {{name: single, metric: loss, max_length: {{batches: 10}}}}
"""


def create(c: Cluster, token: str, name: str) -> int:
    body = {"config": CONFIG.format(name=name), "activate": False,
            "modelDefinition": [{"path": "train.py", "type": 48, "content": "", "mode": 420}]}
    status, out = c.request_status("POST", "/api/v1/experiments", body, headers=as_user(token))
    assert status == 200, out
    return out["experiment"]["id"]


def state(c: Cluster, exp_id: int) -> str:
    return c.experiment(exp_id)["state"]


def bulk(c: Cluster, token: str, action: str, body: dict, project: int = 1) -> (int, dict):
    method = "DELETE" if action == "delete" else "POST"
    return c.request_status(method, f"/api/v1/projects/{project}/experiments/{action}", body,
                            headers=as_user(token))


def results(out: dict) -> dict:
    return {r["id"]: r["error"] for r in out["results"]}


@pytest.fixture(scope="module")
def cluster():
    with brought_up(Cluster(agents=0, slots=1)) as c:
        yield c


def test_ids_change_only_what_the_caller_owns(cluster):
    c = cluster
    alice, bob = new_user(c, "alice", "alice-pw"), new_user(c, "bob", "bob-pw")
    a1, a2 = create(c, alice, "bulk-a"), create(c, alice, "bulk-a")
    b1 = create(c, bob, "bulk-a")

    status, out = bulk(c, alice, "activate", {"projectId": 1, "experimentIds": [a1, a2, b1, 999999]})
    assert status == 200, out
    got = results(out)
    assert got[a1] == "" and got[a2] == "", got
    assert "user 'alice' may not" in got[b1], got
    assert "999999 not found" in got[999999], got
    assert state(c, b1) == "STATE_PAUSED", "bob's experiment is not alice's to activate"
    for e in (a1, a2):
        wait_for(lambda e=e: state(c, e) in ("STATE_ACTIVE", "STATE_QUEUED"), 30, f"{e} active")

    # Filters select what they match (ids ignored): alice's active "bulk-a" ones; bob's, which
    # she may not change, is left out of the results, not refused.
    status, out = bulk(c, alice, "pause", {"projectId": 1, "experimentIds": [],
                                           "filters": {"name": "bulk-a"}})
    assert status == 200, out
    assert sorted(results(out)) == sorted([a1, a2]), out
    for e in (a1, a2):
        assert state(c, e) == "STATE_PAUSED"

    # An admin kills all three; a kill of one already ended is no error.
    admin = login(c, "admin")
    status, out = bulk(c, admin, "kill", {"projectId": 1, "experimentIds": [a1, a2, b1]})
    assert status == 200, out
    assert set(results(out).values()) == {""}, out
    for e in (a1, a2, b1):
        c.wait_state(e, "STATE_CANCELED")
    status, out = bulk(c, admin, "kill", {"projectId": 1, "experimentIds": [a1]})
    assert results(out) == {a1: ""}, out

    # Archive, unarchive; a project that does not hold it finds nothing.
    status, out = bulk(c, alice, "archive", {"projectId": 1, "experimentIds": [a1, b1]})
    got = results(out)
    assert got[a1] == "" and got[b1] != "", got
    assert c.experiment(a1)["archived"] is True and c.experiment(b1)["archived"] is False
    status, out = bulk(c, alice, "unarchive", {"experimentIds": [a1]}, project=0)
    assert results(out) == {a1: ""}, out
    assert c.experiment(a1)["archived"] is False
    status, out = bulk(c, alice, "archive", {"experimentIds": [a1]}, project=4242)
    assert "not found in project 4242" in results(out)[a1], out

    # Move into a new project, then delete there.
    c.request("POST", "/api/v1/workspaces", {"name": "bulk-ws"})
    ws = [w for w in c.request("GET", "/api/v1/workspaces")["workspaces"] if w["name"] == "bulk-ws"]
    proj = c.request("POST", f"/api/v1/workspaces/{ws[0]['id']}/projects",
                     {"name": "bulk-p", "workspaceId": ws[0]["id"]})["project"]["id"]
    status, out = bulk(c, alice, "move", {"experimentIds": [a1, b1], "destinationProjectId": proj})
    got = results(out)
    assert got[a1] == "" and got[b1] != "", got
    assert c.experiment(a1)["projectId"] == proj and c.experiment(b1)["projectId"] == 1
    status, out = bulk(c, alice, "delete", {"experimentIds": [a1]}, project=proj)
    assert results(out) == {a1: ""}, out
    wait_for(lambda: c.request_status("GET", f"/api/v1/experiments/{a1}",
                                     headers=as_user(alice))[0] == 404, 60,
             f"experiment {a1} deleted")


def test_bad_input_names_the_field_and_changes_nothing(cluster):
    c = cluster
    carol = new_user(c, "carol", "carol-pw")
    e = create(c, carol, "bulk-bad")
    for action, body, says in (
            ("activate", {"experimentIds": "all"}, "experimentIds: must be a list"),
            ("activate", {"experimentIds": [e, -1]}, "experimentIds: -1 is not an experiment id"),
            ("activate", {"filters": {"states": ["STATE_NAPPING"]}},
             "filters.states: 'STATE_NAPPING' is not an experiment state"),
            ("move", {"experimentIds": [e]}, "destinationProjectId: required"),
    ):
        status, out = bulk(c, carol, action, body)
        assert status == 400, (action, body, out)
        assert says in json.dumps(out), out
    status, out = c.request_status("POST", "/api/v1/projects/x/experiments/kill",
                                   {"experimentIds": [e]}, headers=as_user(carol))
    assert status in (400, 404), out
    assert state(c, e) == "STATE_PAUSED"
    status, _ = c.request_status("POST", "/api/v1/projects/1/experiments/kill", {"experimentIds": [e]})
    assert status == 401
    assert state(c, e) == "STATE_PAUSED"
