"""HTTPS and agent credentials end to end, on real master, agent, det and trial processes.

1. A master serving HTTPS with a certificate signed by a CA made here: det, the agent and a
   trial (the Python package) all verify it with DET_MASTER_CERT_FILE; a client trusting
   another CA fails at once with a message naming the master and the reason.
2. cluster-up's agent secret: registering without it or with a wrong one is refused, an agent id
   cannot be taken over by another key, and an agent holding the secret can neither read
   another agent's commands nor post exits for allocations placed on another agent.
"""

import json
import pathlib
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any, Dict, Optional, Tuple

import pytest
import yaml

from cluster import PYTHON, REPO, Cluster, brought_up, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca(d: pathlib.Path, name: str) -> Tuple[pathlib.Path, pathlib.Path]:
    key, crt = d / f"{name}.key", d / f"{name}.crt"
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
            "-keyout", str(key), "-out", str(crt))
    return crt, key


def make_server_cert(d: pathlib.Path, ca: Tuple[pathlib.Path, pathlib.Path]
                     ) -> Tuple[pathlib.Path, pathlib.Path]:
    key, csr, crt, ext = d / "master.key", d / "master.csr", d / "master.crt", d / "master.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", str(key),
            "-out", str(csr))
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
            "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(crt))
    return crt, key


