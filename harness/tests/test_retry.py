import threading
import time

import pytest

from determined import core
from determined.common import api


def _steps(m):
    return [b["metrics"]["stepsCompleted"] for b in m.metrics]


def test_503_is_retried_nothing_lost_or_duplicated(on_cluster):
    m = on_cluster
    m.fail_next = 4
    with core.init() as ctx:
        for i in range(1, 11):
            ctx.train.report_training_metrics(i, {"loss": 1.0 / i})
        with ctx.checkpoint.store_path({"steps_completed": 10}) as (path, sid):
            (path / "w").write_text("w")
    assert _steps(m) == list(range(1, 11))
    assert list(m.checkpoints) == [sid]


def test_dropped_connections_are_retried(on_cluster):
    m = on_cluster
    m.drop_next = 2
    with core.init() as ctx:
        ctx.train.report_training_metrics(1, {"loss": 1.0})
        ctx.train.report_training_metrics(2, {"loss": 1.0})
    assert _steps(m) == [1, 2]


def test_master_down_for_a_moment(on_cluster):
    m = on_cluster
    with core.init() as ctx:
        ctx.train.report_training_metrics(1, {"loss": 1.0})
        ctx._metrics.flush()
        m.stop()  # connection refused from now on
        for i in range(2, 6):
            ctx.train.report_training_metrics(i, {"loss": 1.0})
        restarter = threading.Timer(0.7, m.restart)
        restarter.start()
        # a synchronous call made while the master is down also waits for it
        with ctx.checkpoint.store_path({"steps_completed": 5}) as (path, sid):
            (path / "w").write_text("w")
        restarter.join()
    assert _steps(m) == [1, 2, 3, 4, 5]
    assert sid in m.checkpoints


def test_gives_up_after_retry_budget(master):
    master.fail_next = 1000
    s = api.Session(master.url, allocation_token=master.token, retry_seconds=0.5)
    start = time.monotonic()
    with pytest.raises(api.MasterUnavailableError, match="HTTP 503"):
        s.get("/api/v1/trials/7/searcher/operation")
    assert time.monotonic() - start < 5


def test_retry_seconds_from_env(monkeypatch):
    monkeypatch.setenv("DET_RETRY_SECONDS", "12")
    assert api.Session("http://x:1").retry_seconds == 12
    monkeypatch.delenv("DET_RETRY_SECONDS")
    assert api.Session("http://x:1").retry_seconds == 300


def test_4xx_not_retried(master):
    s = api.Session(master.url, allocation_token=master.token)
    with pytest.raises(api.NotFoundError):
        s.get("/api/v1/experiments/1/searcher/best_searcher_validation_metric")
    assert len(master.requests_to("best_searcher")) == 1
