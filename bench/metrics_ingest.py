"""Metric ingestion: 16 concurrent clients posting training metrics through the master, next to
the same clients hitting a trivial endpoint (GET /info) of the same server; prints the ratio."""

import json
import pathlib
import subprocess
import tempfile

from bench_cluster import BIN, Cluster, wait_for

THREADS = 16
REQUESTS = 150
CONFIG = """name: ingest-target
entrypoint: sleep 600
searcher: {name: single, metric: loss, max_length: {batches: 1}}
max_restarts: 0
"""


def load(cluster: Cluster, *args: str) -> dict:
    out = subprocess.run(
        [str(BIN.parent / "bin" / "http_load"), "--url", cluster.url, "--threads", str(THREADS),
         "--requests", str(REQUESTS), *args],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    ctx = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    (ctx / "c.yaml").write_text(CONFIG)
    cluster = Cluster(agents=1, slots=1)
    cluster.up()
    try:
        exp_id = cluster.create(ctx / "c.yaml", ctx)
        trial = wait_for(lambda: (cluster.trials(exp_id) or [None])[0], 60, "trial")
        auth = f"Authorization: Bearer {cluster.token()}"
        body = ('{"group": "training", "metrics": {"trialId": %d, "trialRunId": 1, '
                '"stepsCompleted": {i}, "metrics": {"avgMetrics": {"loss": 0.5, "acc": 0.9}}}}'
                % trial["id"])
        trivial = load(cluster, "--path", "/info")
        ingest = load(cluster, "--method", "POST", "--path",
                      f"/api/v1/trials/{trial['id']}/metrics", "--header", auth, "--body", body)
        stored = len(cluster.metrics(trial["id"], "training"))
        assert stored == THREADS * REQUESTS, f"stored {stored} of {THREADS * REQUESTS} reports"
        print(f"trivial endpoint GET /info, {THREADS} clients: {trivial['rps']:.0f} req/s")
        print(f"metric reports POST /api/v1/trials/{{id}}/metrics, {THREADS} clients: "
              f"{ingest['rps']:.0f} req/s ({stored} rows stored, each committed before the reply)")
        print(f"ratio ingest/trivial: {ingest['rps'] / trivial['rps']:.2f}")
        cluster.request("POST", f"/api/v1/experiments/{exp_id}/kill")
    finally:
        cluster.cleanup()


if __name__ == "__main__":
    main()
