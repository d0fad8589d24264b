"""Many trials reporting at once: 1,000 simulated trials, each on its own keep-alive connection,
post a training metric report at 10 Hz for two minutes through POST /api/v1/trials/{id}/metrics.
Latency counts from the moment a report was due (so queueing behind a slow answer counts too).
Baseline: GET /info sent at 10 Hz on 10 more connections to the same server during the same load.
Afterwards every trial must have exactly its reports stored: none lost, none doubled.

Usage: metrics_trials.py [--trials 1000] [--hz 10] [--seconds 120]"""

import argparse
import json
import pathlib
import sqlite3
import subprocess
import tempfile

from bench_cluster import BIN, Cluster, wait_for

LOAD = BIN / "metrics_load"


def config(trials: int) -> str:
    # One trial holds the only slot (sleep); the others wait for it. Every trial has its first
    # run (run id 1) and may report, as a trial process would.
    return f"""name: many-trials
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--hz", type=float, default=10.0)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--metrics-synchronous", choices=["full", "normal"], default=None,
                    help="master.yaml db.metrics_synchronous (default: the master's, normal)")
    args = ap.parse_args()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    (tmp / "c.yaml").write_text(config(args.trials))
    cluster = Cluster(agents=1, slots=1)
    if args.metrics_synchronous:
        (tmp / "master.yaml").write_text(f"db:\n  metrics_synchronous: {args.metrics_synchronous}\n")
        cluster.up_args = ["--master-config-path", str(tmp / "master.yaml")]
    cluster.up()
    try:
        exp_id = cluster.create(tmp / "c.yaml", tmp)
        trials = wait_for(lambda: len(cluster.trials(exp_id)) >= args.trials and
                          cluster.trials(exp_id), 300, f"{args.trials} trials", interval=1)
        ids = [t["id"] for t in trials]
        base = [str(LOAD), "--port", str(cluster.port), "--mode", "paced", "--hz", str(args.hz),
                "--seconds", str(args.seconds)]
        info = subprocess.Popen(base + ["--target", "info", "--connections", "10"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        reports = subprocess.run(
            base + ["--target", "metrics", "--token", cluster.token(), "--trial-ids",
                    ",".join(map(str, ids)), "--connections", str(len(ids))],
            capture_output=True, text=True)
        info_out, info_err = info.communicate(timeout=args.seconds + 120)
        if reports.returncode != 0 or info.returncode != 0:
            raise AssertionError(f"load failed:\n{reports.stdout}{reports.stderr}\n"
                                 f"{info_out}{info_err}")
        r = json.loads(reports.stdout)
        b = json.loads(info_out)

        per_trial = round(args.hz * args.seconds)
        db = cluster.data_dir / "determined.db"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute(
                "SELECT trial_id, COUNT(*), COUNT(DISTINCT total_batches), MIN(total_batches), "
                "MAX(total_batches) FROM metrics WHERE metric_group = 'training' AND "
                "trial_id IN (SELECT id FROM trials WHERE experiment_id = ?) GROUP BY trial_id",
                (exp_id,)).fetchall()
        exact = sum(1 for _, n, d, lo, hi in rows
                    if n == per_trial and d == per_trial and lo == 1 and hi == per_trial)
        stored = sum(n for _, n, _, _, _ in rows)
        print(f"{len(ids)} trials x {args.hz:g} Hz x {args.seconds:g} s: {r['ok']} reports "
              f"({r['rps']:.0f}/s), {r['errors']} errors; latency p50 {r['p50_ms']:.1f} ms, "
              f"p99 {r['p99_ms']:.1f} ms, max {r['max_ms']:.1f} ms (target p99 < 50 ms)")
        print(f"baseline: GET /info at {args.hz:g} Hz on 10 connections under that load: "
              f"p50 {b['p50_ms']:.1f} ms, p99 {b['p99_ms']:.1f} ms")
        print(f"ratio p99 reports/info: {r['p99_ms'] / max(b['p99_ms'], 0.001):.2f}")
        print(f"stored: {stored} rows for {len(ids) * per_trial} reports; {exact} of {len(ids)} "
              f"trials hold exactly steps 1..{per_trial} once: "
              f"{'OK' if exact == len(ids) and stored == len(ids) * per_trial else 'FAILED'}")
        assert r["errors"] == 0
        assert exact == len(ids) and stored == len(ids) * per_trial
        cluster.request("POST", f"/api/v1/experiments/{exp_id}/kill")
    finally:
        cluster.cleanup()


if __name__ == "__main__":
    main()
