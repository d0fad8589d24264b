"""Behaviour of the Determined 0.38 names added for compatibility (see
docs/compatibility.md): report_progress, alert, the dummy and missing contexts, TrialContext,
import_from_path, errors, and the helpers in determined.common.util / determined.util."""

import logging
import math
import random
import warnings

import pytest

import determined as det
from determined import core
from determined.common import api, check, storage
from determined.common import util as common_util
from determined.common.api import errors

from fake_master import _error


# -- TrainContext.report_progress --------------------------------------------------------
def test_report_progress_posts_in_order(on_cluster):
    with core.init() as ctx:
        ctx.train.report_training_metrics(10, {"x": 1})
        ctx.train.report_progress(0.1)
        ctx.train.report_progress(1)
    assert on_cluster.progress == [0.1, 1.0]
    (first, _) = on_cluster.requests_to(r"POST /api/v1/trials/7/progress")
    assert first.body == {"progress": 0.1, "isRaw": True}
    # queued behind the metrics reported before it
    paths = [r.path for r in on_cluster.requests if r.method == "POST"]
    assert paths.index("/api/v1/trials/7/metrics") < paths.index("/api/v1/trials/7/progress")


@pytest.mark.parametrize("bad", [-0.01, 1.5, float("nan")])
def test_report_progress_out_of_range_sends_nothing(on_cluster, bad):
    with core.init() as ctx:
        with pytest.raises(ValueError, match="between 0 and 1"):
            ctx.train.report_progress(bad)
    assert on_cluster.progress == []


def test_report_progress_rejects_non_numbers_off_cluster(caplog):
    with core.init() as ctx:
        assert isinstance(ctx.train, core.DummyTrainContext)
        with caplog.at_level(logging.INFO, logger="determined.core"):
            ctx.train.report_progress(0.5)
        assert "progress=0.5" in caplog.text
        with pytest.raises(TypeError, match="progress must be a number"):
            ctx.train.report_progress("half")


# -- Context.alert -----------------------------------------------------------------------
def test_alert_posts_to_webhooks_custom(on_cluster):
    with core.init() as ctx:
        # The fake master, like ours today, has no such route: Determined's client raises
        # NotFoundException then, and so do we.
        with pytest.raises(errors.NotFoundException):
            ctx.alert(title="done", description="all good", level="warn")
        with pytest.raises(errors.NotFoundException):
            ctx.alert(level="unheard-of")
    first, second = on_cluster.requests_to(r"POST /api/v1/webhooks/custom")
    assert first.body == {
        "data": {"title": "done", "description": "all good", "level": "LOG_LEVEL_WARNING"},
        "experimentId": 1,
        "trialId": 7,
    }
    assert second.body["data"] == {"title": "", "description": "", "level": "LOG_LEVEL_INFO"}


def test_alert_succeeds_when_the_master_serves_it(on_cluster):
    on_cluster.reject[r"POST /api/v1/webhooks/custom"] = (200, {})
    with core.init() as ctx:
        ctx.alert(title="t", level="error")
    (r,) = on_cluster.requests_to(r"POST /api/v1/webhooks/custom")
    assert r.body["data"]["level"] == "LOG_LEVEL_ERROR"


def test_alert_off_cluster_is_an_error():
    with core.init() as ctx:
        with pytest.raises(ValueError, match="on a cluster"):
            ctx.alert(title="x")


# -- dummy / missing contexts ------------------------------------------------------------
def test_off_cluster_contexts_are_the_dummies(tmp_path):
    with core.init(checkpoint_storage=str(tmp_path)) as ctx:
        assert isinstance(ctx.checkpoint, core.DummyCheckpointContext)
        assert isinstance(ctx.experimental, core.DummyExperimentalCoreContext)
        with ctx.checkpoint.store_path({"steps_completed": 3}) as (path, uuid):
            (path / "f").write_text("hi")
        assert ctx.checkpoint.get_metadata(uuid)["steps_completed"] == 3
        ops = []
        for op in ctx.searcher.operations():
            ops.append(op)
            op.report_completed(0.0)
        assert len(ops) == 1 and isinstance(ops[0], core.DummySearcherOperation)


def test_dummy_searcher_operation_rules():
    op = core.DummySearcherOperation(length=10, is_chief=True)
    op.report_progress(5)
    op.report_completed(0.5)
    with pytest.raises(RuntimeError, match="only call op.report_completed\\(\\) once"):
        op.report_completed(0.5)
    worker_op = core.DummySearcherOperation(length=10, is_chief=False)
    with pytest.raises(RuntimeError, match="chief"):
        worker_op.report_completed(1.0)


