"""Launch latency: from `det experiment create` starting to the trial's first training report,
next to `/usr/bin/python3 -c "import determined"` measured in the same run; prints the ratio."""

import pathlib
import statistics
import tempfile
import time

from bench_cluster import Cluster, import_seconds, parse_time, wait_for

RUNS = 5
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


def main() -> None:
    ctx = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    (ctx / "first_report.py").write_text(TRIAL)
    (ctx / "c.yaml").write_text(CONFIG)
    cluster = Cluster(agents=1, slots=1)
    cluster.up()
    try:
        cluster.token()
        launches, imports = [], []
        for i in range(RUNS):
            imports.append(import_seconds())
            t0 = time.time()
            exp_id = cluster.create(ctx / "c.yaml", ctx)
            trial = wait_for(lambda: (cluster.trials(exp_id) or [None])[0], 60, "trial")
            first = wait_for(lambda: cluster.metrics(trial["id"], "training"), 60,
                             "first training report", interval=0.02)
            launches.append(parse_time(first[0]["reportTime"]) - t0)
            cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=60)
        launch, imp = statistics.median(launches), statistics.median(imports)
        print(f"launch latency (create -> first training report), median of {RUNS}: {launch:.3f} s")
        print(f"baseline: /usr/bin/python3 -c 'import determined', median of {RUNS}: {imp:.3f} s")
        print(f"ratio launch/import: {launch / imp:.1f}x")
    finally:
        cluster.cleanup()


if __name__ == "__main__":
    main()
