"""Sharded checkpoints and download modes with a fake 2-rank DistributedContext (threads)."""

import json
import os

import pytest

from determined import core
from determined.common import storage
from determined.common.storage import sharding
from determined.core._tensorboard_mode import TensorboardMode
from storage_helpers import fake_group, make_tree, run_ranks, s3_config, s3rver  # noqa: F401


def _ctx(dist, manager):
    return core.CheckpointContext(dist, manager, None, None, None, TensorboardMode.MANUAL)


@pytest.fixture(params=["shared_fs", "s3"])
def manager(request, tmp_path):
    if request.param == "shared_fs":
        return storage.build(str(tmp_path / "ckpts"))
    return storage.build(request.getfixturevalue("s3_config"))


def _raise_any(results):
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def test_merge_resources_rejects_conflicts():
    merged = sharding.merge_resources([{"a": 1, "d/": 0, "d/x": 2}, {"b": 3, "d/": 0, "d/y": 4}, {}])
    assert merged == {"a": 1, "b": 3, "d/": 0, "d/x": 2, "d/y": 4}
    with pytest.raises(sharding.ShardConflictError, match=r"'a' \(ranks 0, 1\)"):
        sharding.merge_resources([{"a": 1}, {"a": 1}])
    with pytest.raises(sharding.ShardConflictError, match="'x'"):
        sharding.merge_resources([{"x": 1}, {"x/": 0, "x/y": 1}])


@pytest.mark.parametrize("local_size", [1, 2])
def test_sharded_upload_unions_the_workers(manager, tmp_path, local_size):
    dists = fake_group(2, local_size)
    make_tree(tmp_path / "r0", {"model-0.pt": "zero", "common/cfg.json": "{}", "r0-only.log": "x"})
    make_tree(tmp_path / "r1", {"model-1.pt": "one!", "common/part-1": "p", "common/cfg.json": "{}"})

    def work(d):
        c = _ctx(d, manager)
        # both ranks hold common/cfg.json; rank 1's selector leaves it to rank 0
        sel = (lambda p: not p.endswith(".log")) if d.rank == 0 else (lambda p: p != "common/cfg.json")
        return c.upload(tmp_path / f"r{d.rank}", {"steps_completed": 9} if d.rank == 0 else None, shard=True, selector=sel)

    ids = _raise_any(run_ranks(dists, work))
    assert ids[0] == ids[1]
    assert manager.list_files(ids[0]) == {
        "common/": 0,
        "common/cfg.json": 2,
        "common/part-1": 1,
        "metadata.json": manager.list_files(ids[0])["metadata.json"],
        "model-0.pt": 4,
        "model-1.pt": 4,
    }
    out = tmp_path / "out"
    manager.download(ids[0], out)
    assert json.loads((out / "metadata.json").read_text()) == {"steps_completed": 9}
    assert "broadcast" in dists[1].calls and "allgather" in dists[1].calls


def test_sharded_upload_conflict_is_rejected_everywhere(manager, tmp_path):
    dists = fake_group(2, 2)
    make_tree(tmp_path / "r0", {"weights.pt": "a"})
    make_tree(tmp_path / "r1", {"weights.pt": "b"})
    results = run_ranks(dists, lambda d: _ctx(d, manager).upload(tmp_path / f"r{d.rank}", {"steps_completed": 1}, shard=True))
    for r in results:
        assert isinstance(r, sharding.ShardConflictError) and "weights.pt" in str(r)


def test_sharded_upload_with_no_dir_and_bad_metadata(manager, tmp_path):
    dists = fake_group(2, 2)
    make_tree(tmp_path / "r1", {"only-rank-1.bin": "11"})

    def work(d):
        return _ctx(d, manager).upload(None if d.rank == 0 else tmp_path / "r1", {"steps_completed": 3}, shard=True)

    ids = _raise_any(run_ranks(dists, work))
    assert set(manager.list_files(ids[0])) == {"metadata.json", "only-rank-1.bin"}
    # the chief's missing steps_completed fails every rank instead of hanging them
    bad = run_ranks(fake_group(2, 2), lambda d: _ctx(d, manager).upload(None, {}, shard=True))
    assert all(isinstance(r, ValueError) and "steps_completed" in str(r) for r in bad)


def test_unsharded_upload_only_by_chief(manager, tmp_path):
    dists = fake_group(2, 2)
    with pytest.raises(RuntimeError, match="chief"):
        _ctx(dists[1], manager).upload(tmp_path, {"steps_completed": 1})


