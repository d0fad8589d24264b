"""determined.exec.checkpoint_tar: the helper the master runs to stream a checkpoint from any
storage as tar.gz (s3 on a local s3rver, shared_fs on disk)."""

import io
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import types
import uuid

from determined.common import storage
from storage_helpers import make_tree, s3_config, s3rver  # noqa: F401

HARNESS = pathlib.Path(__file__).resolve().parents[1]
FILES = {"model.pt": b"\x00weights\xff" * 100, "sub/dir/metadata.json": '{"a": 1}', "empty/": ""}


def run_helper(config, storage_id):
    env = dict(os.environ, PYTHONPATH=str(HARNESS), DET_STORAGE_CONFIG=json.dumps(config))
    return subprocess.run([sys.executable, "-m", "determined.exec.checkpoint_tar", "--uuid",
                           storage_id], env=env, capture_output=True, timeout=120)


def members(data: bytes):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: (tar.extractfile(m).read() if m.isfile() else None)
                for m in tar.getmembers()}


def upload(config, tmp_path) -> str:
    sid = str(uuid.uuid4())
    src = tmp_path / "src"
    make_tree(src, FILES)
    storage.build(config).upload(src, sid)
    return sid


def check_archive(data: bytes) -> None:
    got = members(data)
    assert got["model.pt"] == FILES["model.pt"]
    assert got["sub/dir/metadata.json"] == b'{"a": 1}'
    assert {n for n, v in got.items() if v is not None} == {"model.pt", "sub/dir/metadata.json"}


def test_streams_a_checkpoint_from_s3(s3_config, tmp_path):  # noqa: F811
    sid = upload(s3_config, tmp_path)
    proc = run_helper(s3_config, sid)
    assert proc.returncode == 0, proc.stderr.decode()
    check_archive(proc.stdout)


def test_missing_checkpoint_on_s3_exits_2(s3_config):  # noqa: F811
    proc = run_helper(s3_config, str(uuid.uuid4()))
    assert proc.returncode == 2
    assert b"not found" in proc.stderr
    assert proc.stdout == b""


def test_streams_a_checkpoint_from_shared_fs(tmp_path):
    config = {"type": "shared_fs", "host_path": str(tmp_path / "host")}
    sid = upload(config, tmp_path)
    proc = run_helper(config, sid)
    assert proc.returncode == 0, proc.stderr.decode()
    check_archive(proc.stdout)


def test_bad_storage_config_exits_1(tmp_path):
    proc = run_helper({"type": "ftp"}, str(uuid.uuid4()))
    assert proc.returncode == 1
    assert b"checkpoint_tar:" in proc.stderr


def test_refuses_a_symlink_in_the_checkpoint(tmp_path):
    """A trial that left a link to a file outside its checkpoint gets no archive of it: exit 3,
    the entry named on stdout (for the master) and stderr, no tar bytes."""
    host = tmp_path / "host"
    sid = str(uuid.uuid4())
    ckpt = host / sid
    make_tree(ckpt, {"model.pt": b"w"})
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve")
    (ckpt / "leak").symlink_to(secret)
    proc = run_helper({"type": "shared_fs", "host_path": str(host)}, sid)
    assert proc.returncode == 3, proc.stderr.decode()
    assert b"entry 'leak' is a symbolic link" in proc.stdout
    assert b"regular files and directories only" in proc.stderr
    assert b"do not serve" not in proc.stdout


def _hostile_tar(name, kind, link=""):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        ok = tarfile.TarInfo("fine.txt")
        ok.size = 2
        tar.addfile(ok, io.BytesIO(b"ok"))
        ti = tarfile.TarInfo(name)
        ti.type = kind
        ti.linkname = link
        if kind == tarfile.REGTYPE:
            ti.size = 1
            tar.addfile(ti, io.BytesIO(b"x"))
        else:
            tar.addfile(ti)
    return buf.getvalue()


def test_sdk_download_refuses_hostile_entries(tmp_path, monkeypatch):
    """Checkpoint._download_via_master unpacks regular files and directories only: '..',
    absolute paths, links and devices are refused naming the entry, and nothing lands outside
    the target."""
    from determined import errors
    from determined.common.experimental import _util
    from determined.common.experimental.checkpoint import _checkpoint

    session = types.SimpleNamespace(default_timeout=5)
    cases = [("../escape.txt", tarfile.REGTYPE, "", "'..' component"),
             (str(tmp_path / "abs.txt"), tarfile.REGTYPE, "", "absolute path"),
             ("link", tarfile.SYMTYPE, "/etc", "is a symbolic link (to '/etc')"),
             ("hard", tarfile.LNKTYPE, "/etc/passwd", "is a hard link (to '/etc/passwd')"),
             ("dev", tarfile.CHRTYPE, "", "special file")]
    for i, (name, kind, link, want) in enumerate(cases):
        data = _hostile_tar(name, kind, link)
        monkeypatch.setattr(_util, "open_raw", lambda *a, **k: io.BytesIO(data))
        target = tmp_path / f"t{i}" / "dest"
        try:
            _checkpoint.Checkpoint._download_via_master(session, "u-1", target)
        except errors.ProxiedDownloadFailed as e:
            assert want in str(e) and "u-1" in str(e), str(e)
        else:
            raise AssertionError(f"{name} was extracted")
        assert sorted(p.name for p in (tmp_path / f"t{i}").iterdir()) == ["dest"]
        assert not (tmp_path / "abs.txt").exists()
    # A plain archive still unpacks.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        ti = tarfile.TarInfo("sub/a.txt")
        ti.size = 1
        ti.mode = 0o4755
        tar.addfile(ti, io.BytesIO(b"a"))
    monkeypatch.setattr(_util, "open_raw", lambda *a, **k: io.BytesIO(buf.getvalue()))
    _checkpoint.Checkpoint._download_via_master(session, "u-2", tmp_path / "good")
    assert (tmp_path / "good" / "sub" / "a.txt").read_bytes() == b"a"
    assert not os.stat(tmp_path / "good" / "sub" / "a.txt").st_mode & 0o4000
