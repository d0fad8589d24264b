"""Storage backends: path rules, shortcuts, round trips, deletes (shared_fs and real S3)."""

import json
import os
import subprocess
import sys

import pytest

from determined.common import storage
from determined.common.storage import globs as _globs
from storage_helpers import make_tree, s3_config, s3rver  # noqa: F401  (fixtures)

TREE = {
    "model.bin": b"m" * 100,
    "state": b"s" * 7,
    "sub/opt.bin": b"o" * 3,
    "sub/deeper/rng_state.pt": b"r" * 5,
    "empty/": b"",
}
TREE_RESOURCES = {
    "empty/": 0,
    "model.bin": 100,
    "state": 7,
    "sub/": 0,
    "sub/deeper/": 0,
    "sub/deeper/rng_state.pt": 5,
    "sub/opt.bin": 3,
}


# -- shared_fs path rules and shortcuts ------------------------------------------------------
def test_shared_fs_path_rules(tmp_path):
    host = str(tmp_path)
    m = storage.build({"type": "shared_fs", "host_path": host, "storage_path": "cp"})
    assert m.base_path == tmp_path / "cp"
    m = storage.build({"type": "shared_fs", "host_path": host, "storage_path": str(tmp_path / "a" / "b")})
    assert m.base_path == tmp_path / "a" / "b"
    assert storage.build({"type": "shared_fs", "host_path": host}).base_path == tmp_path
    with pytest.raises(ValueError, match="absolute"):
        storage.build({"type": "shared_fs", "host_path": "relative/dir"})
    with pytest.raises(ValueError, match="needs host_path"):
        storage.build({"type": "shared_fs"})
    with pytest.raises(ValueError, match="inside host_path"):
        storage.build({"type": "shared_fs", "host_path": host, "storage_path": "/elsewhere"})
    with pytest.raises(ValueError, match="inside host_path"):
        storage.build({"type": "shared_fs", "host_path": host, "storage_path": "../up"})
    with pytest.raises(ValueError, match="propagation"):
        storage.build({"type": "shared_fs", "host_path": host, "propagation": "sideways"})
    ok = storage.build({"type": "shared_fs", "host_path": host, "propagation": "rshared"})
    assert ok.base_path == tmp_path
    # container_path takes precedence over host_path as the mount point
    c = storage.build({"type": "shared_fs", "host_path": host, "storage_path": "cp"}, container_path="/mnt/x")
    assert str(c.base_path) == "/mnt/x/cp"
    legacy = storage.build(
        {"type": "shared_fs", "host_path": host, "container_path": "/determined_shared_fs", "storage_path": "cp"}
    )
    assert str(legacy.base_path) == "/determined_shared_fs/cp"


def test_directory_rules(tmp_path):
    m = storage.build({"type": "directory", "container_path": str(tmp_path)})
    assert isinstance(m, storage.DirectoryStorageManager) and m.base_path == tmp_path
    with pytest.raises(ValueError, match="container_path"):
        storage.build({"type": "directory"})
    with pytest.raises(ValueError, match="absolute"):
        storage.build({"type": "directory", "container_path": "rel"})


def test_shortcut_strings(tmp_path):
    plain = storage.build(str(tmp_path / "p"))
    assert isinstance(plain, storage.SharedFSStorageManager) and plain.base_path == tmp_path / "p"
    assert storage.build("file://" + str(tmp_path)).base_path == tmp_path
    assert storage.config_from_string("s3://bkt/some/prefix/") == {"type": "s3", "bucket": "bkt", "prefix": "some/prefix"}
    assert storage.config_from_string("gs://bkt") == {"type": "gcs", "bucket": "bkt"}
    with pytest.raises(ValueError, match="unknown scheme"):
        storage.build("ftp://x/y")
    with pytest.raises(ValueError, match="unknown checkpoint storage type"):
        storage.build({"type": "tape"})


