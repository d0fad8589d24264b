"""The GC task entry point (determined.exec.gc_checkpoints) and checkpoint_download."""

import json
import os
import subprocess
import sys

import pytest

from determined.common import storage
from determined.exec import gc_checkpoints
from storage_helpers import make_tree, s3_config, s3rver  # noqa: F401

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args, env=None):
    env = {k: v for k, v in (env or os.environ).items() if not k.startswith("DET_")}
    env["PYTHONPATH"] = HARNESS
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, env=env, cwd=HARNESS, timeout=120
    )


@pytest.fixture(params=["shared_fs", "s3"])
def config(request, tmp_path):
    if request.param == "shared_fs":
        return {"type": "shared_fs", "host_path": str(tmp_path), "storage_path": "cp", "save_trial_latest": 1}
    return request.getfixturevalue("s3_config")


def _seed(config, tmp_path, ids):
    m = storage.build(config)
    src = tmp_path / "seed"
    make_tree(src, {"metadata.json": '{"steps_completed": 1}', "state": "s" * 4, "model/w.pt": "w" * 9})
    for sid in ids:
        m.upload(src, sid)
    return m


def test_gc_entry_point_deletes_and_reports_what_remains(config, tmp_path):
    m = _seed(config, tmp_path, ["u1", "u2", "u3"])
    out = _run("determined.exec.gc_checkpoints", "--storage-config", json.dumps(config),
               "--delete", "u1,u2,gone", "--experiment-id", "7")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    by_id = {c["uuid"]: c for c in report["checkpoints"]}
    assert report["experimentId"] == 7
    assert by_id["u1"]["state"] == "DELETED" and by_id["u1"]["resources"] == {}
    assert set(by_id["u1"]["deleted"]) == {"metadata.json", "state", "model/", "model/w.pt"}
    assert by_id["gone"] == {"uuid": "gone", "state": "DELETED", "resources": {}, "deleted": [], "error": None}
    assert m.list_files("u1") == {} and m.list_files("u2") == {}
    assert set(m.list_files("u3")) == {"metadata.json", "state", "model/", "model/w.pt"}

    # partial delete by glob, then again (idempotent), then an empty glob list
    out = _run("determined.exec.gc_checkpoints", "--storage-config", json.dumps(config),
               "--delete", "u3", "--globs", "**/*state*")
    entry = json.loads(out.stdout)["checkpoints"][0]
    assert entry["state"] == "PARTIALLY_DELETED" and entry["deleted"] == ["state"]
    assert entry["resources"] == {"metadata.json": 22, "model/": 0, "model/w.pt": 9}
    again = json.loads(_run("determined.exec.gc_checkpoints", "--storage-config", json.dumps(config),
                            "--delete", "u3", "--globs", "**/*state*").stdout)["checkpoints"][0]
    assert again["state"] == "UNCHANGED" and again["resources"] == entry["resources"]
    none = json.loads(_run("determined.exec.gc_checkpoints", "--storage-config", json.dumps(config),
                           "--delete", "u3", "--globs", "").stdout)["checkpoints"][0]
    assert none["state"] == "UNCHANGED" and none["resources"] == entry["resources"]


def test_gc_dry_run_changes_nothing(tmp_path):
    config = {"type": "shared_fs", "host_path": str(tmp_path)}
    m = _seed(config, tmp_path, ["d1"])
    res = gc_checkpoints.gc_checkpoints(config, ["d1"], ["state"], dry_run=True)
    assert res[0]["deleted"] == ["state"] and "state" not in res[0]["resources"]
    assert "state" in m.list_files("d1")


class _Flaky(storage.SharedFSStorageManager):
    """Fails the first ``failures`` deletes, like a storage service having a bad minute."""

    def __init__(self, base, failures):
        super().__init__(base)
        self.failures = failures
        self.attempts = 0

    def _delete_paths(self, storage_id, paths):
        self.attempts += 1
        if self.attempts <= self.failures:
            raise OSError("503 slow down")
        super()._delete_paths(storage_id, paths)


def test_gc_retries_with_backoff(tmp_path):
    config = {"type": "shared_fs", "host_path": str(tmp_path)}
    _seed(config, tmp_path, ["r1"])
    sleeps = []
    flaky = _Flaky(tmp_path, failures=2)
    res = gc_checkpoints.gc_checkpoints(None, ["r1"], manager=flaky, backoff=0.5, sleep=sleeps.append)
    assert res[0]["state"] == "DELETED" and res[0]["error"] is None
    assert sleeps == [0.5, 1.0] and flaky.attempts == 3

    _seed(config, tmp_path, ["r2"])
    hopeless = _Flaky(tmp_path, failures=100)
    res = gc_checkpoints.gc_checkpoints(None, ["r2"], manager=hopeless, attempts=3, sleep=lambda s: None)
    assert res[0]["state"] == "FAILED" and "503" in res[0]["error"]
    assert set(res[0]["resources"]) == {"metadata.json", "state", "model/", "model/w.pt"}  # nothing lost silently


def test_gc_exit_status_on_failure(tmp_path):
    out = _run("determined.exec.gc_checkpoints", "--storage-config", '{"type": "tape"}', "--delete", "x")
    assert out.returncode != 0 and "tape" in out.stderr


def test_gc_reports_to_master(master, tmp_path):
    config = {"type": "shared_fs", "host_path": str(tmp_path)}
    _seed(config, tmp_path, ["m1"])
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-m", "determined.exec.gc_checkpoints", "--storage-config", json.dumps(config),
         "--delete", "m1", "--globs", "state"],
        capture_output=True, text=True, cwd=HARNESS, timeout=120,
        env={**{k: v for k, v in env.items() if not k.startswith("DET_")}, "PYTHONPATH": HARNESS,
             "DET_MASTER": master.url, "DET_SESSION_TOKEN": master.token},
    )
    assert out.returncode == 0, out.stderr
    patches = [r for r in master.requests if r.method == "PATCH" and r.path == "/api/v1/checkpoints"]
    assert len(patches) == 1
    body = patches[0].body
    assert body == {"checkpoints": [{"uuid": "m1", "resources": {"resources": {
        "metadata.json": "22", "model/": "0", "model/w.pt": "9"}}}]}


def test_checkpoint_download_direct(config, tmp_path):
    _seed(config, tmp_path, ["dl"])
    target = tmp_path / "out"
    out = _run("determined.common.checkpoint_download", "--storage-config", json.dumps(config), "--uuid", "dl",
               "-o", str(target), "--glob", "metadata.json", "--glob", "model")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(target)
    assert storage.list_directory(target) == {"metadata.json": 22, "model/": 0, "model/w.pt": 9}
    # a target that already holds metadata.json is left alone
    (target / "model" / "w.pt").write_text("local")
    assert _run("determined.common.checkpoint_download", "--storage-config", json.dumps(config), "--uuid", "dl",
                "-o", str(target)).returncode == 0
    assert (target / "model" / "w.pt").read_text() == "local"
    missing = _run("determined.common.checkpoint_download", "--storage-config", json.dumps(config), "--uuid", "nope",
                   "-o", str(tmp_path / "n"))
    assert missing.returncode == 2 and "nope" in missing.stderr
