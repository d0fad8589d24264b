import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))

from cluster import BIN, Cluster, brought_up  # noqa: E402


@pytest.fixture(scope="session")
def cluster():
    for name in ("det", "determined-master", "determined-agent"):
        assert (BIN / name).exists(), f"{BIN / name} is missing: run make build first"
    with brought_up(Cluster(agents=1, slots=2)) as c:
        yield c


@pytest.fixture
def own_cluster():
    """A cluster of its own, for tests that kill or restart its processes."""
    with brought_up(Cluster(agents=1, slots=2)) as c:
        yield c