def test_context_without_searcher_gets_searcher_context_missing(tmp_path):
    dist = core.DummyDistributedContext()
    ckpt = core.DummyCheckpointContext(dist, storage.build(str(tmp_path)))
    ctx = core.Context(checkpoint=ckpt, distributed=dist)
    assert isinstance(ctx.searcher, core.SearcherContextMissing)
    with pytest.raises(ValueError, match="no searcher"):
        list(ctx.searcher.operations())


def test_experimental_context_on_cluster_reports_source(on_cluster):
    on_cluster.reject[r"POST /api/v1/trial-source-info"] = (200, {})

    class Ckpt:
        uuid = "abc"

    with core.init() as ctx:
        ctx.experimental.report_task_using_checkpoint(Ckpt())
    (r,) = on_cluster.requests_to(r"POST /api/v1/trial-source-info")
    assert r.body == {
        "trialSourceInfo": {
            "checkpointUuid": "abc",
            "trialId": 7,
            "trialSourceInfoType": "TRIAL_SOURCE_INFO_TYPE_INFERENCE",
        }
    }


# -- cluster info, TrialContext ----------------------------------------------------------
def test_cluster_info_resources(on_cluster, monkeypatch):
    monkeypatch.setenv("DET_GPU_UUIDS", '["GPU-1", "GPU-2"]')
    info = det.get_cluster_info()
    assert info.gpu_uuids == ["GPU-1", "GPU-2"]
    assert det.ResourcesInfo(["a"]).gpu_uuids == ["a"]


def test_trial_context_on_cluster(on_cluster):
    with core.init() as ctx:
        tc = det.TrialContext(ctx)
        assert tc.get_trial_id() == 7 and tc.get_experiment_id() == 1
        assert tc.get_hparams() == {"lr": 0.1} and tc.get_hparam("lr") == 0.1
        assert tc.get_trial_seed() == 42
        assert tc.get_data_config() == {"url": "x"}
        assert tc.env.experiment_config.slots_per_trial() == 1
        with pytest.raises(ValueError, match="'nope'"):
            tc.get_hparam("nope")
        assert tc.get_stop_requested() is False
        tc.set_stop_requested(True)
        assert tc.get_stop_requested() is True
        with pytest.raises(TypeError):
            tc.set_stop_requested("yes")


def test_trial_context_from_config(tmp_path):
    config = {
        "hyperparameters": {
            "lr": {"type": "log", "minval": -3, "maxval": -1, "base": 10},
            "layers": {"type": "categorical", "vals": [2, 4]},
            "name": {"type": "const", "val": "m"},
            "global_batch_size": 32,
        },
        "checkpoint_storage": {"type": "directory", "container_path": str(tmp_path)},
        "reproducibility": {"experiment_seed": 7},
    }
    tc = det.TrialContext.from_config(config)
    assert tc.get_hparams() == {"lr": -3, "layers": 2, "name": "m", "global_batch_size": 32}
    assert tc.get_trial_seed() == 7
    assert tc.env.on_cluster is False


# -- import_from_path --------------------------------------------------------------------
def test_import_from_path_keeps_same_named_modules_apart(tmp_path, monkeypatch):
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    (old / "model_def_cmp.py").write_text("VERSION = 'old'\n")
    (new / "model_def_cmp.py").write_text("VERSION = 'new'\n")
    # The usual case: the current model_def is in the working directory.
    monkeypatch.chdir(new)
    monkeypatch.syspath_prepend(str(new))
    import model_def_cmp as current

    with det.import_from_path(old):
        import model_def_cmp as previous

        with pytest.raises(RuntimeError, match="nesting"):
            with det.import_from_path(new):
                pass
    assert (current.VERSION, previous.VERSION) == ("new", "old")
    import model_def_cmp as again

    assert again is current
    assert not (old / "__pycache__").exists()


# -- errors ------------------------------------------------------------------------------
def test_api_error_classes_follow_determineds_hierarchy(on_cluster):
    on_cluster.reject[r"GET /api/v1/forbidden"] = _error(403, 7, "PermissionDenied", "no way")
    session = api.Session(on_cluster.url, allocation_token=on_cluster.token)
    with pytest.raises(errors.ForbiddenException) as e:
        session.get("/api/v1/forbidden")
    assert isinstance(e.value, errors.APIException)
    assert isinstance(e.value, errors.BadRequestException)
    assert e.value.status == 403 and e.value.message == "no way"
    with pytest.raises(errors.NotFoundException):
        session.get("/api/v1/nothing-here")
    assert api.NotFoundError is errors.NotFoundException
    assert issubclass(errors.MasterUnavailableError, errors.MasterNotFoundException)
    assert issubclass(errors.InvalidCredentialsException, errors.UnauthenticatedException)


def test_det_errors():
    assert issubclass(det.errors.InvalidConfigurationException, det.errors.InvalidExperimentException)
    # a BaseException, so ``except Exception`` in user code does not swallow it
    assert not issubclass(det.errors.InvalidExperimentException, Exception)
    assert "bad field" in str(det.errors.InvalidConfigurationException({}, "bad field"))
    assert det.InvalidHP is det.errors.InvalidHP


