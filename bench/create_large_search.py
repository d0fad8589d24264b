"""Creating a large search: a random search of 20,000 trials (max_concurrent_trials 20,000) on a
master with no agents, so every trial is queued. Measures the create request's answer time
against the same create with max_trials 1 (the baseline, same run), and the latency of
GET /api/v1/experiments?limit=10 and of GET /api/v1/agents (both read from views the runtime
publishes) and of a decision about another experiment (PATCH of the 1-trial search's
description, decided on the runtime's loop) from three other clients while the large create
runs against their latency on the idle master. Then the time to page the experiment's trials and to describe it, and a
kill -9 of the master with every trial queued: the time from master-up to /info answering against
the same restart with the 1-trial search alone (same run), and whether every queued allocation
comes back with the same id and registered time. Last, pause, activate and kill of the large
search, each timed against the same request on the 1-trial search, with the three clients'
latency meanwhile (until their last slice, after the answer)."""

import json
import os
import pathlib
import signal
import statistics
import threading
import time
import urllib.request

from bench_cluster import Cluster, wait_for

TRIALS = int(os.environ.get("DET_BENCH_TRIALS", "20000"))
CONFIG = """name: large-search
entrypoint: python3 train.py
hyperparameters: {{x: {{type: double, minval: 0, maxval: 1}}}}
searcher: {{name: random, metric: loss, max_trials: {n}, max_concurrent_trials: {n},
           max_length: {{batches: 10}}}}
"""


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def create(cluster: Cluster, trials: int) -> (float, int):
    body = {
        "config": CONFIG.format(n=trials),
        "activate": True,
        "modelDefinition": [{"path": "train.py", "type": 48, "content": "", "mode": 420}],
    }
    seconds, out = timed(lambda: cluster.request("POST", "/api/v1/experiments", body))
    return seconds, out["experiment"]["id"]


READ_LIMIT = 60  # seconds: reads of the large experiment that take longer are reported so


def bounded(fn) -> str:
    """How long `fn` took, or that it did not finish within READ_LIMIT seconds."""
    result = {}
    worker = threading.Thread(target=lambda: result.update(out=timed(fn)), daemon=True)
    worker.start()
    worker.join(READ_LIMIT)
    if "out" not in result:
        return f"no answer within {READ_LIMIT} s"
    return ms(result["out"][0])


LISTS = ("/api/v1/experiments?limit=10", "/api/v1/agents")
# The third client: a decision about the 1-trial search.
DECISION = "PATCH /api/v1/experiments/{base_id}"
PROBES = LISTS + (DECISION,)


def list_latencies(cluster: Cluster, probe: str, base_id: int, stop: threading.Event,
                   out: list) -> None:
    """`probe` (a GET path, or DECISION about `base_id`) in a loop on its own connection until
    `stop`."""
    if probe == DECISION:
        path = f"/api/v1/experiments/{base_id}"
        req = urllib.request.Request(cluster.url + path, method="PATCH")
        req.add_header("Content-Type", "application/json")
    else:
        req = urllib.request.Request(cluster.url + probe)
    req.add_header("Authorization", f"Bearer {cluster.token()}")
    n = 0
    while not stop.is_set():
        n += 1
        if probe == DECISION:
            req.data = json.dumps({"description": f"probe {n}"}).encode()
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=120) as resp:
            json.loads(resp.read() or b"{}")
        out.append(time.perf_counter() - t0)


def start_pollers(cluster: Cluster, base_id: int) -> (threading.Event, list, dict):
    stop, out = threading.Event(), {probe: [] for probe in PROBES}
    threads = [threading.Thread(target=list_latencies, args=(cluster, p, base_id, stop, out[p]))
               for p in PROBES]
    for t in threads:
        t.start()
    wait_for(lambda: all(len(v) >= 3 for v in out.values()), 30, "the list clients to start")
    return stop, threads, out


def stop_pollers(stop: threading.Event, threads: list) -> None:
    stop.set()
    for t in threads:
        t.join()


def queued_allocations(cluster: Cluster) -> dict:
    """{allocation id: registered time} of every allocation `det task list` shows."""
    summary = cluster.request("GET", "/api/v1/tasks")["allocationIdToSummary"]
    return {k: v.get("registeredTime") for k, v in summary.items()}


def publication_line(cluster: Cluster, experiment_id: int) -> str:
    """The master's breakdown of the creation, logged once every trial is published ("" before)."""
    log = (cluster.data_dir / "master.log").read_text(errors="replace")
    for line in log.splitlines():
        if f"experiment {experiment_id}: trials staged" in line:
            return line.split("] ", 2)[-1]
    return ""


def kill9_restart(cluster: Cluster) -> float:
    """kill -9 of the master, then seconds from master-up to /info answering."""
    pid = cluster.master_pid()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 30, "the master to die")
    seconds, _ = timed(cluster.master_up)
    return seconds


def slices_done(cluster: Cluster, experiment_id: int) -> int:
    """How many pauses or stops of the experiment the master logged as done in slices (a small
    one ends within its request and logs nothing)."""
    log = (cluster.data_dir / "master.log").read_text(errors="replace")
    return log.count(f"experiment {experiment_id}: the last slice of its trials is done")


