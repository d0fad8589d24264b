"""Shared setup for the benchmarks: a local cluster from tests/e2e/cluster.py."""

import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from cluster import BIN, Cluster, wait_for  # noqa: E402,F401
