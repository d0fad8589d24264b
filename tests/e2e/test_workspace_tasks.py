"""Tasks in workspaces (issue #34): a command launched in a workspace (`det cmd run -w`, or the
API's workspaceId) shows it; an archived workspace takes no launch (404, as Determined); deleting
the workspace kills its running tasks, and not another user's unless an admin deletes it."""

from cluster import Cluster, wait_for
from test_permissions import as_user, login, new_user


def command(c: Cluster, task_id: str) -> dict:
    return c.request("GET", f"/api/v1/commands/{task_id}")["command"]


def test_tasks_follow_their_workspace(cluster):
    c = cluster
    ws = c.request("POST", "/api/v1/workspaces", {"name": "tasks-ws"})["workspace"]
    out = c.det("cmd", "run", "-d", "-w", "tasks-ws", "--config", "resources.slots=0",
                "sleep", "600").stdout
    cmd_id = out.strip().splitlines()[-1].strip()
    assert command(c, cmd_id)["workspaceId"] == ws["id"]
    wait_for(lambda: command(c, cmd_id)["state"] == "STATE_RUNNING" or None, 120,
             "the command to run")
    missing = c.det("cmd", "run", "-w", "no-such-ws", "true", check=False)
    assert missing.returncode != 0 and "workspace 'no-such-ws' not found" in missing.stderr

    c.request("POST", f"/api/v1/workspaces/{ws['id']}/archive")
    status, answer = c.request_status("POST", "/api/v1/commands",
                                      {"config": {"entrypoint": ["true"]}, "workspaceId": ws["id"]},
                                      headers=as_user(c.token()))
    assert status == 404 and "is archived" in answer["error"]["error"], answer
    c.request("POST", f"/api/v1/workspaces/{ws['id']}/unarchive")

    # The workspace and its command are determined's own: the delete kills the command.
    c.request("DELETE", f"/api/v1/workspaces/{ws['id']}")
    wait_for(lambda: command(c, cmd_id)["state"] == "STATE_TERMINATED" or None, 60,
             "the workspace's command to be killed")


def test_deleting_a_workspace_spares_another_users_task(cluster):
    c = cluster
    admin = login(c, "admin")
    bob = new_user(c, "ws-tasks-bob", "pw")
    ws = c.request("POST", "/api/v1/workspaces", {"name": "tasks-ws2"})["workspace"]
    status, answer = c.request_status(
        "POST", "/api/v1/commands",
        {"config": {"entrypoint": ["sleep", "600"], "resources": {"slots": 0}},
         "workspaceId": ws["id"]}, headers=as_user(bob))
    assert status == 200, answer
    bobs = answer["command"]["id"]
    status, answer = c.request_status("DELETE", f"/api/v1/workspaces/{ws['id']}",
                                      headers=as_user(c.token()))
    assert status == 403 and "ws-tasks-bob" in answer["error"]["error"], answer
    assert command(c, bobs)["state"] not in ("STATE_TERMINATED", "STATE_TERMINATING")
    status, answer = c.request_status("DELETE", f"/api/v1/workspaces/{ws['id']}",
                                      headers=as_user(admin))
    assert status == 200, answer
    wait_for(lambda: command(c, bobs)["state"] == "STATE_TERMINATED" or None, 60,
             "bob's command to be killed by the admin's delete")
