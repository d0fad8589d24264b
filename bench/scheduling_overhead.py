"""Scheduling overhead (Ray Tune's bookkeeping benchmark, scaled to this machine).

1. N trials (default 16, then 64) that each sleep 1 s in one Core API step, on S slots
   (default 4: one agent with 4 slots): wall time from `det experiment create` starting to the
   experiment's endTime, against the ideal ceil(N/S) x 1 s, printed as ideal/measured. Same-run
   baselines: bare `/usr/bin/python3 -c "import determined"` starts (alone and S at once; each
   slot runs ceil(N/S) trials one after another, so that many starts lie on the critical path of
   a cold start), and the same experiment with cold starts (DET_WARM_PYTHON=0 in its
   environment: no warm python, as before it existed). Ours is the default: the agent's warm
   python forks each trial (docs/operations.md, "Warm Python").
   With --timeline (agent at debug log level) each warm run also prints where a slot's time
   between two trials goes, from the agent's log and the trials' metric report times
   (docs/operations.md, "Trial start cost").
2. Pause/resume of a running trial that takes 0.1 s steps and checks should_preempt() after each:
   POST /api/v1/experiments/{id}/pause -> its slot free in GET /api/v1/agents (against the step
   time), and POST .../activate -> the first new training metric stored (against
   `/usr/bin/python3 -c "import determined"` measured in the same run).
"""

import argparse
import datetime
import math
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_cluster import REPO, Cluster, import_seconds, parse_time, wait_for
from cluster import PYTHON

FIXTURE = REPO / "bench" / "fixtures" / "sleep_trial"
SLEEP = 1.0  # seconds of "training" per trial in part 1
STEP = 0.1  # seconds per step in part 2
POLL = 0.02  # seconds between polls while timing pause -> slot free
CYCLES = 3  # pause/activate cycles in part 2

OVERHEAD_CONFIG = """name: scheduling-overhead
entrypoint: python3 sleep_trial.py
hyperparameters:
  sleep: {sleep}
  x: {{type: double, minval: 0.0, maxval: 1.0}}
searcher:
  name: random
  metric: x
  max_trials: {trials}
  max_concurrent_trials: {trials}
  max_length: {{batches: 1}}
resources: {{slots_per_trial: 1}}
max_restarts: 0
"""

PAUSE_CONFIG = """name: pause-latency
entrypoint: python3 sleep_trial.py
hyperparameters:
  sleep: {step}
searcher: {{name: single, metric: x, max_length: {{batches: 1000000}}}}
resources: {{slots_per_trial: 1}}
max_restarts: 0
"""


def log(msg: str) -> None:
    print(f"[scheduling_overhead] {msg}", file=sys.stderr, flush=True)


def busy_slots(cluster: Cluster) -> int:
    agents = cluster.request("GET", "/api/v1/agents")["agents"]
    return sum(1 for a in agents for s in (a.get("slots") or {}).values() if s.get("container"))


def startup_seconds(concurrent: int, repeats: int = 3) -> float:
    """The baseline of part 1: wall time of `concurrent` bare `import determined` processes
    started together, median of `repeats`."""
    env = {"PYTHONPATH": str(REPO / "harness")}
    times = []
    for _ in range(repeats):
        t0 = time.time()
        procs = [subprocess.Popen([PYTHON, "-c", "import determined"], env=env)
                 for _ in range(concurrent)]
        for p in procs:
            assert p.wait() == 0, "python3 -c 'import determined' failed"
        times.append(time.time() - t0)
    return statistics.median(times)


AGENT_EVENTS = [  # what the agent logs at debug level, per allocation
    (re.compile(r"command \d+ start (\S+)"), "command"),
    (re.compile(r"allocation (\S+): started pid"), "started"),
    (re.compile(r"allocation (\S+): process exited"), "exited"),
    (re.compile(r"allocation (\S+): exited with"), "reported"),
]


def agent_log_events(cluster: Cluster) -> dict:
    """{allocation id: {event: epoch seconds}} from the agents' logs (spdlog's local time)."""
    out: dict = {}
    for path in cluster.data_dir.glob("*.log"):
        if path.name == "master.log":
            continue
        for line in path.read_text(errors="replace").splitlines():
            m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\]", line)
            if not m:
                continue
            for pattern, name in AGENT_EVENTS:
                found = pattern.search(line)
                if found:
                    when = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f")
                    out.setdefault(found.group(1), {})[name] = when.timestamp()
    return out


