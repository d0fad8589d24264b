"""Pools that grow on Slurm: a pool with a `slurm` provider (min 0, max 2, one slot per agent)
under the agent resource manager submits one Slurm job per agent to the local Slurm when trials
wait, runs a search needing two agents at once on them (the agents authenticate with the
cluster's agent secret, given inline), and after max_idle_agent_period stops them (scancel), back
to zero agents and no jobs."""

import os
import pathlib
import subprocess

import pytest

from cluster import wait_for
from test_provisioner import search_config
from test_slurm import SlurmCluster

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
SECRET = "slurm-provider-secret-4b1d"

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/sbin/slurmctld") or not os.path.exists("/usr/sbin/munged"),
    reason="slurmctld or munged is not installed (Debian packages slurmctld slurmd munge)")


def master_yaml(slurm_conf: pathlib.Path) -> str:
    return f"""\
security:
  agent_token: {SECRET}
resource_pools:
  - pool_name: grow
    provider:
      type: slurm
      partition: compute
      slurm_conf: {slurm_conf}
      min_instances: 0
      max_instances: 2
      slots_per_agent: 1
      max_idle_agent_period: 3s
      max_agent_starting_period: 60s
resource_manager:
  default_compute_resource_pool: grow
  default_aux_resource_pool: grow
"""


def agent_jobs(c: SlurmCluster) -> list:
    """[(job id, state, name)] of the local Slurm's jobs named like the pool's agents."""
    out = subprocess.run(["squeue", "-h", "-o", "%i|%T|%j"], env=c.slurm_env(),
                         capture_output=True, text=True, check=True).stdout
    jobs = [tuple(line.split("|", 2)) for line in out.splitlines()]
    return sorted(j for j in jobs if j[2].startswith("grow-agent-"))


def pool_agents(c: SlurmCluster) -> list:
    return [a for a in c.request("GET", "/api/v1/agents")["agents"]
            if a.get("resourcePool") == "grow"]


def test_slurm_pool_grows_for_a_search_and_shrinks_to_zero(tmp_path):
    c = SlurmCluster(agents=0, slots=0)
    c.up()  # the local Slurm, and a Slurm-RM master that is replaced below
    try:
        c.det("deploy", "local", "master-down", "--data-dir", str(c.data_dir))
        conf = c.tmp / "master.yaml"
        conf.write_text(master_yaml(c.data_dir / "slurm" / "slurm.conf"))
        c.master_up("--master-config-path", str(conf))
        pools = {p["name"]: p for p in c.request("GET", "/api/v1/resource-pools")["resourcePools"]}
        assert pools["grow"]["minAgents"] == 0 and pools["grow"]["maxAgents"] == 2
        assert pool_agents(c) == [] and agent_jobs(c) == []  # min 0: nothing before work

        exp = c.create(search_config(tmp_path, "grow-on-slurm"), FIXTURES)
        seen = set()

        def two_running():
            agents = [a for a in pool_agents(c) if a.get("connected", True)]
            seen.update(a["id"] for a in agents)
            busy = [a for a in agents
                    if any(s.get("container") for s in a.get("slots", {}).values())]
            return sorted(a["id"] for a in busy) if len(busy) == 2 else None

        assert wait_for(two_running, 180, "two Slurm-provisioned agents running a trial each") \
            == ["grow-agent-1", "grow-agent-2"]
        jobs = agent_jobs(c)
        assert [(j[1], j[2]) for j in jobs] == [("RUNNING", "grow-agent-1"),
                                                ("RUNNING", "grow-agent-2")], jobs
        c.wait_state(exp, "STATE_COMPLETED", timeout=240)
        trials = c.trials(exp)
        assert len(trials) == 2 and all(t["state"] == "STATE_COMPLETED" for t in trials)
        assert seen <= {"grow-agent-1", "grow-agent-2"}, seen

        # Idle for max_idle_agent_period (3 s): both are stopped through Slurm.
        wait_for(lambda: pool_agents(c) == [] and agent_jobs(c) == [], 120,
                 "the pool to shrink back to zero agents and jobs")
        log = (c.data_dir / "master.log").read_text(errors="replace")
        assert "provisioner: stopping agent grow-agent-1 of pool grow (idle)" in log
        assert "provisioner: stopping agent grow-agent-2 of pool grow (idle)" in log
        assert "is Slurm job" in log
        # The secret reached the agents as a file, never on a command line.
        assert SECRET not in log
        out = (c.data_dir / "provisioner-slurm" / "grow-agent-1.log").read_text(errors="replace")
        assert SECRET not in out
    finally:
        c.cleanup()