def test_boto3_is_imported_lazily():
    code = (
        "import sys, determined.core, determined.common.storage as s;"
        "s.build('/tmp/x'); print('boto3' in sys.modules)"
    )
    harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=harness, env={**os.environ, "PYTHONPATH": harness},
        capture_output=True, text=True, check=True,
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "config,package,module",
    [
        ({"type": "gcs", "bucket": "b"}, "google-cloud-storage", "google.cloud.storage"),
        ({"type": "hdfs", "hdfs_url": "http://127.0.0.1:1", "hdfs_path": "/ck"}, "hdfs", "hdfs"),
        ({"type": "azure", "container": "c", "connection_string": "x"}, "azure-storage-blob", "azure.storage.blob"),
        ({"type": "s3", "bucket": "b"}, "boto3", "boto3"),
    ],
)
def test_missing_client_library_is_named(config, package, module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(storage.MissingStorageDependency, match=f"'{package}'") as e:
        storage.build(config)
    assert isinstance(e.value, ImportError)
    assert config["type"] in str(e.value)


# -- globs -----------------------------------------------------------------------------------
def test_globs():
    res = dict(TREE_RESOURCES)
    assert _globs.expand_matches(res, ["**/*"]) == set(res)
    assert _globs.expand_matches(res, ["**/*state*"]) == {"state", "sub/deeper/rng_state.pt"}
    assert _globs.expand_matches(res, ["state"]) == {"state"}
    assert _globs.expand_matches(res, ["sub"]) == {"sub/", "sub/opt.bin", "sub/deeper/", "sub/deeper/rng_state.pt"}
    assert _globs.expand_matches(res, ["*.bin"]) == {"model.bin"}
    assert _globs.expand_matches(res, ["sub/*.bin", "[e]mpty"]) == {"sub/opt.bin", "empty/"}
    assert _globs.expand_matches(res, []) == set()
    assert _globs.expand_matches(res, [""]) == set()


# -- round trips on every backend we can run -------------------------------------------------
@pytest.fixture(params=["shared_fs", "directory", "s3"])
def manager(request, tmp_path):
    if request.param == "shared_fs":
        return storage.build({"type": "shared_fs", "host_path": str(tmp_path), "storage_path": "cp"})
    if request.param == "directory":
        return storage.build({"type": "directory", "container_path": str(tmp_path / "dir")})
    return storage.build(request.getfixturevalue("s3_config"))


def test_round_trip(manager, tmp_path):
    src = tmp_path / "src"
    make_tree(src, TREE)
    manager.upload(src, "ck-1")
    assert manager.list_files("ck-1") == TREE_RESOURCES
    assert manager.list_files("nope") == {}

    dst = tmp_path / "dst"
    manager.download("ck-1", dst)
    assert storage.list_directory(dst) == TREE_RESOURCES
    assert (dst / "sub" / "deeper" / "rng_state.pt").read_bytes() == b"r" * 5

    sel = tmp_path / "sel"
    manager.download("ck-1", sel, selector=lambda p: p.endswith(".bin"))
    assert storage.list_directory(sel) == {"model.bin": 100, "sub/": 0, "sub/opt.bin": 3}

    with manager.restore_path("ck-1") as path:
        assert (path / "model.bin").read_bytes() == b"m" * 100
    with pytest.raises(FileNotFoundError, match="nope"):
        manager.download("nope", tmp_path / "x")
    with pytest.raises(FileNotFoundError):
        with manager.restore_path("nope"):
            pass


def test_upload_selector_and_paths(manager, tmp_path):
    src = tmp_path / "src"
    make_tree(src, TREE)
    manager.upload(src, "sel", selector=lambda p: p.startswith("sub/"))
    assert manager.list_files("sel") == {"sub/": 0, "sub/deeper/": 0, "sub/deeper/rng_state.pt": 5, "sub/opt.bin": 3}
    manager.upload(src, "paths", paths={"state", "empty/"})
    assert manager.list_files("paths") == {"empty/": 0, "state": 7}
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        manager.upload(src, "bad", paths={"missing.txt"})


def test_store_path_then_restore(manager):
    with manager.store_path("sp") as path:
        (path / "w.pt").write_bytes(b"12345")
        (path / "d").mkdir()
    assert manager.list_files("sp") == {"d/": 0, "w.pt": 5}
    if not manager.in_place:
        assert not path.exists(), "staging directory was not cleaned up"


def test_partial_and_idempotent_delete(manager, tmp_path):
    src = tmp_path / "src"
    make_tree(src, TREE)
    manager.upload(src, "del")
    # an empty glob list deletes nothing
    assert manager.delete("del", []) == TREE_RESOURCES
    assert manager.delete("del", [""]) == TREE_RESOURCES
    remaining = manager.delete("del", ["**/*state*"])
    assert remaining == {k: v for k, v in TREE_RESOURCES.items() if k not in ("state", "sub/deeper/rng_state.pt")}
    assert manager.list_files("del") == remaining
    # again: the files are already gone, nothing else changes
    assert manager.delete("del", ["**/*state*"]) == remaining
    assert manager.delete("del", ["sub"]) == {"empty/": 0, "model.bin": 100}
    assert manager.delete("del", ["**/*"]) == {}
    assert manager.list_files("del") == {}
    assert manager.delete("del") == {}  # a checkpoint that is gone is fine
    assert manager.delete("never-existed", ["**/*"]) == {}
    if manager.in_place:
        assert not manager.path_of("del").exists()


def test_prefixes_keep_checkpoints_apart(s3_config, tmp_path):
    src = tmp_path / "src"
    make_tree(src, {"a": "1"})
    one = storage.build(s3_config)
    other = storage.build({**s3_config, "prefix": "other"})
    one.upload(src, "same-id")
    assert other.list_files("same-id") == {}
    assert one.list_files("same-id") == {"a": 1}
    with pytest.raises(ValueError, match="prefix"):
        storage.build({**s3_config, "prefix": "a/../b"})


def test_core_context_on_s3(s3_config, tmp_path):
    """The Core API off-cluster with S3 checkpoint storage: upload, store_path, restore, delete."""
    from determined import core

    with core.init(checkpoint_storage=s3_config) as ctx:
        src = tmp_path / "src"
        make_tree(src, {"w.bin": "abc", "skip.log": "x"})
        sid = ctx.checkpoint.upload(src, {"steps_completed": 2}, selector=lambda p: p != "skip.log")
        with ctx.checkpoint.store_path({"steps_completed": 4}) as (path, sid2):
            (path / "m.pt").write_text("model")
        assert ctx.checkpoint.get_metadata(sid2) == {"steps_completed": 4}
        with ctx.checkpoint.restore_path(sid) as p:
            assert sorted(os.listdir(p)) == ["metadata.json", "w.bin"]
            assert json.loads((p / "metadata.json").read_text()) == {"steps_completed": 2}
            restored = p
        assert not restored.exists()
        ctx.checkpoint.download(sid2, tmp_path / "d2")
        assert (tmp_path / "d2" / "m.pt").read_text() == "model"
        ctx.checkpoint.delete(sid)
        m = storage.build(s3_config)
        assert m.list_files(sid) == {}
        assert set(m.list_files(sid2)) == {"m.pt", "metadata.json"}
