"""Real worker processes started by determined.launch.torch_distributed: DistributedContext
collectives over TCP, sharded checkpoints, distributed PyTorchTrial reducers, exit semantics."""

import json
import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "fixtures")
TORCH_PY = "/usr/bin/python3"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DET_")}
    env["PYTHONPATH"] = HARNESS
    env["DET_DIST_TIMEOUT"] = "60"
    env.update(extra)
    return env


def _launch(args, timeout=90, python=sys.executable, **env):
    return subprocess.run([python, "-m", "determined.launch.torch_distributed"] + args,
                          env=_env(**env), capture_output=True, text=True, timeout=timeout, cwd=FIXTURES)


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_and_sharded_checkpoint(tmp_path, n):
    out = tmp_path / "out.json"
    p = _launch(["--", os.path.join(FIXTURES, "dist_collectives.py"), str(out), str(tmp_path / "ck")],
                DET_SLOT_IDS=json.dumps(list(range(n))))
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out.read_text())
    assert len(res) == n
    assert res[0]["gather"] == [10 * r for r in range(n)]
    assert all(r["gather"] is None for r in res[1:])
    assert all(r["allgather"] == [{"r": i} for i in range(n)] for r in res)
    assert all(r["broadcast"] == "chief" for r in res)
    assert res[0]["gather_local"] == list(range(n)) and res[1]["gather_local"] is None
    assert all(r["allgather_local"] == list(range(n)) and r["broadcast_local"] == "local-0" for r in res)
    (sid,) = {r["sid"] for r in res}
    files = sorted(os.listdir(tmp_path / "ck" / sid))
    assert files == ["metadata.json"] + [f"rank{r}.txt" for r in range(n)]


@pytest.mark.parametrize("n", [2, 3])
def test_distributed_trial_reducers(tmp_path, n):
    pytest.importorskip("torch")
    out = tmp_path / "out.json"
    p = _launch([f"--nproc_per_node={n}", "--", os.path.join(FIXTURES, "dist_trial.py"), str(out)],
                python=TORCH_PY, CKPT_DIR=str(tmp_path / "ck"), timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    res = json.loads(out.read_text())
    (m,) = res["metrics"]
    assert m["ids"] == list(range(11)) and sum(m["ids"]) == 11 * 10 // 2  # every item exactly once
    assert m["n"] == 11.0 and m["mx"] == 10.0 and m["mn"] == 0.0  # SUM, MAX, MIN across ranks
    assert len(set(res["weights"])) == 1 and res["weights"][0] != 0.0  # replicas stay identical
    assert "[rank=0] [validation] steps_completed=4" in p.stdout  # chief-only reporting
    assert "[rank=1] [validation]" not in p.stdout


def test_launcher_failing_worker_terminates_others(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(
        "import os, sys, time\n"
        "if os.environ['RANK'] == '1':\n    sys.exit(7)\n"
        "open(os.environ['MARK'] + os.environ['RANK'], 'w').close()\n"
        "time.sleep(120)\n")
    t0 = time.monotonic()
    p = _launch(["--nproc_per_node", "3", "--", str(script)], MARK=str(tmp_path / "started"), timeout=60)
    assert p.returncode == 7, p.stderr
    assert time.monotonic() - t0 < 30
    assert "terminating the other workers" in p.stderr


def test_launcher_all_zero_and_env(tmp_path):
    code = ("import os; print(','.join(os.environ[k] for k in ('RANK','WORLD_SIZE','LOCAL_RANK',"
            "'LOCAL_WORLD_SIZE','CROSS_RANK','CROSS_SIZE','DET_CHIEF_IP')))")
    p = _launch(["--", sys.executable, "-c", code], DET_SLOT_IDS="[0,1]")
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.splitlines()) == ["[rank=0] 0,2,0,2,0,1,127.0.0.1", "[rank=1] 1,2,1,2,0,1,127.0.0.1"]


def test_launcher_multi_host_env_inputs():
    from determined.launch import torch_distributed as td

    envs = td.build_worker_envs({}, {"DET_SLOT_IDS": "[0,1]", "DET_CONTAINER_ADDRS": '["10.0.0.1","10.0.0.2"]',
                                     "DET_CONTAINER_RANK": "1"})
    assert [e["RANK"] for e in envs] == ["2", "3"]
    assert {e["WORLD_SIZE"] for e in envs} == {"4"} and {e["CROSS_RANK"] for e in envs} == {"1"}
    assert {e["DET_CHIEF_IP"] for e in envs} == {"10.0.0.1"} and {e["MASTER_ADDR"] for e in envs} == {"10.0.0.1"}
    assert {e["MASTER_PORT"] for e in envs} == {"29400"}
    assert td.parse_overrides(["--rdzv_endpoint=h:5", "--nnodes", "2"]) == {"rdzv_endpoint": "h:5", "nnodes": "2"}
    assert td.worker_command(["--trial", "m:T"], "py") == ["py", "-m", "determined.exec.harness", "m:T"]


@pytest.mark.parametrize("mod,pkg", [("horovod", "horovod"), ("deepspeed", "deepspeed")])
def test_missing_framework_launchers(mod, pkg):
    import importlib.util

    if importlib.util.find_spec(pkg) is not None:
        pytest.skip(f"{pkg} is installed")
    p = subprocess.run([sys.executable, "-m", f"determined.launch.{mod}", "--trial", "m:T"],
                       env=_env(), capture_output=True, text=True, timeout=30)
    assert p.returncode == 1 and f"`{pkg}`" in p.stderr
