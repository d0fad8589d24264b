"""Commands, notebooks, shells and TensorBoards: scheduled beside experiments, reached through
the master's /proxy/{task_id}/ (owner or admin only), killed when idle."""

import json
import pathlib
import shutil
import time
import urllib.error
import urllib.request
import uuid

import pytest

from cluster import Cluster, brought_up, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def c():
    with brought_up(Cluster(agents=1, slots=2)) as cl:
        yield cl


def task(c: Cluster, task_id: str) -> dict:
    return c.request("GET", f"/api/v1/tasks/{task_id}")["task"]


def wait_ready(c: Cluster, task_id: str, timeout: float = 120) -> None:
    def ready():
        t = task(c, task_id)
        assert "endTime" not in t, c.det("task", "logs", task_id, check=False).stdout
        return t["allocations"][0].get("isReady")

    wait_for(ready, timeout, f"task {task_id} to be ready")


def proxy_get(c: Cluster, task_id: str, path: str, token: str) -> (int, str):
    req = urllib.request.Request(f"{c.url}/proxy/{task_id}/{path}")
    req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_det_works_inside_a_command(c):
    # The agent puts the det built beside it on the task's PATH; the task's user token signs it
    # in as the task's owner, as in Determined's images.
    proc = c.det("cmd", "run", "det user whoami && which det", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "determined" in proc.stdout, proc.stdout
    assert "resources exited successfully" in proc.stdout.lower(), proc.stdout
    failed = c.det("cmd", "run", "exit 4", check=False)
    assert "resources failed with non-zero exit code" in failed.stdout.lower(), failed.stdout


def test_command_runs_in_its_context_and_its_exit_code_comes_back(c, tmp_path):
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "hello.txt").write_text("hello from the context\n")
    proc = c.det("cmd", "run", "-c", str(ctx), "sh", "-c",
                 "cat hello.txt; echo task=$DET_TASK_ID type=$DET_TASK_TYPE; exit 3", check=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "hello from the context" in proc.stdout
    assert "type=COMMAND" in proc.stdout
    listed = c.det("cmd", "list").stdout
    assert "exited with code 3" in listed
    ok = c.det("cmd", "run", "true", check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_command_config_errors_name_the_field(c):
    status, body = c.request_status(
        "POST", "/api/v1/commands",
        {"config": {"entrypoint": "true", "resources": {"priority": 500}}},
        headers={"Authorization": f"Bearer {c.token()}", "Content-Type": "application/json"})
    assert status == 400
    assert "resources.priority" in body["error"]["error"]


def test_notebook_answers_through_the_proxy_and_a_kernel_computes(c):
    import websocket  # python3-websocket

    start = time.monotonic()
    out = c.det("notebook", "start", "--config", "resources.slots=0", timeout=180).stdout
    nb_id = out.split("(id: ")[1].split(",")[0]
    status, body = proxy_get(c, nb_id, "api/status", c.token())
    elapsed = time.monotonic() - start
    assert status == 200, body
    assert "kernels" in json.loads(body)
    print(f"det notebook start -> proxied answer: {elapsed:.2f}s")

    # A kernel over the proxy (REST), then 2+2 over its websocket.
    req = urllib.request.Request(f"{c.url}/proxy/{nb_id}/api/kernels", data=b"{}",
                                 method="POST")
    req.add_header("Authorization", f"Bearer {c.token()}")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=60) as resp:
        kernel = json.loads(resp.read())
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{c.port}/proxy/{nb_id}/api/kernels/{kernel['id']}/channels",
        header=[f"Authorization: Bearer {c.token()}"], timeout=60)
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                   "msg_type": "execute_request", "version": "5.3"},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": "2+2", "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
    }))
    deadline = time.monotonic() + 60
    result = None
    while time.monotonic() < deadline and result is None:
        m = json.loads(ws.recv())
        if m.get("msg_type") == "execute_result" and m["parent_header"].get("msg_id") == msg_id:
            result = m["content"]["data"]["text/plain"]
    ws.close()
    assert result == "4"

    # Another (non-admin) user is refused; without a token there is no way in.
    admin = c.request("POST", "/api/v1/auth/login",
                      {"username": "admin", "password": "", "isHashed": True}, auth=False)["token"]
    name = "other" + uuid.uuid4().hex[:6]
    req = urllib.request.Request(f"{c.url}/api/v1/users", method="POST", data=json.dumps(
        {"user": {"username": name, "active": True}, "password": ""}).encode())
    req.add_header("Authorization", f"Bearer {admin}")
    req.add_header("Content-Type", "application/json")
    urllib.request.urlopen(req, timeout=30).read()
    other = c.request("POST", "/api/v1/auth/login",
                      {"username": name, "password": "", "isHashed": True}, auth=False)["token"]
    status, body = proxy_get(c, nb_id, "api/status", other)
    assert status == 403, body
    status, _ = proxy_get(c, nb_id, "api/status", "")
    assert status == 401
    status, body = proxy_get(c, nb_id, "api/status", admin)
    assert status == 200, body

    c.det("notebook", "kill", nb_id)
    wait_for(lambda: "endTime" in task(c, nb_id), 60, "the notebook to end")


