import json
import os

import pytest

from determined import core


def test_operations_loop(on_cluster):
    m = on_cluster
    m.ops = [10, 20]
    seen = []
    with core.init() as ctx:
        assert ctx.searcher.get_configured_units() == core.Unit.BATCHES
        trained = 0
        for op in ctx.searcher.operations():
            seen.append(op.length)
            while trained < op.length:
                trained += 1
                if trained % 5 == 0:
                    op.report_progress(trained)
            ctx.train.report_validation_metrics(trained, {"validation_loss": 1.0 / trained})
            op.report_completed(1.0 / trained)
    assert seen == [10, 20]
    assert m.completed_ops == [
        {"op": {"length": 10}, "searcherMetric": 0.1},
        {"op": {"length": 20}, "searcherMetric": 0.05},
    ]
    assert m.progress == [0.5, 1.0, 0.75, 1.0]
    (r,) = m.requests_to(r"POST .*/progress")[:1]
    assert r.body == {"progress": 0.5, "isRaw": True}
    # the validation reached the master before the op was reported completed
    posts = [r.path for r in m.requests if r.method == "POST"]
    assert posts.index("/api/v1/trials/7/metrics") < posts.index("/api/v1/trials/7/searcher/completed_operation")


def test_must_report_completed(on_cluster):
    on_cluster.ops = [5]
    with core.init() as ctx:
        with pytest.raises(RuntimeError, match="report_completed"):
            for _ in ctx.searcher.operations():
                pass


def test_nan_searcher_metric_rejected(on_cluster):
    on_cluster.ops = [5]
    with core.init() as ctx:
        for op in ctx.searcher.operations():
            with pytest.raises(RuntimeError, match="NaN"):
                op.report_completed(float("nan"))
            op.report_completed(1.0)
    assert len(on_cluster.completed_ops) == 1


def test_waits_while_no_op_decided(on_cluster):
    m = on_cluster
    calls = {"n": 0}
    original = m._route

    def route(req):
        if req.path.endswith("/searcher/operation") and calls["n"] < 3:
            calls["n"] += 1
            return 200, {"op": None, "completed": False}
        return original(req)

    m._route = route
    m.ops = [4]
    with core.init() as ctx:
        lengths = []
        for op in ctx.searcher.operations():
            lengths.append(op.length)
            op.report_completed(0.0)
    assert lengths == [4]
    assert calls["n"] == 3


def test_units(on_cluster, monkeypatch):
    config = json.loads(os.environ["DET_EXPERIMENT_CONFIG"])
    for max_length, unit in [({"epochs": 2}, core.Unit.EPOCHS), ({"records": 9}, core.Unit.RECORDS), (50, None)]:
        config["searcher"]["max_length"] = max_length
        monkeypatch.setenv("DET_EXPERIMENT_CONFIG", json.dumps(config))
        with core.init() as ctx:
            assert ctx.searcher.get_configured_units() == unit


def test_falls_back_to_config_length_without_endpoint(on_cluster):
    on_cluster.reject[r"GET /api/v1/trials/7/searcher/operation"] = (
        501, {"error": {"code": 12, "reason": "Unimplemented", "error": "no searcher ops"}}
    )
    with core.init() as ctx:
        lengths = []
        for op in ctx.searcher.operations():
            lengths.append(op.length)
            op.report_progress(50)
            op.report_completed(0.5)
    assert lengths == [100]
    assert on_cluster.completed_ops == []
    assert on_cluster.progress == [0.5]


@pytest.fixture
def env_op(on_cluster, monkeypatch):
    """DET_SEARCHER_OP as the master puts it in a trial's start command; the once-per-process
    flag reset so each test starts as a fresh trial process."""
    from determined.core import _searcher

    monkeypatch.setattr(_searcher, "_env_op_taken", False)

    def set_op(length, trial_id=None, allocation_id=None):
        op = {
            "trialId": int(os.environ["DET_TRIAL_ID"]) if trial_id is None else trial_id,
            "allocationId": os.environ["DET_ALLOCATION_ID"] if allocation_id is None else allocation_id,
            "requestId": "r1",
            "length": str(length),
        }
        monkeypatch.setenv("DET_SEARCHER_OP", json.dumps(op))

    return set_op


def test_first_op_from_start_environment(on_cluster, env_op):
    m = on_cluster
    m.ops = [10, 20]
    env_op(10)
    seen = []
    with core.init() as ctx:
        for op in ctx.searcher.operations():
            seen.append(op.length)
            op.report_completed(1.0)
    assert seen == [10, 20]
    assert [c["op"]["length"] for c in m.completed_ops] == [10, 20]
    # Only the operations after the first were asked for: the first came with the start.
    gets = m.requests_to(r"GET .*/searcher/operation")
    assert len(gets) == 2  # 20, then "completed"


def test_start_environment_op_used_once_per_process(on_cluster, env_op):
    m = on_cluster
    m.ops = [5]
    env_op(5)
    with core.init() as ctx:
        for op in ctx.searcher.operations():
            op.report_completed(0.0)
    # A second core.init in the same process, or a process started from it now, must not
    # train the stale first op again.
    assert "DET_SEARCHER_OP" not in os.environ
    with core.init() as ctx:
        assert [op.length for op in ctx.searcher.operations()] == []
    assert len(m.completed_ops) == 1


@pytest.mark.parametrize("bad", [{"trial_id": 999}, {"allocation_id": "other.1"}])
def test_start_environment_op_of_another_trial_is_ignored(on_cluster, env_op, bad):
    m = on_cluster
    m.ops = [3]
    env_op(42, **bad)
    with core.init() as ctx:
        lengths = []
        for op in ctx.searcher.operations():
            lengths.append(op.length)
            op.report_completed(0.0)
    assert lengths == [3]


def test_garbled_start_environment_op_falls_back_to_asking(on_cluster, env_op, monkeypatch):
    on_cluster.ops = [4]
    env_op(4)
    monkeypatch.setenv("DET_SEARCHER_OP", "{not json")
    lengths = []
    with core.init() as ctx:
        for op in ctx.searcher.operations():
            lengths.append(op.length)
            op.report_completed(0.0)
    assert lengths == [4]
    assert len(on_cluster.requests_to(r"GET .*/searcher/operation")) == 2
