"""Metric ingestion on PostgreSQL next to SQLite, same run: a cluster on each store
(`cluster-up --db sqlite` and `--db postgres`), the same keep-alive clients posting metric
reports (one trial each), each report committed before its answer. Prints SQLite's rate (the
baseline), PostgreSQL's and the ratio.

Usage: ingest_pg.py [--seconds 5] [--connections 64]"""

import argparse
import pathlib
import tempfile

from bench_cluster import Cluster, wait_for
from metrics_ingest import config, load


def reports_per_second(db: str, seconds: float, connections: int) -> float:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-pg-"))
    (tmp / "c.yaml").write_text(config(connections))
    cluster = Cluster(agents=1, slots=1)
    cluster.det("deploy", "local", "cluster-up", "--master-port", str(cluster.port), "--agents",
                "1", "--slots-per-agent", "1", "--data-dir", str(cluster.data_dir), "--db", db,
                timeout=180)
    try:
        exp_id = cluster.create(tmp / "c.yaml", tmp)
        trials = wait_for(lambda: len(cluster.trials(exp_id)) >= connections and
                          cluster.trials(exp_id), 120, "trials", interval=0.5)
        ids = ",".join(str(t["id"]) for t in trials)
        out = load(cluster, "--target", "metrics", "--token", cluster.token(), "--trial-ids", ids,
                   "--connections", str(connections), "--seconds", str(seconds))
        assert out["errors"] == 0, out
        cluster.request("POST", f"/api/v1/experiments/{exp_id}/kill")
        return out["rps"]
    finally:
        cluster.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--connections", type=int, default=64)
    args = ap.parse_args()
    sqlite = reports_per_second("sqlite", args.seconds, args.connections)
    pg = reports_per_second("postgres", args.seconds, args.connections)
    print(f"baseline: metric reports on SQLite (the master's defaults: other writes synced, metric "
          f"batches not, db.metrics_synchronous normal), {args.connections} keep-alive clients: "
          f"{sqlite:.0f} reports/s")
    print(f"metric reports on PostgreSQL (fsync on, over TCP loopback), same "
          f"clients: {pg:.0f} reports/s")
    print(f"ratio postgres/sqlite: {pg / sqlite:.2f}")


if __name__ == "__main__":
    main()
