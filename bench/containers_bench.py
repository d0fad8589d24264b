"""Container start-up: from `det experiment create` to the trial's first training report, for a
trial in a container image (podman, the image from tests/e2e/container_image.py with the host's
/usr bind-mounted) next to the same trial as a bare process (the baseline), alternating in one
run on one cluster; prints both medians and the ratio. Skips with a message without podman."""

import pathlib
import statistics
import sys
import tempfile
import time

import yaml

from bench_cluster import Cluster, parse_time, wait_for

import container_image  # tests/e2e, on the path through bench_cluster

RUNS = 5
TRIAL = '''import determined as det
from determined import core
with core.init() as ctx:
    ctx.train.report_training_metrics(steps_completed=1, metrics={"loss": 1.0})
'''


def config(image: str = "") -> dict:
    cfg = {
        "name": "container-latency" if image else "process-latency",
        "entrypoint": "python3 first_report.py",
        "searcher": {"name": "single", "metric": "loss", "max_length": {"batches": 1}},
        "max_restarts": 0,
    }
    if image:
        cfg["environment"] = {"image": image}
        cfg["bind_mounts"] = container_image.bind_mounts()
    return cfg


def first_report_seconds(cluster: Cluster, path: pathlib.Path, ctx: pathlib.Path) -> float:
    t0 = time.time()
    exp_id = cluster.create(path, ctx)
    trial = wait_for(lambda: (cluster.trials(exp_id) or [None])[0], 60, "trial")
    first = wait_for(lambda: cluster.metrics(trial["id"], "training"), 120,
                     "first training report", interval=0.02)
    seconds = parse_time(first[0]["reportTime"]) - t0
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    return seconds


def main() -> None:
    if container_image.podman() is None:
        print("containers_bench: podman is not installed; skipped")
        return
    ctx = pathlib.Path(tempfile.mkdtemp(prefix="det-bench-"))
    (ctx / "first_report.py").write_text(TRIAL)
    cluster = Cluster(agents=1, slots=1)
    cluster.env["CONTAINERS_CONF"] = str(container_image.containers_conf(cluster.tmp))
    image = container_image.build(cluster.env)
    (ctx / "process.yaml").write_text(yaml.safe_dump(config()))
    (ctx / "container.yaml").write_text(yaml.safe_dump(config(image)))
    cluster.up()
    try:
        cluster.token()
        bare, boxed = [], []
        for _ in range(RUNS):
            bare.append(first_report_seconds(cluster, ctx / "process.yaml", ctx))
            boxed.append(first_report_seconds(cluster, ctx / "container.yaml", ctx))
        b, c = statistics.median(bare), statistics.median(boxed)
        print(f"create -> first training report in a container (podman), median of {RUNS}: "
              f"{c:.3f} s")
        print(f"baseline: the same trial as a bare process (warm python), median of {RUNS}: "
              f"{b:.3f} s")
        print(f"ratio container/process: {c / b:.1f}x")
    finally:
        cluster.down()
        container_image.remove(image, cluster.env)  # before cleanup removes containers.conf
        cluster.cleanup()


if __name__ == "__main__":
    sys.exit(main())
