"""Scheduling across resource pools with the priority and fair-share schedulers: preemption,
job queue order and updates, multi-agent trials and their rendezvous."""

import json
import pathlib
import re
from typing import Dict, List


from cluster import Cluster, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def flaky_config(tmp: pathlib.Path, name: str, extra: str = "", steps: int = 20,
                 sleep: float = 0.2, trials: int = 1) -> pathlib.Path:
    searcher = (f"searcher: {{name: single, metric: validation_loss, max_length: {{batches: {steps}}}}}\n"
                if trials == 1 else
                f"searcher: {{name: random, metric: validation_loss, max_trials: {trials},\n"
                f"           max_concurrent_trials: {trials}, max_length: {{batches: {steps}}}}}\n")
    cfg = tmp / f"{name}.yaml"
    cfg.write_text(
        f"name: {name}\nentrypoint: python3 flaky.py\n"
        f"hyperparameters: {{x: 0.1, sleep_per_step: {sleep}, checkpoint_every: 5}}\n"
        + searcher + "max_restarts: 0\n" + extra)
    return cfg


def start_cluster(tmp: pathlib.Path, master_yaml: str, agents: List[Dict]) -> Cluster:
    """A cluster with a master config and agents given as [{slots, pool}]."""
    c = Cluster(agents=0, slots=1)
    conf = c.tmp / "master.yaml"
    conf.write_text(master_yaml)
    c.det("deploy", "local", "master-up", "--master-port", str(c.port), "--data-dir",
          str(c.data_dir), "--master-config-path", str(conf), timeout=120)
    for i, a in enumerate(agents, start=1):
        args = ["deploy", "local", "agent-up", "--master-port", str(c.port), "--data-dir",
                str(c.data_dir), "--agents", str(i), "--slots-per-agent", str(a["slots"])]
        if a.get("pool"):
            args += ["--resource-pool", a["pool"]]
        c.det(*args, timeout=120)
    return c


def trial_steps(c: Cluster, trial_id: int) -> List[int]:
    return [m["stepsCompleted"] for m in c.metrics(trial_id, "training")]


def jobs(c: Cluster, pool: str = "default") -> List[Dict]:
    return [j["full"] for j in c.request("GET", f"/api/v1/job-queues-v2?resourcePool={pool}")["jobs"]]


def allocated(c: Cluster, exp_id: int) -> int:
    for j in jobs(c):
        if j["entityId"] == str(exp_id):
            return j["allocatedSlots"]
    return 0


def test_priority_preemption_resumes_the_low_priority_trial_from_its_checkpoint(tmp_path):
    c = start_cluster(tmp_path, "resource_pools:\n  - pool_name: default\n"
                      "    scheduler: {type: priority, preemption: true}\n", [{"slots": 1}])
    try:
        low = c.create(flaky_config(tmp_path, "low", "resources: {priority: 60}\n", steps=30), FIXTURES)
        (lt,) = wait_for(lambda: c.trials(low), 60, "low trial")
        wait_for(lambda: len(trial_steps(c, lt["id"])) >= 6, 120, "low trial to checkpoint")
        high = c.create(flaky_config(tmp_path, "high", "resources: {priority: 10}\n", steps=5,
                                     sleep=0.0), FIXTURES)
        c.wait_state(high, "STATE_COMPLETED", timeout=180)
        # The high-priority trial ran while the low one waited: the low one is not done yet.
        # (Which live state it shows depends on how far its restart got: QUEUED, STARTING, ...)
        low_state = c.experiment(low)["state"]
        assert low_state not in ("STATE_COMPLETED", "STATE_CANCELED", "STATE_ERROR"), low_state
        assert len(trial_steps(c, lt["id"])) < 30, "the low trial finished before the high one"
        c.wait_state(low, "STATE_COMPLETED", timeout=240)
        (lt,) = c.trials(low)
        assert lt["restarts"] == 0, "preemption by the scheduler is not a failure"
        assert trial_steps(c, lt["id"]) == list(range(1, 31)), "every step stored exactly once"
        logs = c.det("trial", "logs", str(lt["id"])).stdout
        assert "flaky: preempted at step" in logs
        assert "flaky: resumed from" in logs
        assert "preempted by the scheduler" in logs
    finally:
        c.cleanup()


def test_fair_share_divides_slots_by_weight(tmp_path):
    c = start_cluster(tmp_path, "resource_pools:\n  - pool_name: default\n"
                      "    scheduler: {type: fair_share}\n", [{"slots": 4}])
    try:
        light = c.create(flaky_config(tmp_path, "light", "resources: {weight: 1}\n", steps=40,
                                      sleep=0.25, trials=4), FIXTURES)
        wait_for(lambda: allocated(c, light) == 4, 120, "the light experiment to take all 4 slots")
        heavy = c.create(flaky_config(tmp_path, "heavy", "resources: {weight: 3}\n", steps=40,
                                      sleep=0.25, trials=4), FIXTURES)
        split = wait_for(lambda: (allocated(c, light), allocated(c, heavy)) == (1, 3) and "ok",
                         180, "slots to be shared 1:3 by weight")
        assert split == "ok"
        listed = jobs(c)
        assert all(j["summary"]["jobsAhead"] == -1 for j in listed), "fair share has no order"
        c.wait_state(heavy, "STATE_COMPLETED", timeout=400)
        c.wait_state(light, "STATE_COMPLETED", timeout=400)
        for exp in (light, heavy):
            for t in c.trials(exp):
                assert t["restarts"] == 0
                assert trial_steps(c, t["id"]) == list(range(1, 41))
    finally:
        c.cleanup()


