"""Metric ingestion: 64 keep-alive clients (one trial each) posting metric reports (POST
/api/v1/trials/{id}/metrics, what Determined's clients send) against the same clients sending GET
/info to the same server in the same run; prints both rates and the ratio. Then the durability
check: the clients post again, the master is killed with SIGKILL in the middle, restarted, and
every report it acknowledged must be in the store.

Usage: metrics_ingest.py [--seconds 5] [--connections 64] [--synchronous full|normal]
       [--metrics-synchronous full|normal]"""

import argparse
import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import tempfile
import time

from bench_cluster import BIN, Cluster, wait_for



def config(trials: int) -> str:
    # One trial per client, as trial processes report (steps rising within each trial). One
    # trial holds the only slot (sleep); every trial has its first run and may report.
    return f"""name: ingest-target
entrypoint: sleep 600
searcher:
  name: random
  metric: loss
  max_trials: {trials}
  max_concurrent_trials: {trials}
  max_length: {{batches: 1}}
hyperparameters:
  lr: {{type: double, minval: 0.001, maxval: 0.1}}
max_restarts: 0
"""
LOAD = BIN / "metrics_load"
# Steps of the durability phase start here, apart from the throughput phase's.
DURABILITY_FIRST_STEP = 10**15


def load(cluster: Cluster, *args: str, check: bool = True) -> dict:
    proc = subprocess.run([str(LOAD), "--port", str(cluster.port), *args], capture_output=True,
                          text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"metrics_load {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (all its threads)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stored_steps(db: pathlib.Path, exp_id: int, first_step: int) -> list:
    """(trial, step) of every training row at or beyond first_step."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute(
            "SELECT trial_id, total_batches FROM metrics WHERE metric_group = 'training' AND "
            "total_batches >= ? AND trial_id IN (SELECT id FROM trials WHERE experiment_id = ?)",
            (first_step, exp_id)).fetchall()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--synchronous", choices=["full", "normal"], default=None,
                    help="master.yaml db.synchronous (default: the master's default)")
    ap.add_argument("--metrics-synchronous", choices=["full", "normal"], default=None,
                    help="master.yaml db.metrics_synchronous (default: the master's, normal)")
    args = ap.parse_args()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    (tmp / "c.yaml").write_text(config(args.connections))
    cluster = Cluster(agents=1, slots=1)
    up_args = []
    db_keys = {k: v for k, v in (("synchronous", args.synchronous),
                                 ("metrics_synchronous", args.metrics_synchronous)) if v}
    if db_keys:
        (tmp / "master.yaml").write_text(
            "db:\n" + "".join(f"  {k}: {v}\n" for k, v in db_keys.items()))
        up_args = ["--master-config-path", str(tmp / "master.yaml")]
    print(f"store: SQLite, db.synchronous {args.synchronous or 'full'}, db.metrics_synchronous "
          f"{args.metrics_synchronous or 'normal'}")
    cluster.det("deploy", "local", "cluster-up", "--master-port", str(cluster.port), "--agents",
                "1", "--slots-per-agent", "1", "--data-dir", str(cluster.data_dir), *up_args,
                timeout=120)
    try:
        exp_id = cluster.create(tmp / "c.yaml", tmp)
        trials = wait_for(lambda: len(cluster.trials(exp_id)) >= args.connections and
                          cluster.trials(exp_id), 120, "trials", interval=0.5)
        ids = ",".join(str(t["id"]) for t in trials)
        common = ["--connections", str(args.connections), "--seconds", str(args.seconds)]
        report = ["--target", "metrics", "--token", cluster.token(), "--trial-ids", ids]

        # The master's CPU per request too: on a shared machine the rates swing with what else
        # runs, the cost of a request much less.
        pid = cluster.master_pid()
        cpu0 = cpu_seconds(pid)
        info = load(cluster, "--target", "info", *common)
        cpu1 = cpu_seconds(pid)
        ingest = load(cluster, *report, *common)
        cpu2 = cpu_seconds(pid)
        info_us = (cpu1 - cpu0) / max(info["ok"], 1) * 1e6
        report_us = (cpu2 - cpu1) / max(ingest["ok"], 1) * 1e6
        print(f"baseline: GET /info, {args.connections} keep-alive clients: "
              f"{info['rps']:.0f} req/s")
        print(f"metric reports POST /api/v1/trials/{{id}}/metrics, {args.connections} keep-alive "
              f"clients, one trial each: {ingest['rps']:.0f} reports/s ({ingest['ok']} acknowledged, "
              f"{ingest['errors']} errors, each committed before its answer)")
        print(f"ratio reports/info: {ingest['rps'] / info['rps']:.2f} "
              f"(targets: >= 50000 reports/s, >= 0.5)")
        print(f"master CPU per request: GET /info {info_us:.0f} us, metric report {report_us:.0f} us "
              f"(ratio info/report {info_us / max(report_us, 1e-9):.2f}; the master used "
              f"{(cpu1 - cpu0) / info['seconds']:.2f} and {(cpu2 - cpu1) / ingest['seconds']:.2f} "
              f"cores)")

        # Durability: SIGKILL the master while the clients post, restart it, count rows.
        acks = tmp / "acks.txt"
        loader = subprocess.Popen(
            [str(LOAD), "--port", str(cluster.port), *report, "--connections",
             str(args.connections), "--seconds", "60", "--first-step",
             str(DURABILITY_FIRST_STEP), "--ack-file", str(acks)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        db = cluster.data_dir / "determined.db"
        wait_for(lambda: len(stored_steps(db, exp_id, DURABILITY_FIRST_STEP)) >= 20000, 60,
                 "reports to flow before the kill", interval=0.1)
        pid = cluster.master_pid()
        os.kill(pid, signal.SIGKILL)
        out, _ = loader.communicate(timeout=120)
        killed_run = json.loads(out)
        wait_for(lambda: not pathlib.Path(f"/proc/{pid}").exists(), 10, "master to die")
        cluster.det("deploy", "local", "master-up", "--master-port", str(cluster.port),
                    "--data-dir", str(cluster.data_dir), *up_args, timeout=120)
        acked = {tuple(map(int, line.split())) for line in acks.read_text().splitlines()}
        stored = stored_steps(db, exp_id, DURABILITY_FIRST_STEP)
        missing = acked - set(stored)
        doubled = len(stored) - len(set(stored))
        print(f"kill -9 during ingestion: {len(acked)} reports acknowledged before the kill, "
              f"{len(stored)} rows stored after restart ({len(stored) - len(acked)} committed "
              f"but unanswered when the master died), {len(missing)} acknowledged reports "
              f"missing, {doubled} doubled: {'OK' if not missing and not doubled else 'FAILED'}")
        assert killed_run["ok"] == len(acked)
        assert not missing, f"acknowledged reports lost: {sorted(missing)[:10]}"
        assert doubled == 0
        cluster.request("POST", f"/api/v1/experiments/{exp_id}/kill")
    finally:
        cluster.cleanup()


if __name__ == "__main__":
    main()