def edit(cluster: Cluster, base_id: int, exp_id: int, action: str,
         sliced: bool = False) -> (float, float, dict):
    """POST /api/v1/experiments/{id}/{action} with the three clients running: its answer time,
    the time until its last slice was done (when `sliced`) and the clients' latencies
    meanwhile."""
    stop, threads, during = start_pollers(cluster, base_id)
    done_before = slices_done(cluster, exp_id)
    t0 = time.perf_counter()
    cluster.request("POST", f"/api/v1/experiments/{exp_id}/{action}")
    answered = time.perf_counter() - t0
    if sliced:
        wait_for(lambda: slices_done(cluster, exp_id) > done_before, 120,
                 f"the {action}'s last slice", interval=0.02)
    ended = time.perf_counter() - t0
    stop_pollers(stop, threads)
    return answered, ended, during


def stop_edits(cluster: Cluster, base_id: int, big_id: int) -> None:
    """Pause, activate and kill of the large search, each against the same request on the
    1-trial search (the baseline, same run); the queue is checked after each. Each answers with
    its first slice and moves the other trials in slices after it: the clients run until the
    last one."""
    for action, expected in (("pause", 0), ("activate", TRIALS + 1), ("kill", 0)):
        base, _, _ = edit(cluster, base_id, base_id, action)
        big, ended, during = edit(cluster, base_id, big_id, action, sliced=True)
        queued = len(cluster.request("GET", "/api/v1/tasks")["allocationIdToSummary"])
        agents = max(during["/api/v1/agents"])
        decision = max(during[DECISION])
        last = f", its last slice done by {ms(ended)}"
        print(f"{action} of the 1-trial search (baseline): {ms(base)}; of the {TRIALS}-trial "
              f"search: {ms(big)} (ratio {big / base:.1f}x){last}; GET /api/v1/agents max "
              f"meanwhile {ms(agents)}, a decision about the 1-trial search max {ms(decision)} "
              f"({len(during[DECISION])} served); {queued} allocations queued after")
        assert queued == expected, f"{queued} allocations queued after {action}, not {expected}"


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def main() -> None:
    cluster = Cluster(agents=0, slots=1)
    cluster.up()
    try:
        cluster.token()
        base_seconds, base_id = create(cluster, 1)
        stop, threads, idle = start_pollers(cluster, base_id)
        time.sleep(2.0)  # a fixed sampling window, not synchronisation
        stop_pollers(stop, threads)
        base_restart = kill9_restart(cluster)

        stop, threads, during = start_pollers(cluster, base_id)
        big_seconds, big_id = create(cluster, TRIALS)
        # The answer is not the end of the work: the runtime publishes the stored trials in
        # slices (other requests are decided between two) and logs its breakdown after the last.
        breakdown = wait_for(lambda: publication_line(cluster, big_id), 120, "the publication")
        exp = cluster.experiment(big_id)
        stop_pollers(stop, threads)
        assert exp["numTrials"] == TRIALS, exp["numTrials"]
        queued = len(queued_allocations(cluster))
        assert queued > TRIALS, f"{queued} allocations queued once published"
        page_seconds = bounded(lambda: cluster.request(
            "GET", f"/api/v1/experiments/{big_id}/trials?limit=100&offset={TRIALS - 100}"))
        describe_seconds = bounded(lambda: cluster.det(
            "experiment", "describe", str(big_id), "--json", timeout=READ_LIMIT))

        print(f"create, random search of 1 trial (baseline): {ms(base_seconds)}")
        print(f"create, random search of {TRIALS} trials, none placed: {ms(big_seconds)} "
              f"(ratio to baseline: {big_seconds / base_seconds:.1f}x)")
        for probe in PROBES:
            a, b = idle[probe], during[probe]
            name = probe if probe == DECISION else "GET " + probe
            print(f"{name} on the idle master (baseline): "
                  f"p50 {ms(statistics.median(a))}, max {ms(max(a))}, {len(a)} requests")
            print(f"{name} during the create: p50 {ms(statistics.median(b))}, "
                  f"max {ms(max(b))}, {len(b)} requests "
                  f"(ratio of max to the idle max: {max(b) / max(a):.1f}x)")
        print(f"GET one page of 100 of its {TRIALS} trials: {page_seconds}; "
              f"det experiment describe --json: {describe_seconds}; "
              f"{queued} allocations queued")
        # The master's own breakdown of the large creation (where its time went).
        print("master: " + breakdown)

        before = queued_allocations(cluster)
        big_restart = kill9_restart(cluster)
        after = queued_allocations(cluster)
        same_ids = sorted(before) == sorted(after)
        same_times = sum(1 for k, v in before.items() if after.get(k) == v)
        print(f"kill -9 and master-up with the 1-trial search alone (baseline): "
              f"{ms(base_restart)} to /info")
        print(f"kill -9 and master-up with {len(before)} allocations queued: {ms(big_restart)} to "
              f"/info (ratio to baseline: {big_restart / base_restart:.1f}x); {len(after)} "
              f"queued after, same ids: {same_ids}, same registered time: {same_times} of "
              f"{len(before)}")
        assert same_ids and same_times == len(before), "the restart changed the queue"
        stop_edits(cluster, base_id, big_id)
    finally:
        if os.environ.get("DET_BENCH_KEEP_LOG"):
            import shutil
            shutil.copy(cluster.data_dir / "master.log", os.environ["DET_BENCH_KEEP_LOG"])
        cluster.cleanup()


if __name__ == "__main__":
    main()