def print_timeline(cluster: Cluster, exp_id: int) -> None:
    """Medians over the experiment's trials of each step between one trial and the next."""
    events = agent_log_events(cluster)
    steps: dict = {k: [] for k in ("start command -> process started (agent)",
                                    "process started -> first training report, less the 1 s step",
                                    "trial's last report -> agent sees the exit",
                                    "exit seen -> exit reported (logs shipped)",
                                    "exit reported -> next start command")}
    keys = list(steps)
    commands = sorted(e["command"] for e in events.values() if "command" in e)
    for t in cluster.trials(exp_id):
        ev = events.get(f"{t['taskId']}.1", {})
        reports = sorted(parse_time(m["reportTime"]) for m in cluster.metrics(t["id"], "training"))
        if not reports or not {"command", "started", "exited", "reported"} <= set(ev):
            continue
        steps[keys[0]].append(ev["started"] - ev["command"])
        steps[keys[1]].append(reports[0] - SLEEP - ev["started"])
        steps[keys[2]].append(ev["exited"] - reports[-1])
        steps[keys[3]].append(ev["reported"] - ev["exited"])
        later = [c for c in commands if c >= ev["reported"]]
        if later:  # the next start on this agent: the slot's next trial while trials are queued
            steps[keys[4]].append(later[0] - ev["reported"])
    print("  timeline, median (max) over trials:", flush=True)
    for name, values in steps.items():
        if values:
            print(f"    {name}: {statistics.median(values) * 1000:.0f} ms "
                  f"({max(values) * 1000:.0f} ms), n={len(values)}", flush=True)


def run_experiment(cluster: Cluster, tmp: pathlib.Path, trials: int, warm: bool,
                   timeline: bool = False) -> float:
    """Seconds from `det experiment create` starting to the experiment's endTime."""
    cfg = tmp / f"overhead-{trials}-{'warm' if warm else 'cold'}.yaml"
    text = OVERHEAD_CONFIG.format(sleep=SLEEP, trials=trials)
    if not warm:
        text += "environment:\n  environment_variables: [DET_WARM_PYTHON=0]\n"
    cfg.write_text(text)
    t0 = time.time()
    exp_id = cluster.create(cfg, FIXTURE)
    exp = cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=60 + 6 * trials)
    polled = time.time()
    end = parse_time(exp["endTime"]) if exp.get("endTime") else polled
    ts = cluster.trials(exp_id)
    assert len(ts) == trials, f"{len(ts)} trials, wanted {trials}"
    assert all(t["state"] == "STATE_COMPLETED" for t in ts), [t["state"] for t in ts]
    log(f"experiment {exp_id} ({'warm' if warm else 'cold'}): endTime {end - t0:.2f} s after "
        f"create, seen COMPLETED at {polled - t0:.2f} s")
    if timeline:
        print_timeline(cluster, exp_id)
    return end - t0


def scheduling_overhead(cluster: Cluster, tmp: pathlib.Path, trials: int, slots: int,
                        timeline: bool = False) -> None:
    waves = math.ceil(trials / slots)
    ideal = waves * SLEEP
    wide = min(slots, trials)
    log(f"part 1: {trials} trials x {SLEEP:g} s on {slots} slots, warm python and cold")
    alone, together = [startup_seconds(1)], [startup_seconds(wide)]
    cold = run_experiment(cluster, tmp, trials, warm=False)
    warm = run_experiment(cluster, tmp, trials, warm=True, timeline=timeline)
    alone.append(startup_seconds(1))
    together.append(startup_seconds(wide))
    one, many = statistics.mean(alone), statistics.mean(together)
    low, high = waves * one, waves * many
    over = warm - ideal
    print(f"scheduling overhead, {trials} trials x {SLEEP:g} s sleep on {slots} slots "
          f"({waves} waves):", flush=True)
    print(f"  ideal: {ideal:.2f} s", flush=True)
    print(f"  baseline, bare `python3 -c 'import determined'` (same run): {one:.3f} s alone .. "
          f"{many:.3f} s with {wide} at once; x {waves} waves on the critical path = {low:.2f} .. "
          f"{high:.2f} s", flush=True)
    print(f"  baseline, cold starts (DET_WARM_PYTHON=0, same run): {cold:.2f} s, ideal/measured "
          f"{ideal / cold:.2f}", flush=True)
    print(f"  ours, warm python: {warm:.2f} s (create -> endTime), overhead {over:.2f} s = "
          f"{over / waves * 1000:.0f} ms per wave", flush=True)
    print(f"ratio ideal/measured: {ideal / warm:.2f} (target 0.95; cold {ideal / cold:.2f}); "
          f"cold/warm {cold / warm:.2f}x", flush=True)


