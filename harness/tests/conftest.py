import os
import sys
from typing import Iterator

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
if HARNESS not in sys.path:
    sys.path.insert(0, HARNESS)

from fake_master import FakeMaster  # noqa: E402


@pytest.fixture
def master() -> Iterator[FakeMaster]:
    m = FakeMaster().start()
    try:
        yield m
    finally:
        m.stop()


@pytest.fixture
def on_cluster(master: FakeMaster, tmp_path, monkeypatch) -> FakeMaster:
    """Point the DET_* environment at the fake master."""
    for k in list(os.environ):
        if k.startswith("DET_"):
            monkeypatch.delenv(k)
    for k, v in master.env(tmp_path).items():
        monkeypatch.setenv(k, v)
    return master


@pytest.fixture(autouse=True)
def _no_det_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith("DET_"):
            monkeypatch.delenv(k)
