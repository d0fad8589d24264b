"""A kill -9 of an agent while a trial runs: the trial is scheduled again from its latest
checkpoint and the restart is not counted.

a. The agent comes back (same name and data dir): before registering it kills the trial
   processes its previous run left behind (their output pipes died with it, so they cannot be
   re-adopted), the master treats the allocation as lost, and the trial resumes on it.
b. The agent stays away: after the master's agent_timeout the trial resumes on another agent.
"""

import json
import os
import pathlib
import re
import signal
from typing import List

from cluster import Cluster, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def live_processes_of(c: Cluster, allocation_id: str) -> List[int]:
    """Live (non-zombie) processes of this cluster whose environment names the allocation.
    Allocation ids repeat across clusters (the searcher's request ids come from the experiment
    seed), so the work dir under this cluster's data dir must match too: tests run in parallel,
    and a bare id match once killed another cluster's trial."""
    entry = f"DET_CONTAINER_ID={allocation_id}".encode()
    workdir = f"DET_WORKDIR={c.data_dir}/".encode()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{name}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        env = environ.split(b"\0")
        if state not in ("Z", "X") and entry in env and any(e.startswith(workdir) for e in env):
            pids.append(int(name))
    return pids


def kill_processes_of(c: Cluster, allocation_id: str) -> None:
    for pid in live_processes_of(c, allocation_id):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def agent_pid(c: Cluster, agent: str) -> int:
    return int((c.data_dir / f"{agent}.pid").read_text().split()[0])


def kill9_agent(c: Cluster, agent: str) -> None:
    pid = agent_pid(c, agent)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not live(pid), 10, f"{agent} to die")


def live(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def records(c: Cluster, agent: str) -> List[dict]:
    """The agent's records of the allocations it launched (see agent/allocation_records.h)."""
    d = c.data_dir / agent / "allocations"
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def slow_config(tmp_path: pathlib.Path, entrypoint: str, sleep: float) -> pathlib.Path:
    """flaky.yaml (20 steps, a checkpoint every 5) with `sleep` seconds per step."""
    cfg = tmp_path / "slow.yaml"
    text = (FIXTURES / "flaky.yaml").read_text()
    text = text.replace("sleep_per_step: 0.0", f"sleep_per_step: {sleep}")
    text = text.replace("entrypoint: python3 flaky.py", f"entrypoint: {entrypoint}")
    assert f"entrypoint: {entrypoint}" in text and f"sleep_per_step: {sleep}" in text
    cfg.write_text(text)
    return cfg


def check_resumed_from_latest_checkpoint(c: Cluster, exp_id: int, old_allocation: str) -> None:
    """Completed, restarts not counted, every step stored once, and the second run started from
    the last checkpoint the first one reported."""
    (t,) = c.trials(exp_id)
    assert t["restarts"] == 0, t
    steps = [m["stepsCompleted"] for m in c.metrics(t["id"], "training")]
    assert steps == list(range(1, 21)), steps

    logs = c.det("trial", "logs", str(t["id"])).stdout
    resumed = re.findall(r"flaky: resumed from (\S+) at step (\d+)", logs)
    assert len(resumed) == 1, logs
    uuid, step = resumed[0][0], int(resumed[0][1])
    ckpts = c.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    first_run = [k for k in ckpts if k["allocationId"] == old_allocation]
    later = [k for k in ckpts if k["allocationId"] != old_allocation]
    assert first_run and later, ckpts
    latest = max(first_run, key=lambda k: k["metadata"]["steps_completed"])
    assert (uuid, step) == (latest["uuid"], latest["metadata"]["steps_completed"]), (resumed, ckpts)
    assert all(k["metadata"]["steps_completed"] > step for k in later), ckpts


def test_agent_kill9_and_restart_cleans_up_and_resumes(own_cluster, tmp_path):
    c = own_cluster
    # `tee -p` keeps the trial alive once its stdout pipe to the dead agent is gone (a trial that
    # seldom prints does not notice either), so there is an orphan to clean up.
    cfg = slow_config(tmp_path, '"python3 flaky.py 2>&1 | tee -p flaky.out"', sleep=0.5)
    exp_id = c.create(cfg, FIXTURES)
    trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 30, "trial")
    wait_for(lambda: len(c.metrics(trial["id"], "training")) >= 6, 60, "six training metrics")
    (record,) = records(c, "agent-1")
    allocation = record["allocationId"]
    assert record["pid"] > 0 and live(record["pid"]), record

    try:
        kill9_agent(c, "agent-1")
        orphans = live_processes_of(c, allocation)
        assert record["pid"] in orphans, "the trial should outlive its agent until it returns"
        # Progress goes on without the agent (the orphan still reaches the master).
        before = len(c.metrics(trial["id"], "training"))
        wait_for(lambda: len(c.metrics(trial["id"], "training")) > before, 30, "orphan progress")

        c.det("deploy", "local", "agent-up", "--master-port", str(c.port), "--agents", "1",
              "--slots-per-agent", "2", "--data-dir", str(c.data_dir), timeout=120)
        log = c.data_dir / "agent-1.log"
        cleaned = wait_for(
            lambda: re.search(rf"cleaned up allocation {re.escape(allocation)} left by a previous "
                              r"run \(recorded pid \d+\); killed (\d+) process", log.read_text()),
            30, "the returning agent to clean up")
        assert int(cleaned.group(1)) >= 1, "the orphan should still have run when the agent came back"
        assert live_processes_of(c, allocation) == [], "the orphaned trial processes should be gone"
        assert all(not live(pid) for pid in orphans)
        assert not (c.data_dir / "agent-1" / "work" / allocation).exists()

        c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    finally:
        kill_processes_of(c, allocation)
    check_resumed_from_latest_checkpoint(c, exp_id, allocation)
    assert records(c, "agent-1") == [], "records go once the processes are gone"