@pytest.mark.parametrize("local_size", [1, 2])
def test_sharded_store_path(manager, tmp_path, local_size):
    dists = fake_group(2, local_size)

    def work(d):
        with _ctx(d, manager).store_path({"steps_completed": 5}, shard=True) as (path, sid):
            (path / f"shard-{d.rank}.pt").write_text(f"rank{d.rank}")
        return sid

    ids = _raise_any(run_ranks(dists, work))
    assert ids[0] == ids[1]
    files = manager.list_files(ids[0])
    assert {"shard-0.pt", "shard-1.pt", "metadata.json"} == set(files)
    assert files["shard-1.pt"] == len("rank1")
    if not manager.in_place:
        leftovers = [p for p in manager._staging_dir("store").iterdir() if p.name.startswith(ids[0])]
        assert leftovers == [], "the staging directory was not cleaned up"


def test_sharded_store_path_conflict_across_nodes_is_rejected(s3_config):
    manager = storage.build(s3_config)
    dists = fake_group(2, 1)  # two nodes, one worker each: each node stages its own files

    def work(d):
        with _ctx(d, manager).store_path({"steps_completed": 5}, shard=True) as (path, sid):
            (path / "same.pt").write_text("x")
        return sid

    results = run_ranks(dists, work)
    assert all(isinstance(r, sharding.ShardConflictError) and "same.pt" in str(r) for r in results)
    staging = manager._staging_dir("store")
    assert not any(p.name.endswith((".node0", ".node1")) for p in staging.iterdir()), "staging left behind"


def test_sharded_store_path_failure_in_one_rank(manager):
    dists = fake_group(2, 2)

    def work(d):
        with _ctx(d, manager).store_path({"steps_completed": 5}, shard=True) as (path, sid):
            if d.rank == 1:
                raise KeyError("boom")
        return sid

    results = run_ranks(dists, work)
    assert isinstance(results[1], KeyError)
    assert isinstance(results[0], RuntimeError) and "rank 1" in str(results[0])


@pytest.mark.parametrize("mode", list(core.DownloadMode))
def test_download_modes(manager, tmp_path, mode):
    src = tmp_path / "src"
    make_tree(src, {"a.bin": "A", "b.bin": "BB", "c.txt": "C"})
    manager.upload(src, "ck")
    dists = fake_group(2, 2)
    selectors = {0: lambda p: p == "a.bin", 1: lambda p: p == "b.bin"}
    calls = []

    real_download = manager.download

    def counting_download(*a, **kw):
        calls.append(1)
        return real_download(*a, **kw)

    manager.download = counting_download
    dst = tmp_path / "dst"

    def work(d):
        target = dst if mode == core.DownloadMode.LocalWorkersShareDownload else dst / str(d.rank)
        _ctx(d, manager).download("ck", target, mode, selector=selectors[d.rank])
        return sorted(os.listdir(target))

    results = _raise_any(run_ranks(dists, work))
    if mode == core.DownloadMode.LocalWorkersShareDownload:
        # one download, of the union of both selections, visible to both workers
        assert len(calls) == 1
        assert results == [["a.bin", "b.bin"], ["a.bin", "b.bin"]]
    else:
        assert len(calls) == 2
        assert results == [["a.bin"], ["b.bin"]]
    assert core.DownloadMode("LocalWorkersShareDownload") is core.DownloadMode.LocalWorkersShareDownload


@pytest.mark.parametrize("mode", list(core.DownloadMode))
def test_restore_path_modes(s3_config, tmp_path, mode):
    manager = storage.build(s3_config)
    src = tmp_path / "src"
    make_tree(src, {"w.pt": "weights"})
    manager.upload(src, "ck")
    dists = fake_group(2, 2)

    def work(d):
        with _ctx(d, manager).restore_path("ck", mode) as path:
            content = (path / "w.pt").read_text()
        return str(path), content

    results = _raise_any(run_ranks(dists, work))
    assert [r[1] for r in results] == ["weights", "weights"]
    paths = {r[0] for r in results}
    assert len(paths) == (1 if mode == core.DownloadMode.LocalWorkersShareDownload else 2)
    assert not any(os.path.exists(p) for p in paths), "restore_path left its temp dir behind"


def test_download_missing_checkpoint_fails_every_local_worker(manager, tmp_path):
    results = run_ranks(fake_group(2, 2), lambda d: _ctx(d, manager).download("missing", tmp_path / "x"))
    assert all(isinstance(r, FileNotFoundError) for r in results)
