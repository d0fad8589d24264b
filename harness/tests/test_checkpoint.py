import json
import os

import pytest

from determined import core


def _ckpt_root(tmp_path):
    return tmp_path / "ckpts"


def test_store_path_writes_in_place_and_reports(on_cluster, tmp_path):
    m = on_cluster
    with core.init() as ctx:
        ctx.train.report_validation_metrics(5, {"validation_loss": 1.0})
        with ctx.checkpoint.store_path({"steps_completed": 5, "note": "hi"}) as (path, storage_id):
            assert path == _ckpt_root(tmp_path) / storage_id
            (path / "model.bin").write_bytes(b"12345")
            (path / "sub").mkdir()
            (path / "sub" / "opt.bin").write_bytes(b"ab")
        # the validation was delivered before the checkpoint was reported
        kinds = [r.path for r in m.requests if r.method == "POST"]
        assert kinds.index("/api/v1/trials/7/metrics") < kinds.index("/api/v1/checkpoints")
    meta = json.loads((_ckpt_root(tmp_path) / storage_id / "metadata.json").read_text())
    assert meta == {"steps_completed": 5, "note": "hi"}
    assert "\n  " in (_ckpt_root(tmp_path) / storage_id / "metadata.json").read_text()  # indent 2
    body = m.checkpoints[storage_id]
    assert body["taskId"] == "1.abc" and body["allocationId"] == "1.abc.1"
    assert body["state"] == "STATE_COMPLETED"
    assert body["metadata"] == {"steps_completed": 5, "note": "hi"}
    assert body["resources"] == {
        "metadata.json": str(len((_ckpt_root(tmp_path) / storage_id / "metadata.json").read_bytes())),
        "model.bin": "5",
        "sub/": "0",
        "sub/opt.bin": "2",
    }
    assert body["reportTime"].endswith("Z")


def test_upload_download_restore(on_cluster, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("A")
    (src / "b.log").write_text("B")
    with core.init() as ctx:
        sid = ctx.checkpoint.upload(src, {"steps_completed": 3}, selector=lambda p: p.endswith(".txt"))
        stored = _ckpt_root(tmp_path) / sid
        assert sorted(os.listdir(stored)) == ["a.txt", "metadata.json"]
        assert set(on_cluster.checkpoints[sid]["resources"]) == {"a.txt", "metadata.json"}

        dst = tmp_path / "dst" / "deep"
        ctx.checkpoint.download(sid, dst)
        assert (dst / "a.txt").read_text() == "A"
        assert json.loads((dst / "metadata.json").read_text()) == {"steps_completed": 3}

        with ctx.checkpoint.restore_path(sid) as path:
            assert (path / "a.txt").read_text() == "A"

        assert ctx.checkpoint.get_metadata(sid) == {"steps_completed": 3}
        ctx.checkpoint.delete(sid)
        assert not stored.exists()
        with pytest.raises(FileNotFoundError):
            with ctx.checkpoint.restore_path(sid):
                pass


def test_steps_completed_required(on_cluster, tmp_path):
    with core.init() as ctx:
        with pytest.raises(ValueError, match="steps_completed"):
            with ctx.checkpoint.store_path({"x": 1}):
                pass
        with pytest.raises(ValueError, match="steps_completed"):
            ctx.checkpoint.upload(tmp_path, None)
    assert on_cluster.checkpoints == {}


def test_failed_store_is_not_reported(on_cluster):
    with core.init() as ctx:
        with pytest.raises(KeyError):
            with ctx.checkpoint.store_path({"steps_completed": 1}):
                raise KeyError("boom")
    assert on_cluster.checkpoints == {}


@pytest.mark.parametrize("kind", ["absolute", "directory"])
def test_storage_config_variants(on_cluster, tmp_path, monkeypatch, kind):
    base = tmp_path / "elsewhere"
    config = json.loads(os.environ["DET_EXPERIMENT_CONFIG"])
    if kind == "absolute":
        config["checkpoint_storage"] = {"type": "shared_fs", "host_path": str(tmp_path), "storage_path": str(base)}
    else:
        config["checkpoint_storage"] = {"type": "directory", "container_path": str(base)}
    monkeypatch.setenv("DET_EXPERIMENT_CONFIG", json.dumps(config))
    with core.init() as ctx:
        with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
            (path / "f").write_text("x")
    assert (base / sid / "f").read_text() == "x"


def test_unsupported_storage_is_clear(on_cluster, monkeypatch):
    config = json.loads(os.environ["DET_EXPERIMENT_CONFIG"])
    config["checkpoint_storage"] = {"type": "ftp", "bucket": "b"}
    monkeypatch.setenv("DET_EXPERIMENT_CONFIG", json.dumps(config))
    with pytest.raises(ValueError, match="unknown checkpoint storage type 'ftp'"):
        core.init()
