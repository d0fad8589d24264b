import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from cluster import BIN, Cluster  # noqa: E402


@pytest.fixture(scope="session")
def cluster():
    for name in ("det", "determined-master", "determined-agent"):
        assert (BIN / name).exists(), f"{BIN / name} is missing: run make build first"
    c = Cluster(agents=1, slots=2)
    c.up()
    try:
        yield c
    finally:
        c.cleanup()


@pytest.fixture
def own_cluster():
    """A cluster of its own, for tests that kill or restart its processes."""
    c = Cluster(agents=1, slots=2)
    c.up()
    try:
        yield c
    finally:
        c.cleanup()
