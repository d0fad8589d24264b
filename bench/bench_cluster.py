"""Shared setup for the benchmarks: a local cluster from tests/e2e/cluster.py."""

import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from cluster import BIN, Cluster, wait_for  # noqa: E402,F401

import datetime  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402


def parse_time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 UTC time as the master writes it."""
    text = text.rstrip("Z")
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S"
    return datetime.datetime.strptime(text, fmt).replace(
        tzinfo=datetime.timezone.utc).timestamp()


def import_seconds() -> float:
    """The baseline of launch measurements: a bare `import determined`."""
    t0 = time.time()
    subprocess.run(["/usr/bin/python3", "-c", "import determined"], check=True,
                   env={"PYTHONPATH": str(REPO / "harness")})
    return time.time() - t0