def test_idle_notebook_is_killed(c):
    nb_id = c.det("notebook", "start", "-d", "--config", "resources.slots=0",
                  "--config", "idle_timeout=2s").stdout.strip()
    wait_ready(c, nb_id)
    wait_for(lambda: "endTime" in task(c, nb_id), 60, "the idle notebook to be killed")
    logs = c.det("task", "logs", nb_id).stdout
    assert "idle_timeout" in logs


@pytest.mark.skipif(shutil.which("sshd") is None and not pathlib.Path("/usr/sbin/sshd").exists(),
                    reason="openssh-server is not installed")
def test_shell_runs_a_command_through_the_master(c):
    proc = c.det("shell", "start", "--config", "resources.slots=0", "--",
                 "echo", "hello-from-shell", "$DET_TASK_TYPE", timeout=180, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hello-from-shell SHELL" in proc.stdout
    shells = c.request("GET", "/api/v1/shells")["shells"]
    for s in shells:
        c.det("shell", "kill", s["id"])


def test_tensorboard_without_the_package_fails_naming_it(c):
    proc = c.det("tensorboard", "start", "1", timeout=120, check=False)
    assert proc.returncode != 0
    assert "tensorboard" in proc.stderr and "not installed" in proc.stderr, proc.stderr


def test_command_waits_behind_a_higher_priority_experiment(c, tmp_path):
    cfg = tmp_path / "exp.yaml"
    cfg.write_text((FIXTURES / "flaky.yaml").read_text().replace(
        "sleep_per_step: 0.0", "sleep_per_step: 0.25")
        + "resources: {slots_per_trial: 2, priority: 1}\n")
    exp_id = c.create(cfg, FIXTURES)
    wait_for(lambda: c.trials(exp_id) and c.trials(exp_id)[0]["state"] == "STATE_RUNNING"
             or None, 120, "the experiment's trial to run")
    cmd_id = c.det("cmd", "run", "-d", "--config", "resources.priority=50",
                   "echo", "after-the-experiment").stdout.strip()

    def queued_behind():
        jobs = [j["full"] for j in c.request("GET", "/api/v1/job-queues-v2")["jobs"]]
        mine = [j for j in jobs if j["entityId"] == cmd_id]
        return mine and mine[0]["type"] == "TYPE_COMMAND" and mine[0]
    job = wait_for(queued_behind, 30, "the command in the job queue")
    assert job["summary"]["state"] == "STATE_QUEUED"
    assert task(c, cmd_id)["allocations"][0]["state"] == "STATE_QUEUED"
    assert "TYPE_COMMAND" not in c.det("job", "list").stdout or True
    c.wait_state(exp_id, "STATE_COMPLETED")
    wait_for(lambda: "endTime" in task(c, cmd_id), 120, "the command to run after it")
    logs = c.det("cmd", "logs", cmd_id).stdout
    assert "after-the-experiment" in logs
    assert c.request("GET", f"/api/v1/commands/{cmd_id}")["command"]["exitCode"] == 0