def test_agent_kill9_moves_trial_to_another_agent(tmp_path):
    c = Cluster(agents=2, slots=1)
    master_cfg = tmp_path / "master.yaml"
    master_cfg.write_text("agent_timeout: 3\n")
    try:
        c.det("deploy", "local", "cluster-up", "--master-port", str(c.port), "--agents", "2",
              "--slots-per-agent", "1", "--data-dir", str(c.data_dir), "--master-config-path",
              str(master_cfg), timeout=120)
        cfg = slow_config(tmp_path, "python3 flaky.py", sleep=0.3)
        exp_id = c.create(cfg, FIXTURES)
        trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 30, "trial")
        wait_for(lambda: len(c.metrics(trial["id"], "training")) >= 6, 60, "six training metrics")
        on = [a for a in ("agent-1", "agent-2") if records(c, a)]
        assert len(on) == 1, on
        dead, other = on[0], ("agent-2" if on[0] == "agent-1" else "agent-1")
        allocation = records(c, dead)[0]["allocationId"]
        try:
            kill9_agent(c, dead)

            def agent_connected(name):
                agents = c.request("GET", "/api/v1/agents")["agents"]
                return {a["id"]: a.get("connected", True) for a in agents}.get(name)

            wait_for(lambda: agent_connected(dead) is False, 30, f"{dead} to be marked lost")
            c.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
            assert agent_connected(other) is True
        finally:
            kill_processes_of(c, allocation)  # nobody else will: its agent is gone for good
        logs = c.det("trial", "logs", str(trial["id"])).stdout
        assigned = re.findall(r"was assigned to agent (\S+)", logs)
        # The idle agent, waiting in its long poll, is never taken for lost.
        assert assigned == [dead, other], assigned
        assert f"agent {other} was lost" not in logs
        check_resumed_from_latest_checkpoint(c, exp_id, allocation)
    finally:
        c.cleanup()
