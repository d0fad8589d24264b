"""An agent secret given inline in master.yaml (security.agent_token, not a file) reaches the
agents the master launches: the master writes it to a 0600 file in its data dir and passes that
file (--agent-token-file), so a provisioned agent registers and the secret is on no command
line."""

import json
import os
import pathlib
import signal
import subprocess

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


def test_inline_agent_secret_reaches_a_provisioned_agent():
    c = Cluster(agents=0, slots=1)
    conf = c.tmp / "master.yaml"
    conf.write_text(MASTER_YAML)
    c.data_dir.mkdir(parents=True)
    log = open(c.tmp / "master.log", "w")
    master = subprocess.Popen(
        [str(BIN / "determined-master"), "--config-file", str(conf), "--port", str(c.port),
         "--data-dir", str(c.data_dir)], stdout=log, stderr=subprocess.STDOUT)
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
