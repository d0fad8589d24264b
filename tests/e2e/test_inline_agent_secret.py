"""Agents the master launches get what they need to reach it. An agent secret given inline in
master.yaml (security.agent_token, not a file) is written to a 0600 file in the data dir and
passed as --agent-token-file, so a provisioned agent registers and the secret is on no command
line; with security.tls the agent gets the https URL and --master-cert-file."""

import json
import os
import pathlib
import signal
import ssl
import subprocess
import urllib.request
from typing import Optional

from cluster import BIN, Cluster, wait_for

SECRET = "inline-secret-9f3c1e"

MASTER_YAML = f"""\
security:
  agent_token: {SECRET}
resource_pools:
  - pool_name: grow
    provider:
      type: local
      min_instances: 1
      max_instances: 1
      slots_per_agent: 1
      max_agent_starting_period: 60s
resource_manager:
  default_compute_resource_pool: grow
  default_aux_resource_pool: grow
"""


def agents(c: Cluster) -> list:
    try:
        return c.request("GET", "/api/v1/agents")["agents"]
    except OSError:  # the master is not listening yet
        return []


def cmdlines() -> list:
    out = []
    for proc in pathlib.Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                pass
    return out


def stop(c: Cluster, master: subprocess.Popen, log, agent_pid: Optional[int]) -> None:
    """Stops the directly started master and the agent it provisioned, then removes the files."""
    master.send_signal(signal.SIGTERM)
    try:
        master.wait(timeout=60)
    except subprocess.TimeoutExpired:
        master.kill()
    if agent_pid is not None:
        try:
            os.kill(agent_pid, signal.SIGTERM)
        except OSError:
            pass
    log.close()
    c.cleanup()


def test_inline_agent_secret_reaches_a_provisioned_agent():
    c = Cluster(agents=0, slots=1)
    conf = c.tmp / "master.yaml"
    conf.write_text(MASTER_YAML)
    c.data_dir.mkdir(parents=True)
    log = open(c.tmp / "master.log", "w")
    master = subprocess.Popen(
        [str(BIN / "determined-master"), "--config-file", str(conf), "--port", str(c.port),
         "--data-dir", str(c.data_dir), *c.master_db_args()], stdout=log,
        stderr=subprocess.STDOUT)
    agent_pid = None
    try:
        wait_for(lambda: agents(c), 120,
                 "the provisioned agent to register with the inline secret")
        secret_file = c.data_dir / "agent_token.inline"
        assert secret_file.read_text().strip() == SECRET
        assert secret_file.stat().st_mode & 0o777 == 0o600
        record = json.loads((c.data_dir / "provisioner" / "grow-agent-1.json").read_text())
        agent_pid = record["pid"]
        agent_cmd = (pathlib.Path(f"/proc/{agent_pid}/cmdline").read_bytes()
                     .replace(b"\0", b" ").decode())
        assert str(secret_file) in agent_cmd, agent_cmd
        assert not [cl for cl in cmdlines() if SECRET in cl]
        assert "agent_token is not set" not in (c.tmp / "master.log").read_text()
    finally:
        stop(c, master, log, agent_pid)


def https_agents(url: str, context: ssl.SSLContext) -> list:
    def call(method: str, path: str, body=None, token=None):
        req = urllib.request.Request(url + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
        req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(req, timeout=30, context=context) as resp:
            return json.loads(resp.read().decode())
    try:
        token = call("POST", "/api/v1/auth/login",
                     {"username": "determined", "password": "", "isHashed": True})["token"]
        return call("GET", "/api/v1/agents", token=token)["agents"]
    except OSError:  # not listening yet
        return []


def test_provisioned_agent_reaches_an_https_master_with_its_certificate():
    """security.tls: the provisioned agent gets the https URL and the master's certificate
    (--master-cert-file) and registers over TLS."""
    c = Cluster(agents=0, slots=1)
    certs = c.tmp / "certs"
    certs.mkdir(parents=True)
    crt, key = certs / "master.crt", certs / "master.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out",
                    str(crt)], check=True, capture_output=True)
    conf = c.tmp / "master.yaml"
    conf.write_text(MASTER_YAML.replace(
        "security:\n", f"security:\n  tls:\n    cert: {crt}\n    key: {key}\n"))
    c.data_dir.mkdir(parents=True)
    log = open(c.tmp / "master.log", "w")
    master = subprocess.Popen(
        [str(BIN / "determined-master"), "--config-file", str(conf), "--port", str(c.port),
         "--data-dir", str(c.data_dir), *c.master_db_args()], stdout=log,
        stderr=subprocess.STDOUT)
    agent_pid = None
    context = ssl.create_default_context(cafile=str(crt))
    try:
        wait_for(lambda: https_agents(f"https://127.0.0.1:{c.port}", context), 120,
                 "the provisioned agent to register over https")
        record = json.loads((c.data_dir / "provisioner" / "grow-agent-1.json").read_text())
        agent_pid = record["pid"]
        agent_cmd = (pathlib.Path(f"/proc/{agent_pid}/cmdline").read_bytes()
                     .replace(b"\0", b" ").decode())
        assert f"https://127.0.0.1:{c.port}" in agent_cmd, agent_cmd
        assert f"--master-cert-file {crt}" in agent_cmd, agent_cmd
    finally:
        stop(c, master, log, agent_pid)
