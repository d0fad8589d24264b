"""Tasks beyond their start: a shell reached as Determined's CLI reaches it (ssh in a WebSocket
to /proxy/{id}/, no credential needed since the shell's key is one), `det job update` on a
command's job, and a notebook and a command that outlive a kill -9 of the master (re-adopted:
same allocation, the proxy answers again, the logs from before the kill kept)."""

import json
import os
import pathlib
import shutil
import signal
import urllib.error
import urllib.request

import pytest

from cluster import Cluster, brought_up, wait_for
from test_ntsc import task, wait_ready

HAVE_SSHD = shutil.which("sshd") is not None or pathlib.Path("/usr/sbin/sshd").exists()


@pytest.fixture(scope="module")
def c():
    with brought_up(Cluster(agents=1, slots=2)) as cl:
        yield cl


def proxy_get(c: Cluster, task_id: str, path: str) -> (int, str):
    req = urllib.request.Request(f"{c.url}/proxy/{task_id}/{path}")
    req.add_header("Authorization", f"Bearer {c.token()}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


def task_logs(c: Cluster, task_id: str) -> str:
    return c.det("task", "logs", task_id).stdout


@pytest.mark.skipif(not HAVE_SSHD, reason="openssh-server is not installed")
def test_shell_open_carries_ssh_in_a_websocket_like_determined(c):
    import websocket  # python3-websocket

    shell_id = c.det("shell", "start", "-d", "--config", "resources.slots=0").stdout.strip()
    wait_ready(c, shell_id)
    # det shell open ID -- CMD: ssh through our ProxyCommand (a WebSocket to /proxy/ID/).
    proc = c.det("shell", "open", shell_id, "--", "echo", "opened", "$DET_TASK_TYPE",
                 timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "opened SHELL" in proc.stdout
    # Twice: the shell stays up between connections.
    proc = c.det("shell", "open", shell_id, "--", "echo", "again", timeout=120, check=False)
    assert proc.returncode == 0 and "again" in proc.stdout, proc.stdout + proc.stderr

    # What Determined's `python -m determined.cli.tunnel MASTER ID` does: a WebSocket to
    # /proxy/ID/ without a credential; the sshd's banner comes back in a binary frame.
    ws = websocket.create_connection(f"ws://127.0.0.1:{c.port}/proxy/{shell_id}/", timeout=30)
    opcode, data = ws.recv_data()
    assert opcode == websocket.ABNF.OPCODE_BINARY
    assert data.startswith(b"SSH-2.0-"), data
    ws.close()

    # A plain request to a shell's proxy is refused with what it takes; without a credential,
    # nothing else gets through.
    status, body = c.request_status("GET", f"/proxy/{shell_id}/",
                                    headers={"Authorization": f"Bearer {c.token()}"})
    assert status == 400 and "WebSocket" in body["error"]["error"], body
    status, _ = c.request_status("GET", f"/proxy/{shell_id}/")
    assert status == 401

    c.det("shell", "kill", shell_id)
    wait_for(lambda: "endTime" in task(c, shell_id), 60, "the shell to end")


def test_notebook_websocket_without_a_credential_is_refused(c):
    import websocket

    nb_id = c.det("notebook", "start", "-d", "--config", "resources.slots=0").stdout.strip()
    wait_ready(c, nb_id)
    with pytest.raises(websocket.WebSocketBadStatusException) as e:
        websocket.create_connection(f"ws://127.0.0.1:{c.port}/proxy/{nb_id}/api/events/subscribe",
                                    timeout=30)
    assert e.value.status_code == 401
    c.det("notebook", "kill", nb_id)
    wait_for(lambda: "endTime" in task(c, nb_id), 60, "the notebook to end")


def test_job_update_changes_a_queued_commands_priority(c):
    # Both slots busy, so the second command waits in the queue.
    busy = c.det("cmd", "run", "-d", "--config", "resources.slots=2", "sleep", "600").stdout.strip()
    wait_for(lambda: task(c, busy)["allocations"][0]["state"] == "STATE_RUNNING", 60,
             "the busy command to run")
    queued = c.det("cmd", "run", "-d", "echo", "ran-after-update").stdout.strip()

    def job_of(entity):
        jobs = [j["full"] for j in c.request("GET", "/api/v1/job-queues-v2")["jobs"]]
        mine = [j for j in jobs if j["entityId"] == entity]
        return mine[0] if mine else None

    job = wait_for(lambda: job_of(queued), 30, "the queued command's job")
    assert job["summary"]["state"] == "STATE_QUEUED"
    assert job["priority"] == 42
    c.det("job", "update", job["jobId"], "--priority", "10")
    job = job_of(queued)
    assert job["priority"] == 10
    assert c.request("GET", f"/api/v1/commands/{queued}")["config"]["resources"][
        "priority"] == 10
    listed = c.det("job", "list").stdout
    line = [ln for ln in listed.splitlines() if job["jobId"] in ln]
    assert line and "10" in line[0] and "TYPE_COMMAND" in line[0], listed

    # Wrong changes name the field and the rule.
    proc = c.det("job", "update", job["jobId"], "--priority", "500", check=False)
    assert proc.returncode != 0 and "priority" in proc.stderr, proc.stderr
    status, body = c.request_status(
        "POST", "/api/v1/job-queues",
        {"updates": [{"jobId": job["jobId"], "resourcePool": "default"}]},
        headers={"Authorization": f"Bearer {c.token()}", "Content-Type": "application/json"})
    assert status == 400 and "only experiments" in body["error"]["error"], body

    # Another (non-admin) user may not change it.
    admin = c.request("POST", "/api/v1/auth/login",
                      {"username": "admin", "password": "", "isHashed": True}, auth=False)["token"]
    c.request_status("POST", "/api/v1/users",
                     {"user": {"username": "jobother", "active": True}, "password": ""},
                     headers={"Authorization": f"Bearer {admin}",
                              "Content-Type": "application/json"})
    other = c.request("POST", "/api/v1/auth/login",
                      {"username": "jobother", "password": "", "isHashed": True},
                      auth=False)["token"]
    status, body = c.request_status(
        "POST", "/api/v1/job-queues", {"updates": [{"jobId": job["jobId"], "priority": 5}]},
        headers={"Authorization": f"Bearer {other}", "Content-Type": "application/json"})
    assert status == 403, body
    assert job_of(queued)["priority"] == 10

    c.det("cmd", "kill", busy)
    wait_for(lambda: "endTime" in task(c, queued), 120, "the queued command to run")
    assert "ran-after-update" in c.det("cmd", "logs", queued).stdout


def test_master_kill9_readopts_a_running_notebook_and_command(c):
    nb_id = c.det("notebook", "start", "-d", "--config", "resources.slots=0").stdout.strip()
    cmd_id = c.det("cmd", "run", "-d", "sh", "-c",
                   "echo before-kill; i=0; while [ $i -lt 600 ]; do i=$((i+1)); "
                   "echo tick-$i; sleep 0.5; done").stdout.strip()
    wait_ready(c, nb_id)
    wait_for(lambda: "tick-2" in task_logs(c, cmd_id), 60, "the command's output")
    before = {t: task(c, t)["allocations"][0]["allocationId"] for t in (nb_id, cmd_id)}
    assert proxy_get(c, nb_id, "api/status")[0] == 200

    pid = c.master_pid()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not c.master_running(), 10, "the master to die")
    c.master_up()

    assert c.master_pid() != pid
    # Re-adopted: the same allocations, running, and the notebook answers through the proxy.
    for t, alloc in before.items():
        a = task(c, t)["allocations"][0]
        assert a["allocationId"] == alloc
        assert "endTime" not in task(c, t), task_logs(c, t)
    wait_for(lambda: proxy_get(c, nb_id, "api/status")[0] == 200, 60,
             "the notebook's proxy after the restart")
    logs = task_logs(c, cmd_id)
    assert "before-kill" in logs
    last = max(int(ln.split("tick-")[1]) for ln in logs.splitlines() if "tick-" in ln)
    # Its output keeps coming after the restart (shipped by the same process).
    wait_for(lambda: f"tick-{last + 4}" in task_logs(c, cmd_id), 60, "output after the restart")
    logs = task_logs(c, cmd_id)
    assert logs.count("before-kill") == 1, "the command must not have rerun"
    # No line lost while the master was down, none stored twice.
    ticks = [int(ln.split("tick-")[1]) for ln in logs.splitlines() if "tick-" in ln]
    assert ticks == list(range(1, len(ticks) + 1)), ticks
    assert task(c, cmd_id)["allocations"][0]["state"] == "STATE_RUNNING"

    c.det("cmd", "kill", cmd_id)
    c.det("notebook", "kill", nb_id)
    for t in (nb_id, cmd_id):
        wait_for(lambda t=t: "endTime" in task(c, t), 60, f"{t} to end after its kill")


def test_a_process_tasks_bind_mounts_are_links_in_its_working_directory(c, tmp_path):
    data = tmp_path / "datasets"
    data.mkdir()
    (data / "in.txt").write_text("from the host path\n")
    cfg = tmp_path / "cmd.yaml"
    cfg.write_text(json.dumps({"bind_mounts": [
        {"host_path": str(data), "container_path": "inputs/data"},
        {"host_path": str(data), "container_path": "/det-e2e-not-here"},
    ]}))
    proc = c.det("cmd", "run", "--config-file", str(cfg), "sh", "-c",
                 "cat inputs/data/in.txt && echo written > inputs/data/out.txt", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "from the host path" in proc.stdout
    assert (data / "out.txt").read_text() == "written\n"
    # The absolute path elsewhere is not made on the agent host, and the log says so.
    assert not pathlib.Path("/det-e2e-not-here").exists()
    assert "is not mounted at /det-e2e-not-here" in proc.stdout
    # A bad mount fails the launch, naming the field.
    cfg.write_text(json.dumps({"bind_mounts": [{"host_path": "rel", "container_path": "x"}]}))
    proc = c.det("cmd", "run", "--config-file", str(cfg), "true", check=False)
    assert proc.returncode != 0
    assert "bind_mounts[0].host_path: must be an absolute path" in proc.stderr, proc.stderr