def test_job_update_ahead_of_changes_what_runs_next(tmp_path):
    c = start_cluster(tmp_path, "resource_pools:\n  - pool_name: default\n", [{"slots": 1}])
    try:
        first = c.create(flaky_config(tmp_path, "first", steps=15), FIXTURES)
        wait_for(lambda: allocated(c, first) == 1, 60, "first to run")
        second = c.create(flaky_config(tmp_path, "second", steps=2, sleep=0.0), FIXTURES)
        third = c.create(flaky_config(tmp_path, "third", steps=2, sleep=0.0), FIXTURES)
        wait_for(lambda: len(jobs(c)) == 3, 30, "three jobs in the queue")
        by_exp = {int(j["entityId"]): j for j in jobs(c)}
        assert by_exp[second]["summary"]["jobsAhead"] < by_exp[third]["summary"]["jobsAhead"]

        bad = c.det("job", "update", by_exp[third]["jobId"], "--ahead-of", "no-such-job",
                    check=False)
        assert bad.returncode != 0 and "no-such-job" in bad.stderr
        c.det("job", "update", by_exp[third]["jobId"], "--ahead-of", by_exp[second]["jobId"])
        by_exp = {int(j["entityId"]): j for j in jobs(c)}
        assert by_exp[third]["summary"]["jobsAhead"] < by_exp[second]["summary"]["jobsAhead"]
        table = c.det("job", "list").stdout
        rows = [l for l in table.splitlines() if re.search(r"\((\d+)\)", l)]
        order = [int(re.search(r"\((\d+)\)", l).group(1)) for l in rows]
        assert order.index(third) < order.index(second), table

        c.wait_state(third, "STATE_COMPLETED", timeout=180)
        c.wait_state(second, "STATE_COMPLETED", timeout=180)
        end = {e: c.experiment(e)["endTime"] for e in (second, third)}
        assert end[third] < end[second], "the job moved ahead ran first"
    finally:
        c.cleanup()


def test_ahead_of_is_refused_under_fair_share(tmp_path):
    c = start_cluster(tmp_path, "resource_pools:\n  - pool_name: default\n"
                      "    scheduler: {type: fair_share}\n", [{"slots": 1}])
    try:
        a = c.create(flaky_config(tmp_path, "a", steps=30), FIXTURES)
        b = c.create(flaky_config(tmp_path, "b", steps=30), FIXTURES)
        wait_for(lambda: len(jobs(c)) == 2, 60, "two jobs")
        ids = {int(j["entityId"]): j["jobId"] for j in jobs(c)}
        out = c.det("job", "update", ids[b], "--ahead-of", ids[a], check=False)
        assert out.returncode != 0 and "fair" in out.stderr.lower(), out.stderr
        out = c.det("job", "update", ids[b], "--priority", "5", check=False)
        assert out.returncode != 0 and "priority" in out.stderr.lower(), out.stderr
        c.det("job", "update", ids[b], "--weight", "2")
        wait_for(lambda: any(j["weight"] == 2 for j in jobs(c)), 10, "the new weight")
        c.det("experiment", "kill", str(a))
        c.det("experiment", "kill", str(b))
    finally:
        c.cleanup()