def pause_resume(cluster: Cluster, tmp: pathlib.Path) -> None:
    cfg = tmp / "pause.yaml"
    cfg.write_text(PAUSE_CONFIG.format(step=STEP))
    log(f"part 2: {CYCLES} pause/activate cycles of a trial with {STEP:g} s steps")
    exp_id = cluster.create(cfg, FIXTURE)
    try:
        trial = wait_for(lambda: (cluster.trials(exp_id) or [None])[0], 60, "trial")
        tid = trial["id"]
        wait_for(lambda: len(cluster.metrics(tid, "training")) >= 3, 60,
                 "the trial's first training reports", interval=0.1)
        frees, resumes, imports = [], [], []
        for cycle in range(CYCLES):
            time.sleep(5 * STEP)  # a few steps into the run
            t0 = time.time()
            cluster.request("POST", f"/api/v1/experiments/{exp_id}/pause")
            wait_for(lambda: busy_slots(cluster) == 0, 60, "the slot to be free", interval=POLL)
            frees.append(time.time() - t0)
            cluster.wait_state(exp_id, "STATE_PAUSED", timeout=60)
            wait_for(lambda: cluster.trials(exp_id)[0]["state"] == "STATE_PAUSED", 60,
                     "the trial to be PAUSED", interval=0.1)
            before = cluster.metrics(tid, "training")
            last_steps = max(m["stepsCompleted"] for m in before)
            imports.append(import_seconds())
            t1 = time.time()
            cluster.request("POST", f"/api/v1/experiments/{exp_id}/activate")
            new = wait_for(
                lambda: [m for m in cluster.metrics(tid, "training")[len(before):]], 60,
                "the first training report after activate", interval=0.05)
            first = min(new, key=lambda m: parse_time(m["reportTime"]))
            assert first["stepsCompleted"] == last_steps + 1, (
                f"resumed at step {first['stepsCompleted']}, checkpointed at {last_steps}")
            resumes.append(parse_time(first["reportTime"]) - t1)
            log(f"cycle {cycle + 1}: pause -> slot free {frees[-1]:.3f} s, "
                f"activate -> first new metric {resumes[-1]:.3f} s (step {first['stepsCompleted']})")
        free, resume, imp = (statistics.median(x) for x in (frees, resumes, imports))
        print(f"pause -> slot free (POST pause -> no container in GET /api/v1/agents, polled every "
              f"{POLL * 1000:.0f} ms), median of {CYCLES}: {free:.3f} s (step {STEP:.2f} s) "
              f"ratio {free / STEP:.1f}", flush=True)
        print(f"activate -> first new training metric stored, median of {CYCLES}: {resume:.3f} s "
              f"(baseline /usr/bin/python3 -c 'import determined' {imp:.3f} s) "
              f"ratio {resume / imp:.1f}", flush=True)
    finally:
        cluster.request("POST", f"/api/v1/experiments/{exp_id}/kill")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", default="16,64",
                    help="comma-separated trial counts for part 1 (default 16,64)")
    ap.add_argument("--slots", type=int, default=4, help="slots in all (default 4)")
    ap.add_argument("--agents", type=int, default=1,
                    help="agents sharing the slots (default 1; must divide --slots)")
    ap.add_argument("--timeline", action="store_true",
                    help="agent at debug log level; print each warm run's per-step medians")
    args = ap.parse_args()
    counts = [int(n) for n in args.trials.split(",") if n]
    if not counts or min(counts) < 1 or args.slots < 1 or args.agents < 1 or args.slots % args.agents:
        ap.error("need --trials >= 1, --slots >= 1 and --agents dividing --slots")

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    cluster = Cluster(agents=args.agents, slots=args.slots // args.agents)
    if args.timeline:
        cluster.env["DET_AGENT_LOG_LEVEL"] = "debug"
    try:
        cluster.up()
        cluster.token()
        for trials in counts:
            scheduling_overhead(cluster, tmp, trials, args.slots, args.timeline)
        pause_resume(cluster, tmp)
    finally:
        cluster.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