def call(url: str, method: str, path: str, body: Any = None,
         headers: Optional[Dict[str, str]] = None,
         context: Optional[ssl.SSLContext] = None) -> Tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=60, context=context) as resp:
            return resp.status, json.loads(resp.read().decode() or "{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "{}")


def short_config(tmp: pathlib.Path, batches: int = 4, sleep: float = 0.0) -> pathlib.Path:
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["searcher"]["max_length"] = {"batches": batches}
    cfg["hyperparameters"]["sleep_per_step"] = sleep
    cfg["max_restarts"] = 0
    out = tmp / "exp.yaml"
    out.write_text(yaml.safe_dump(cfg))
    return out


@pytest.fixture
def tls_cluster():
    c = Cluster(agents=1, slots=1)
    certs = c.tmp / "certs"
    certs.mkdir()
    ca = make_ca(certs, "test-ca")
    other_ca = make_ca(certs, "other-ca")
    crt, key = make_server_cert(certs, ca)
    c._set_port(c.port)
    c.url = f"https://127.0.0.1:{c.port}"
    c.env["DET_MASTER"] = c.url
    c.env["DET_MASTER_CERT_FILE"] = str(ca[0])
    out = c.det("deploy", "local", "cluster-up", "--master-port", str(c.port), "--agents", "1",
                "--slots-per-agent", "1", "--data-dir", str(c.data_dir), "--tls-cert", str(crt),
                "--tls-key", str(key), timeout=120)
    assert f"master {c.url}" in out.stdout, out.stdout
    c.ca, c.other_ca = ca[0], other_ca[0]
    try:
        yield c
    finally:
        c.cleanup()


def test_det_agent_and_trial_verify_the_master_over_https(tls_cluster, tmp_path):
    c = tls_cluster
    ctx = ssl.create_default_context(cafile=str(c.ca))
    status, info = call(c.url, "GET", "/api/v1/master", context=ctx)
    assert status == 200, info
    # The agent registered over HTTPS (cluster-up waited for it); det works with the CA.
    assert "agent-1" in c.det("agent", "list").stdout
    assert c.det("master", "info").returncode == 0
    # A trial reports its metrics through the Python package over HTTPS.
    exp_id = c.create(short_config(tmp_path), FIXTURES)
    token = call(c.url, "POST", "/api/v1/auth/login",
                 {"username": "determined", "password": "", "isHashed": True}, context=ctx)[1]
    auth = {"Authorization": f"Bearer {token['token']}"}

    def state():
        s, body = call(c.url, "GET", f"/api/v1/experiments/{exp_id}", headers=auth, context=ctx)
        return body["experiment"]["state"] if s == 200 else None

    final = wait_for(lambda: state() in ("STATE_COMPLETED", "STATE_ERROR", "STATE_CANCELED")
                     and state(), 240, f"experiment {exp_id} to finish")
    logs = c.det("experiment", "logs", str(exp_id), check=False)
    assert final == "STATE_COMPLETED", logs.stdout + logs.stderr
    _, trials = call(c.url, "GET", f"/api/v1/experiments/{exp_id}/trials", headers=auth,
                     context=ctx)
    trial_id = trials["trials"][0]["id"]
    _, metrics = call(c.url, "GET", f"/api/v1/trials/{trial_id}/metrics?group=training",
                      headers=auth, context=ctx)
    assert metrics["metrics"], "the trial reported no training metrics over HTTPS"


def test_a_client_trusting_another_ca_is_refused_clearly(tls_cluster):
    c = tls_cluster
    # det with the wrong CA (the --cert-file flag wins over DET_MASTER_CERT_FILE).
    proc = c.det("--cert-file", str(c.other_ca), "master", "info", check=False, timeout=60)
    assert proc.returncode != 0
    assert f"cannot verify the TLS certificate of the master at {c.url}" in proc.stderr, proc.stderr
    assert "certificate" in proc.stderr.lower()
    # The Python package: one attempt, no retry loop, a message naming the master.
    script = (
        "import sys\n"
        "from determined.common import api\n"
        "s = api.Session(sys.argv[1], retry_seconds=300)\n"
        "try:\n"
        "    s.get('/api/v1/master')\n"
        "except api.errors.MasterCertificateError as e:\n"
        "    print('REFUSED', e)\n"
    )
    env = dict(c.env, DET_MASTER_CERT_FILE=str(c.other_ca), PYTHONPATH=str(REPO / "harness"))
    out = subprocess.run([PYTHON, "-c", script, c.url], env=env, capture_output=True, text=True,
                         timeout=60)
    assert "REFUSED" in out.stdout, out.stdout + out.stderr
    assert f"cannot verify the TLS certificate of the master at {c.url}" in out.stdout
    # With the right CA the same session works; noverify skips the check.
    for cert in (str(c.ca), "noverify"):
        env["DET_MASTER_CERT_FILE"] = cert
        ok = subprocess.run([PYTHON, "-c", "import sys\nfrom determined.common import api\n"
                             "print(api.Session(sys.argv[1]).get('/api/v1/master')['version'])",
                             c.url], env=env, capture_output=True, text=True, timeout=60)
        assert ok.returncode == 0, ok.stderr
    # Plain HTTP to the HTTPS port gets no answer, and the master keeps serving.
    with pytest.raises(Exception):
        urllib.request.urlopen(f"http://127.0.0.1:{c.port}/api/v1/master", timeout=10).read()
    assert c.det("master", "info").returncode == 0


# 2. Agent credentials --------------------------------------------------------------------------

@pytest.fixture
def cred_cluster():
    with brought_up(Cluster(agents=1, slots=1)) as c:
        yield c


def test_agent_routes_need_the_agents_own_credential(cred_cluster, tmp_path):
    c = cred_cluster
    secret = (c.data_dir / "agent_token").read_text().strip()
    key_1 = (c.data_dir / "agent-1" / "agent.key").read_text().strip()
    assert secret and key_1
    reg = {"resourcePool": "default", "hostname": "evil", "version": "0.38.1", "slots": [],
           "running": []}

    def agents():
        return {a["id"] for a in c.request("GET", "/api/v1/agents")["agents"]}

    # No secret, a wrong one: 401, and nothing registered.
    s, body = c.request_status("POST", "/agents/evil/register", reg)
    assert s == 401 and "agent secret" in body["error"]["error"], body
    s, body = c.request_status("POST", "/agents/evil/register", reg,
                               {"X-Det-Agent-Secret": "guess", "X-Det-Agent-Key": "k"})
    assert s == 401 and "wrong agent secret" in body["error"]["error"], body
    assert "evil" not in agents()
    # Commands and events of agent-1 without credentials: 401.
    assert c.request_status("GET", "/agents/agent-1/commands?after=0&timeoutSeconds=0")[0] == 401
    assert c.request_status("POST", "/agents/agent-1/events", {"events": []})[0] == 401

    # An agent holding the cluster secret but another key cannot take agent-1's id ...
    evil = {"X-Det-Agent-Secret": secret, "X-Det-Agent-Key": "evil-key"}
    s, body = c.request_status("POST", "/agents/agent-1/register", reg, evil)
    assert s == 403 and "bound to another agent's credential" in body["error"]["error"], body
    # ... nor read its commands (they carry allocation tokens) or post its events.
    s, _ = c.request_status("GET", "/agents/agent-1/commands?after=0&timeoutSeconds=0",
                            headers=evil)
    assert s == 403
    # It can register as itself (zero slots, so nothing is placed on it).
    s, body = c.request_status("POST", "/agents/evil/register", reg, evil)
    assert s == 200, body

    # A trial runs on agent-1; the other agent posts an exit for its allocation: refused.
    exp_id = c.create(short_config(tmp_path, batches=200, sleep=0.2), FIXTURES)
    trial = wait_for(lambda: c.trials(exp_id), 60, "the trial")[0]
    wait_for(lambda: c.metrics(trial["id"], "training"), 120, "the trial's first metrics")
    allocs = c.request("GET", "/api/v1/tasks")["allocationIdToSummary"]
    (alloc_id,) = [a for a, v in allocs.items() if v.get("state") != "STATE_TERMINATED"][:1]
    s, body = c.request_status("POST", "/agents/evil/events",
                               {"events": [{"type": "exited", "allocationId": alloc_id,
                                            "exitCode": 1}]}, evil)
    assert s == 403 and "not placed on it" in body["error"]["error"], body
    # The trial was not touched: it keeps reporting and the experiment stays active.
    n = len(c.metrics(trial["id"], "training"))
    wait_for(lambda: len(c.metrics(trial["id"], "training")) > n, 60, "more metrics")
    assert c.experiment(exp_id)["state"] in ("STATE_ACTIVE", "STATE_RUNNING")
    c.det("experiment", "kill", str(exp_id))

    # The real agent still works with its own credential.
    own = {"X-Det-Agent-Secret": secret, "X-Det-Agent-Key": key_1}
    s, _ = c.request_status("GET", "/agents/agent-1/commands?after=999999&timeoutSeconds=0",
                            headers=own)
    assert s == 200