def test_resource_pools_keep_work_on_their_agents(tmp_path):
    c = start_cluster(tmp_path, "resource_pools:\n  - pool_name: default\n  - pool_name: big\n",
                      [{"slots": 1}, {"slots": 2, "pool": "big"}])
    try:
        wait_for(lambda: len(c.request("GET", "/api/v1/agents")["agents"]) == 2, 30, "agents")
        pools = {p["name"]: p for p in c.request("GET", "/api/v1/resource-pools")["resourcePools"]}
        assert pools["big"]["slotsAvailable"] == 2 and pools["default"]["slotsAvailable"] == 1
        exp = c.create(flaky_config(tmp_path, "big", "resources: {slots_per_trial: 2, "
                                    "resource_pool: big}\n", steps=3, sleep=0.0), FIXTURES)
        c.wait_state(exp, "STATE_COMPLETED", timeout=180)
        (t,) = c.trials(exp)
        logs = c.det("trial", "logs", str(t["id"])).stdout
        assert "assigned to agent agent-2" in logs
        # A zero-slot trial holds no device slot: it runs beside the 1-slot trial on agent-1.
        busy = c.create(flaky_config(tmp_path, "busy", steps=300, sleep=0.2), FIXTURES)
        wait_for(lambda: allocated(c, busy) == 1, 60, "the 1-slot trial to run")
        zero = c.create(flaky_config(tmp_path, "zero", "resources: {slots_per_trial: 0}\n",
                                     steps=3, sleep=0.0), FIXTURES)
        c.wait_state(zero, "STATE_COMPLETED", timeout=120)
        assert c.experiment(busy)["state"] == "STATE_RUNNING", "the zero-slot trial did not wait"
        # A job queued behind `busy` moves to the other pool and runs there at once.
        mover = c.create(flaky_config(tmp_path, "mover", steps=3, sleep=0.0), FIXTURES)
        job = wait_for(lambda: [j["jobId"] for j in jobs(c) if j["entityId"] == str(mover)], 30,
                       "the queued job")[0]
        out = c.det("job", "update", job, "--resource-pool", "nowhere", check=False)
        assert out.returncode != 0 and "nowhere" in out.stderr
        c.det("job", "update", job, "--resource-pool", "big")
        c.wait_state(mover, "STATE_COMPLETED", timeout=120)
        (mt,) = c.trials(mover)
        assert "assigned to agent agent-2" in c.det("trial", "logs", str(mt["id"])).stdout
        assert c.experiment(busy)["state"] == "STATE_RUNNING"
        c.det("experiment", "kill", str(busy))
        bad = c.det("experiment", "create", str(flaky_config(tmp_path, "nowhere",
                    "resources: {resource_pool: nowhere}\n")), str(FIXTURES), check=False)
        assert bad.returncode != 0 and "nowhere" in bad.stderr and "big" in bad.stderr
    finally:
        c.cleanup()


RENDEZVOUS = """\
import json, os, sys, urllib.request
url = (os.environ["DET_MASTER"] + "/api/v1/allocations/" + os.environ["DET_ALLOCATION_ID"] +
       "/resources/" + os.environ["DET_RESOURCES_ID"] + "/rendezvous?timeoutSeconds=60")
req = urllib.request.Request(url, headers={"X-Allocation-Token": "Bearer " + os.environ["DET_SESSION_TOKEN"]})
info = json.loads(urllib.request.urlopen(req, timeout=90).read())["rendezvousInfo"]
print("rendezvous " + json.dumps(info, sort_keys=True), flush=True)
rank = int(os.environ["DET_CONTAINER_RANK"])
if os.environ.get("FAIL_RANK") == str(rank):
    print("rank %d failing" % rank, flush=True)
    sys.exit(3)
if os.environ.get("FAIL_RANK"):
    import time
    time.sleep(600)  # the other node hangs; the master must tear it down
"""


def test_multi_agent_trial_gets_a_rendezvous_and_a_failure_tears_down_all(tmp_path):
    c = start_cluster(tmp_path, "", [{"slots": 1}, {"slots": 1}])
    try:
        ctx = tmp_path / "ctx"
        ctx.mkdir()
        (ctx / "rdzv.py").write_text(RENDEZVOUS)
        cfg = tmp_path / "two.yaml"
        cfg.write_text("name: two-nodes\nentrypoint: python3 rdzv.py\n"
                       "searcher: {name: single, metric: x, max_length: {batches: 1}}\n"
                       "resources: {slots_per_trial: 2}\nmax_restarts: 0\n")
        exp = c.create(cfg, ctx)
        (t,) = wait_for(lambda: c.trials(exp), 60, "trial")
        logs = wait_for(lambda: (lambda out: out.count("rendezvous {") == 2 and out)(
            c.det("trial", "logs", str(t["id"])).stdout), 120, "both nodes to rendezvous")
        infos = sorted((json.loads(l.split("rendezvous ", 1)[1]) for l in logs.splitlines()
                        if "rendezvous {" in l), key=lambda i: i["rank"])
        assert [i["rank"] for i in infos] == [0, 1]
        assert all(i["addresses"] == ["127.0.0.1", "127.0.0.1"] for i in infos)
        assert all(i["slots"] == [1, 1] for i in infos)
        c.wait_state(exp, "STATE_COMPLETED", timeout=120)

        failing = tmp_path / "fail.yaml"
        failing.write_text(cfg.read_text().replace("max_restarts: 0\n", "max_restarts: 0\n"
                           "environment: {environment_variables: [FAIL_RANK=1]}\n"))
        exp2 = c.create(failing, ctx)
        c.wait_state(exp2, "STATE_ERROR", timeout=120)
        (t2,) = c.trials(exp2)
        logs = c.det("trial", "logs", str(t2["id"])).stdout
        assert "rank 1 failing" in logs
        # ERROR is recorded when the first node fails; the hanging node's slot is freed once
        # its kill is confirmed, which may come a moment later.
        def held():
            agents = c.request("GET", "/api/v1/agents")["agents"]
            return [s for a in agents for s in a["slots"].values() if s.get("container")]

        wait_for(lambda: held() == [], 30, "the hanging node to be torn down and its slot freed")
    finally:
        c.cleanup()
