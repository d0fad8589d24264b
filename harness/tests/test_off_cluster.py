import json

from determined import core


def test_off_cluster_init(tmp_path, capsys):
    with core.init(checkpoint_storage=str(tmp_path)) as ctx:
        assert ctx.info is None
        assert ctx.distributed.size == 1
        ops = list()
        for op in ctx.searcher.operations():
            ops.append(op.length)
            op.report_progress(1)
            ctx.train.report_training_metrics(1, {"loss": 0.5})
            ctx.train.report_validation_metrics(1, {"validation_loss": float("nan")})
            op.report_completed(0.5)
        assert ops == [1]
        assert ctx.preempt.should_preempt() is False
        with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
            (path / "m").write_text("m")
        assert path == tmp_path / sid
        assert json.loads((path / "metadata.json").read_text()) == {"steps_completed": 1}
        with ctx.checkpoint.restore_path(sid) as p:
            assert (p / "m").read_text() == "m"
        assert ctx.checkpoint.get_metadata(sid) == {"steps_completed": 1}
        assert ctx.train.get_experiment_best_validation() is None
        ctx.train.set_status("ok")
        ctx.profiler.on()
    out = capsys.readouterr().out
    assert "[training] steps_completed=1: loss=0.5" in out
    assert "validation_loss=nan" in out


def test_off_cluster_default_storage():
    with core.init() as ctx:
        with ctx.checkpoint.store_path({"steps_completed": 0}) as (path, sid):
            pass
        assert path.exists()
        ctx.checkpoint.delete(sid)
        assert not path.exists()
