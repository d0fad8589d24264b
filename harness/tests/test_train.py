import json
import math

import pytest

import determined as det
from determined import core
from determined.common import api


def test_metrics_bodies(on_cluster):
    m = on_cluster
    with core.init() as ctx:
        ctx.train.report_training_metrics(10, {"loss": 0.5}, batch_metrics=[{"loss": 0.4}, {"loss": 0.6}])
        ctx.train.report_validation_metrics(10, {"validation_loss": float("nan"), "acc": float("inf")})
        ctx.train.report_metrics("inference", 12, {"x": -math.inf, "n": 3})
    # __exit__ flushed everything
    assert [b["group"] for b in m.metrics] == ["training", "validation", "inference"]
    t = m.metrics[0]["metrics"]
    assert t["trialId"] == 7 and t["trialRunId"] == 1 and t["stepsCompleted"] == 10
    assert t["metrics"]["avgMetrics"] == {"loss": 0.5}
    assert t["metrics"]["batchMetrics"] == [{"loss": 0.4}, {"loss": 0.6}]
    v = m.metrics[1]["metrics"]["metrics"]["avgMetrics"]
    assert v == {"validation_loss": "NaN", "acc": "Infinity"}
    assert "batchMetrics" not in m.metrics[1]["metrics"]["metrics"]
    assert m.metrics[2]["metrics"]["metrics"]["avgMetrics"] == {"x": "-Infinity", "n": 3}
    assert m.metrics[2]["metrics"]["stepsCompleted"] == 12
    # raw body really is strict JSON
    for r in m.requests_to(r"POST .*/metrics"):
        json.dumps(r.body, allow_nan=False)


def test_numpy_and_torch_scalars(on_cluster):
    np = pytest.importorskip("numpy")
    with core.init() as ctx:
        ctx.train.report_training_metrics(np.int64(3), {"a": np.float32(1.5), "b": np.float64("nan")})
    avg = on_cluster.metrics[0]["metrics"]["metrics"]["avgMetrics"]
    assert avg == {"a": 1.5, "b": "NaN"}
    assert on_cluster.metrics[0]["metrics"]["stepsCompleted"] == 3


def test_group_with_dot_rejected(on_cluster):
    with core.init() as ctx:
        with pytest.raises(ValueError, match="'.'"):
            ctx.train.report_metrics("a.b", 1, {"x": 1})
    assert on_cluster.metrics == []


def test_token_header_sent(on_cluster):
    with core.init() as ctx:
        ctx.train.report_training_metrics(1, {"x": 1})
    (r,) = on_cluster.requests_to(r"POST .*/metrics")
    assert r.headers["grpc-metadata-x-allocation-token"] == "Bearer alloc-token"


def test_status_metadata_best_validation(on_cluster):
    m = on_cluster
    with core.init() as ctx:
        ctx.train.set_status("warming up")
        assert ctx.train.set_metadata({"k": [1, 2]}) == {"k": [1, 2]}
        assert ctx.train.get_metadata() == {"k": [1, 2]}
        assert ctx.train.get_experiment_best_validation() is None  # 404
        m.best_validation = 0.25
        assert ctx.train.get_experiment_best_validation() == 0.25
        assert ctx.train.get_tensorboard_path().is_dir()
    assert m.runner_state == "warming up"
    (r,) = m.requests_to(r"POST /api/v1/runs/7/metadata")
    assert r.body == {"runId": 7, "metadata": {"k": [1, 2]}}


def test_stale_run_id_raises(on_cluster):
    on_cluster.run_id = 2  # the master moved on; our DET_TRIAL_RUN_ID=1 is stale
    with pytest.raises(RuntimeError, match="invalid run id"):
        with core.init() as ctx:
            ctx.train.report_training_metrics(1, {"x": 1})


def test_invalid_hp_reports_early_exit_and_exits_0(on_cluster):
    with pytest.raises(SystemExit) as exc:
        with core.init() as ctx:
            ctx.train.report_training_metrics(1, {"x": 1})
            raise det.InvalidHP("lr too big")
    assert exc.value.code == 0
    assert on_cluster.early_exits == [{"reason": "EXITED_REASON_INVALID_HP"}]
    assert len(on_cluster.metrics) == 1


def test_report_early_exit_direct(on_cluster):
    with core.init() as ctx:
        ctx.train.report_early_exit(core.EarlyExitReason.INVALID_HP)
    assert on_cluster.early_exits == [{"reason": "EXITED_REASON_INVALID_HP"}]


def test_4xx_error_message_is_clear(on_cluster):
    s = api.Session(on_cluster.url, allocation_token="wrong")
    with pytest.raises(api.UnauthenticatedError, match="token missing"):
        s.get("/api/v1/trials/7/searcher/operation")
    s = api.Session(on_cluster.url, allocation_token=on_cluster.token)
    with pytest.raises(api.NotFoundError, match="no route"):
        s.get("/api/v1/nope")


def test_profiler_exists(on_cluster):
    with core.init() as ctx:
        ctx.profiler.on()
        ctx.profiler.on()
        ctx.profiler.off()
        assert ctx.info is det.get_cluster_info()
