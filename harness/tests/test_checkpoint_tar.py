"""determined.exec.checkpoint_tar: the helper the master runs to stream a checkpoint from any
storage as tar.gz (s3 on a local s3rver, shared_fs on disk)."""

import io
import json
import os
import pathlib
import subprocess
import sys
import tarfile
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