# -- determined.common.util / check / api helpers ---------------------------------------
def test_common_util_helpers():
    assert list(common_util.chunks("ABCDEFG", 3)) == ["ABC", "DEF", "G"]
    assert list(common_util.chunks([1, 2, 3], 2)) == [[1, 2], [3]]
    assert common_util.sizeof_fmt(1536) == "1.5KB"
    assert common_util.strtobool("Yes") and not common_util.strtobool("off")
    assert not common_util.strtobool("")
    ts = common_util.parse_protobuf_timestamp("2024-01-02T03:04:05.123Z")
    assert (ts.year, ts.second, ts.utcoffset().total_seconds()) == (2024, 5, 0)
    assert common_util.is_protobuf_timestamp("2024-01-02T03:04:05Z")
    assert not common_util.is_protobuf_timestamp("2024-01-02 03:04:05")
    text = common_util.yaml_safe_dump({"b": 1, "a": [1, 2]})
    assert common_util.yaml_safe_load(text) == {"b": 1, "a": [1, 2]}
    assert common_util._LEGACY_TRAINING == "training"


def test_common_util_wait_for_and_decorators():
    calls = []

    def pred():
        calls.append(1)
        return len(calls) >= 3, "done"

    assert common_util.wait_for(pred, timeout=5, interval=0.001) == "done"
    with pytest.raises(TimeoutError):
        common_util.wait_for(lambda: (False, None), timeout=0.05, interval=0.01)

    @common_util.deprecated("use g")
    def f():
        return 1

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert f() == 1
    assert "f is deprecated" in str(w[0].message) and "use g" in str(w[0].message)

    @common_util.preserve_random_state
    def draw():
        return random.random()

    random.seed(1)
    draw()
    after = random.random()
    random.seed(1)
    assert random.random() == after


def test_check_and_api_helpers():
    check.eq(1, 1)
    with pytest.raises(check.CheckFailedError, match="expected 2: why"):
        check.check_eq(1, 2, "why")
    with pytest.raises(check.CheckFailedError):
        check.is_in(3, [1, 2])
    assert api.salt_and_hash("") == ""
    assert len(api.salt_and_hash("pw")) == 128
    pages = [
        {"items": [1], "pagination": {"endIndex": 1, "total": 2}},
        {"items": [2], "pagination": {"endIndex": 2, "total": 2}},
    ]
    got = list(api.read_paginated(lambda off: pages[off]))
    assert got == pages
    assert list(api.read_paginated(lambda off: pages[off], pages=api.PageOpts.single)) == pages[:1]


# -- determined.util ---------------------------------------------------------------------
def test_det_util_helpers():
    base = {"a": {"b": 1, "c": 2}, "d": 3}
    merged = det.util.merge_dicts(base, {"a": {"c": 5}, "e": 6})
    assert merged == {"a": {"b": 1, "c": 5}, "d": 3, "e": 6}
    assert base == {"a": {"b": 1, "c": 2}, "d": 3}
    assert det.util.json_encode({"x": math.nan, "y": (1, b"z")}) == '{"x": "NaN", "y": [1, "z"]}'
    assert det.util.calculate_batch_sizes({"global_batch_size": 10}, 3, "PyTorchTrial") == (3, 9)
    with pytest.raises(det.errors.InvalidExperimentException, match="global_batch_size"):
        det.util.calculate_batch_sizes({}, 1, "PyTorchTrial")
    m = det.util.make_metrics(4, [{"loss": 1.0, "t": "a"}, {"loss": 3.0, "t": "b"}])
    assert m["avg_metrics"] == {"loss": 2.0, "t": None} and m["num_inputs"] == 4
    with pytest.raises(ValueError, match="inconsistent"):
        det.util.validate_batch_metrics([{"a": 1}, {"b": 1}])
    masked = det.util.mask_config_dict(
        {"checkpoint_storage": {"type": "s3", "secret_key": "s"}, "data": {"secrets": {"k": "v"}}}
    )
    assert masked["checkpoint_storage"]["secret_key"] == "********"
    assert masked["data"]["secrets"]["k"] == "********"
    assert det.util.humanize_float(1.23456789) == 1.235
    assert det.util.filter_duplicates([3, 1, 3, 2, 1]) == {1, 3}


def test_storage_from_string_and_validate(tmp_path):
    manager = storage.from_string(str(tmp_path))
    assert isinstance(manager, storage.SharedFSStorageManager)
    assert manager.store_path_is_direct_access() is True
    storage.validate_manager(manager)
    assert list(tmp_path.iterdir()) == []  # the probe was deleted
    storage.validate_config({"type": "directory", "container_path": str(tmp_path)})
