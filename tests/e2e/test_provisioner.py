"""Pools that grow: a pool with a `local` provider (min 0, max 2, one slot per agent) starts
agent processes when trials wait, runs a search needing two agents at once on them, and stops
them again after max_idle_agent_period, back to zero."""

import json
import os
import pathlib
import signal

from cluster import Cluster, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"

MASTER_YAML = """\
resource_pools:
  - pool_name: grow
    provider:
      type: local
      min_instances: 0
      max_instances: 2
      slots_per_agent: 1
      max_idle_agent_period: 3s
      max_agent_starting_period: 60s
resource_manager:
  default_compute_resource_pool: grow
  default_aux_resource_pool: grow
"""


def search_config(tmp: pathlib.Path, name: str = "grow") -> pathlib.Path:
    """A random search of two 1-slot trials (the pool must grow to two agents)."""
    cfg = tmp / "grow.yaml"
    cfg.write_text(
        f"name: {name}\nentrypoint: python3 flaky.py\n"
        "hyperparameters: {x: {type: double, minval: 0.0, maxval: 1.0}, sleep_per_step: 0.3,"
        " checkpoint_every: 0}\n"
        "searcher: {name: random, metric: validation_loss, max_trials: 2,"
        " max_concurrent_trials: 2, max_length: {batches: 10}}\n"
        "resources: {slots_per_trial: 1}\nmax_restarts: 0\n")
    return cfg


def start(tmp: pathlib.Path) -> Cluster:
    c = Cluster(agents=0, slots=1)
    conf = c.tmp / "master.yaml"
    conf.write_text(MASTER_YAML)
    out = c.det("deploy", "local", "cluster-up", "--master-port", str(c.port), "--agents", "0",
                "--data-dir", str(c.data_dir), "--master-config-path", str(conf),
                timeout=120).stdout
    assert "0 agents" in out, out
    return c


def pool_agents(c: Cluster) -> list:
    return [a for a in c.request("GET", "/api/v1/agents")["agents"]
            if a.get("resourcePool") == "grow"]


def records(c: Cluster) -> list:
    root = c.data_dir / "provisioner"
    return sorted(p.stem for p in root.glob("*.json")) if root.exists() else []


def alive(pid: int) -> bool:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_pool_grows_for_a_search_and_shrinks_to_zero(tmp_path):
    c = start(tmp_path)
    try:
        pools = {p["name"]: p for p in c.request("GET", "/api/v1/resource-pools")["resourcePools"]}
        assert pools["grow"]["minAgents"] == 0 and pools["grow"]["maxAgents"] == 2
        assert pools["grow"]["maxIdleAgentPeriod"] == 3
        assert pool_agents(c) == []  # min 0: nothing runs before work arrives

        exp = c.create(search_config(tmp_path), FIXTURES)
        seen = set()
        both = []

        def two_running():
            agents = [a for a in pool_agents(c) if a.get("connected", True)]
            seen.update(a["id"] for a in agents)
            busy = [a for a in agents
                    if any(s.get("container") for s in a.get("slots", {}).values())]
            if len(busy) == 2:
                both.append(sorted(a["id"] for a in busy))
            return len(busy) == 2

        wait_for(two_running, 120, "two provisioned agents running a trial each")
        assert both[-1] == ["grow-agent-1", "grow-agent-2"]
        assert records(c) == ["grow-agent-1", "grow-agent-2"]  # each launched once, recorded
        c.wait_state(exp, "STATE_COMPLETED", timeout=240)
        trials = c.trials(exp)
        assert len(trials) == 2 and all(t["state"] == "STATE_COMPLETED" for t in trials)
        # Never more agents than max_instances, and only while work waited or ran.
        assert seen <= {"grow-agent-1", "grow-agent-2"}, seen

        # Idle for max_idle_agent_period (3 s): both stop; the pool is back to zero.
        wait_for(lambda: pool_agents(c) == [] and records(c) == [], 90,
                 "the pool to shrink back to zero agents")
        pools = {p["name"]: p for p in c.request("GET", "/api/v1/resource-pools")["resourcePools"]}
        assert pools["grow"]["numAgents"] == 0
        log = (c.data_dir / "master.log").read_text(errors="replace")
        assert "provisioner: stopping agent grow-agent-1 of pool grow (idle)" in log
        assert "provisioner: stopping agent grow-agent-2 of pool grow (idle)" in log
    finally:
        c.cleanup()


def test_master_restart_refinds_its_agents_and_cluster_down_stops_them(tmp_path):
    c = start(tmp_path)
    try:
        cfg = search_config(tmp_path)
        cfg.write_text(cfg.read_text().replace("max_trials: 2", "max_trials: 1")
                       .replace("batches: 10", "batches: 200"))
        exp = c.create(cfg, FIXTURES)
        wait_for(lambda: any(a.get("connected", True) for a in pool_agents(c)), 120,
                 "a provisioned agent")
        assert records(c) == ["grow-agent-1"]
        record = json.loads((c.data_dir / "provisioner" / "grow-agent-1.json").read_text())
        assert record["pool"] == "grow" and record["slots"] == 1
        agent_pid = record["pid"]

        # kill -9 of the master: the agent keeps running; the next master re-finds it rather
        # than starting another for the same trial.
        os.kill(c.master_pid(), signal.SIGKILL)
        wait_for(lambda: not c.master_running(), 30, "the master to die")
        conf = c.tmp / "master.yaml"
        c.master_up("--master-config-path", str(conf), timeout=120)
        wait_for(lambda: any(a.get("connected", True) for a in pool_agents(c)), 120,
                 "the agent to register with the new master")
        assert records(c) == ["grow-agent-1"]
        assert alive(agent_pid)
        log = (c.data_dir / "master.log").read_text(errors="replace")
        assert "provisioner: re-found agent grow-agent-1 of pool grow" in log

        c.det("experiment", "kill", str(exp))
        c.down()
        assert records(c) == []
        wait_for(lambda: not alive(agent_pid), 30, "cluster-down to stop the provisioned agent")
    finally:
        c.cleanup()
