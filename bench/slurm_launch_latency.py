"""Launch latency under Slurm: from `det experiment create` starting to the trial's first
training report, on a local Slurm (`cluster-up --resource-manager slurm`), next to the same
measurement on a bare-process cluster (agents) in the same run; prints both and the ratio.
Skips (with a line saying so) when slurmctld is not installed."""

import os
import pathlib
import statistics
import sys
import tempfile
import time

from bench_cluster import Cluster, parse_time, wait_for

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from test_slurm import SlurmCluster  # noqa: E402

RUNS = 3
TRIAL = '''import determined as det
from determined import core
with core.init() as ctx:
    ctx.train.report_training_metrics(steps_completed=1, metrics={"loss": 1.0})
'''
CONFIG = """name: launch-latency
entrypoint: python3 first_report.py
searcher: {name: single, metric: loss, max_length: {batches: 1}}
max_restarts: 0
"""


def measure(cluster, ctx) -> float:
    cluster.token()
    launches = []
    for _ in range(RUNS):
        t0 = time.time()
        exp_id = cluster.create(ctx / "c.yaml", ctx)
        trial = wait_for(lambda: (cluster.trials(exp_id) or [None])[0], 60, "trial")
        first = wait_for(lambda: cluster.metrics(trial["id"], "training"), 120,
                         "first training report", interval=0.02)
        launches.append(parse_time(first[0]["reportTime"]) - t0)
        cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    return statistics.median(launches)


def main() -> None:
    if not os.path.exists("/usr/sbin/slurmctld"):
        print("slurm launch latency: skipped (slurmctld is not installed)")
        return
    ctx = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    (ctx / "first_report.py").write_text(TRIAL)
    (ctx / "c.yaml").write_text(CONFIG)
    bare = Cluster(agents=1, slots=1)
    bare.up()
    try:
        base = measure(bare, ctx)
    finally:
        bare.cleanup()
    slurm = SlurmCluster(agents=0, slots=0)
    slurm.up()
    try:
        ours = measure(slurm, ctx)
    finally:
        slurm.cleanup()
    print(f"baseline: bare-process agent, create -> first training report, median of {RUNS}: "
          f"{base:.3f} s")
    print(f"slurm: sbatch job, create -> first training report, median of {RUNS}: {ours:.3f} s")
    print(f"ratio slurm/bare: {ours / base:.1f}x")


if __name__ == "__main__":
    main()
