"""The agent's warm python (docs/operations.md, "Warm Python"): a python entrypoint is forked by
the agent's zygote, and what the trial sees (working directory, environment, sys.path, argv,
__main__, stdio, exit code, logs) is what a cold start gives. The same trial runs once warm and
once cold (DET_WARM_PYTHON=0 in its environment_variables)."""

import json
import pathlib
import re
from typing import Any, Dict

from cluster import Cluster, wait_for

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "warm_python"

# Per-trial values (ids, tokens, work dir) and the switch itself.
PER_TRIAL = re.compile(r"^DET_(?!MASTER$|MASTER_HOST$|MASTER_ADDR$|MASTER_PORT$|PYTHON_EXECUTABLE$"
                       r"|CLUSTER_ID$|MASTER_ID$|AGENT_ID$)")


def run_trial(c: Cluster, tmp: pathlib.Path, warm: bool) -> Dict[str, Any]:
    cfg = tmp / ("warm.yaml" if warm else "cold.yaml")
    text = (FIXTURE / "warm.yaml").read_text()
    if not warm:
        text += "environment:\n  environment_variables: [DET_WARM_PYTHON=0]\n"
    cfg.write_text(text)
    exp_id = c.create(cfg, FIXTURE)
    c.wait_state(exp_id, "STATE_ERROR", timeout=120)
    (trial,) = c.trials(exp_id)
    logs = c.det("trial", "logs", str(trial["id"])).stdout
    line = re.search(r"INTROSPECT (\{.*\})$", logs, re.M)
    assert line, logs
    report = json.loads(line.group(1))
    report["logs"] = logs
    report["trial"] = trial
    return report


def test_warm_trial_matches_a_cold_one(own_cluster, tmp_path):
    c = own_cluster
    warm = run_trial(c, tmp_path, warm=True)
    cold = run_trial(c, tmp_path, warm=False)

    # The warm path ran: the trial's parent is the zygote, and the agent logged the fork.
    assert "determined.exec.zygote" in warm["parent"], warm["parent"]
    assert "determined.exec.zygote" not in cold["parent"], cold["parent"]
    agent_log = (c.data_dir / "agent-1.log").read_text()
    assert re.search(rf"warm start, pid {warm['pid']} forked by the warm python", agent_log)
    assert re.search(r"cold start: DET_WARM_PYTHON=0 turns the warm start off", agent_log)

    # The exit code reaches the master, and both outputs were shipped.
    for r in (warm, cold):
        assert f"Trial {r['trial']['id']} (Experiment" in r["logs"]
        assert re.search(rf"Trial {r['trial']['id']} \(Experiment \d+\) exited with code 3",
                         r["logs"]), r["logs"]
        assert "to stderr" in r["logs"]
        assert r["trial_id"] == r["trial"]["id"]

    # What the trial sees matches, up to what differs between any two trials.
    def stable(env: Dict[str, str]) -> Dict[str, str]:
        return {k: v for k, v in env.items() if not PER_TRIAL.match(k) and k != "PWD"}

    assert stable(warm["env"]) == stable(cold["env"])
    assert set(warm["env"]) == set(cold["env"]) - {"DET_WARM_PYTHON"}
    for r in (warm, cold):
        assert r["env"]["PWD"] == r["cwd"] == r["env"]["DET_WORKDIR"]
        assert r["file"] == r["cwd"] + "/introspect.py"
        assert r["path"][0] == r["cwd"]
        assert r["stdin"] == "/dev/null"
        assert r["group_is_session"]
    assert warm["path"][1:] == cold["path"][1:]
    for key in ("argv", "orig_argv", "executable", "main_globals"):
        assert warm[key] == cold[key], key
    assert warm["argv"] == ["introspect.py", "--flag", "value"]


def test_agent_kill9_cleans_up_a_warm_trial(own_cluster, tmp_path):
    """A kill -9 of the agent leaves its warm python and the trial it forked running (as a cold
    trial would be); the returning agent kills both (they carry its DET_AGENT_ZYGOTE marker,
    not the trial's DET_CONTAINER_ID) and the trial is scheduled again."""
    from test_agent_restart import kill9_agent, live, records

    c = own_cluster
    cfg = tmp_path / "sleeper.yaml"
    cfg.write_text((FIXTURE / "warm.yaml").read_text().replace(
        "python3 introspect.py --flag value", "python3 sleeper.py").replace(
        "max_restarts: 0", "max_restarts: 1"))
    exp_id = c.create(cfg, FIXTURE)
    try:
        trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 30, "trial")
        wait_for(lambda: "sleeper up" in c.det("trial", "logs", str(trial["id"])).stdout, 60,
                 "the trial to start")
        (record,) = records(c, "agent-1")
        pid = record["pid"]
        zygote = int(pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert "determined.exec.zygote" in pathlib.Path(f"/proc/{zygote}/cmdline").read_text()

        kill9_agent(c, "agent-1")
        assert live(pid) and live(zygote), "the trial and its zygote outlive the agent"
        c.det("deploy", "local", "agent-up", "--master-port", str(c.port), "--agents", "1",
              "--slots-per-agent", "2", "--data-dir", str(c.data_dir), timeout=120)
        log = c.data_dir / "agent-1.log"
        cleaned = rf"cleaned up allocation {re.escape(record['allocationId'])} left by a " \
                  rf"previous run \(recorded pid {pid}\); killed [1-9]"
        wait_for(lambda: re.search(cleaned, log.read_text()), 30, "the cleanup")
        wait_for(lambda: not live(pid) and not live(zygote), 10, "the old processes to end")
        # The trial runs again (from the agent that came back), warm.
        wait_for(lambda: log.read_text().count("warm start, pid") >= 2, 60, "a second start")
    finally:
        c.request("POST", f"/api/v1/experiments/{exp_id}/kill")
