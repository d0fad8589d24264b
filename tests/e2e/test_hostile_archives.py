"""Hostile archives against a cluster of its own: an experiment context with entries that would
land outside its directory ('..', absolute paths), links, devices; a checkpoint holding a
symbolic link to a file outside it, downloaded by REST, `det checkpoint download` and the SDK;
and '..' paths against the context routes (model_def, file_tree, file). Each is refused with an
error naming the entry and the rule, and nothing is written or served from outside."""

import base64
import io
import json
import pathlib
import subprocess
import sys
import tarfile
import urllib.error
import urllib.request

import pytest

from cluster import Cluster, brought_up, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "hostile"
CONFIG = ("name: hostile\nentrypoint: python3 train.py\nsearcher:\n  name: single\n  metric: x\n"
          "  max_length:\n    batches: 1\n")


@pytest.fixture(scope="module")
def cluster():
    with brought_up(Cluster(agents=1, slots=1)) as c:
        yield c


def _file(path, content=b"print(1)\n", type_=48, **extra):
    return dict({"path": path, "type": type_, "content": base64.b64encode(content).decode(),
                 "mode": 0o644}, **extra)


def _create(cluster, files):
    return cluster.request_status(
        "POST", "/api/v1/experiments",
        {"config": CONFIG, "modelDefinition": [_file("train.py")] + files, "activate": False},
        headers={"Authorization": f"Bearer {cluster.token()}", "Content-Type": "application/json"})


def _experiment_count(cluster):
    return len(cluster.request("GET", "/api/v1/experiments?limit=1000")["experiments"])


@pytest.mark.parametrize("entry,want", [
    (_file("../escape.py"), "modelDefinition[1].path: must be relative without '..' (got "
                            "'../escape.py')"),
    (_file("a/../../escape.py"), "must be relative without '..' (got 'a/../../escape.py')"),
    (_file("/tmp/det-hostile-abs.py"), "modelDefinition[1].path: absolute paths are not allowed "
                                       "(got '/tmp/det-hostile-abs.py')"),
    (_file("link", b"", 50, linkname="/etc/passwd"),
     "modelDefinition[1] ('link'): type 50 (a symbolic link) is not allowed"),
    (_file("hard", b"", 49, linkname="train.py"),
     "modelDefinition[1] ('hard'): type 49 (a hard link) is not allowed"),
    (_file("tty", b"", 51), "modelDefinition[1] ('tty'): type 51 (a character device) is not "
                            "allowed"),
    (_file("disk", b"", 52), "type 52 (a block device) is not allowed"),
    (_file("pipe", b"", 54), "type 54 (a fifo) is not allowed"),
])
def test_hostile_context_entry_is_refused(cluster, entry, want):
    before = _experiment_count(cluster)
    status, body = _create(cluster, [entry])
    assert status == 400, body
    assert want in body["error"]["error"], body
    assert _experiment_count(cluster) == before
    assert not pathlib.Path("/tmp/det-hostile-abs.py").exists()
    assert not (cluster.tmp / "escape.py").exists()


def test_setuid_bits_never_reach_the_context(cluster):
    status, body = _create(cluster, [_file("tool.sh", b"#!/bin/sh\n", mode=0o4755)])
    assert status == 200, body
    exp_id = body["experiment"]["id"]
    tgz = base64.b64decode(cluster.request("GET", f"/api/v1/experiments/{exp_id}/model_def")
                           ["b64Tgz"])
    with tarfile.open(fileobj=io.BytesIO(tgz)) as tar:
        modes = {m.name: m.mode for m in tar.getmembers()}
    assert modes["tool.sh"] == 0o755, {k: oct(v) for k, v in modes.items()}


def test_context_routes_refuse_dot_dot_paths(cluster):
    status, body = _create(cluster, [_file("sub/a.txt", b"a")])
    assert status == 200, body
    exp_id = body["experiment"]["id"]
    auth = {"Authorization": f"Bearer {cluster.token()}", "Content-Type": "application/json"}
    for path in ("../../../../etc/passwd", "/etc/passwd", "sub/../../train.py", "sub/../train.py"):
        status, body = cluster.request_status("POST", f"/api/v1/experiments/{exp_id}/file",
                                              {"path": path}, headers=auth)
        assert status in (400, 404), (path, body)
        assert path in body["error"]["error"], body
        assert "root:" not in json.dumps(body)
    # The real file still reads, and '..' in the route's own path is no way around it.
    assert base64.b64decode(cluster.request("POST", f"/api/v1/experiments/{exp_id}/file",
                                            {"path": "sub/a.txt"})["file"]) == b"a"
    for route in (f"/api/v1/experiments/{exp_id}/../../../etc/passwd",
                  f"/api/v1/experiments/{exp_id}/%2e%2e/%2e%2e/model_def",
                  f"/api/v1/experiments/..%2F..%2Fetc%2Fpasswd/model_def",
                  f"/api/v1/experiments/..%2F{exp_id}/file_tree"):
        status, body = cluster.request_status("GET", route, headers=auth)
        assert status in (400, 404, 405), (route, status, body)
        assert "root:" not in json.dumps(body)
    tgz = base64.b64decode(cluster.request("GET", f"/api/v1/experiments/{exp_id}/model_def")
                           ["b64Tgz"])
    with tarfile.open(fileobj=io.BytesIO(tgz)) as tar:
        names = sorted(m.name for m in tar.getmembers())
    assert all(not n.startswith("/") and ".." not in n.split("/") for n in names), names
    assert "sub/a.txt" in names


def _checkpoint_uuid(cluster, exp_id):
    def done():
        ckpts = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
        return ckpts[0]["uuid"] if ckpts else None
    return wait_for(done, 60, "the checkpoint")


def test_checkpoint_with_a_link_outside_is_not_served(cluster, tmp_path):
    secret = tmp_path / "master-secret.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    exp_id = cluster.create(FIXTURES / "leaky_checkpoint.yaml", FIXTURES, "--config",
                            f"hyperparameters.secret={secret}")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    uuid = _checkpoint_uuid(cluster, exp_id)
    link = cluster.data_dir / "checkpoints" / uuid / "leak"
    assert link.is_symlink(), f"the trial left no link at {link}"

    # REST: refused, naming the entry and the rule; the file's content is nowhere.
    req = urllib.request.Request(f"{cluster.url}/checkpoints/{uuid}",
                                 headers={"Authorization": f"Bearer {cluster.token()}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raise AssertionError(f"served with {resp.status}: {resp.read()[:200]!r}")
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        assert e.code == 400, text
        assert f"checkpoint {uuid}: entry 'leak' is a symbolic link" in text, text
        assert "regular files and directories only" in text
        assert "TOP-SECRET" not in text

    # det checkpoint download --mode master: the same reason, nothing unpacked.
    out = tmp_path / "cli"
    proc = cluster.det("checkpoint", "download", uuid, "--mode", "master", "-o", str(out),
                       check=False)
    assert proc.returncode != 0
    assert "entry 'leak' is a symbolic link" in proc.stdout + proc.stderr, proc
    assert not any(p.is_file() and "TOP-SECRET" in p.read_text(errors="replace")
                   for p in out.rglob("*")) if out.exists() else True

    # The SDK's download through the master: refused as well.
    script = (
        "import sys\n"
        "from determined.experimental import client\n"
        "from determined import errors\n"
        "from determined.common.experimental.checkpoint import _checkpoint\n"
        "d = client.Determined(sys.argv[1], user='determined', password='')\n"
        "try:\n"
        "    _checkpoint.Checkpoint._download_via_master(d._session, sys.argv[2], "
        "__import__('pathlib').Path(sys.argv[3]))\n"
        "except errors.ProxiedDownloadFailed as e:\n"
        "    print('REFUSED', e)\n"
    )
    sdk_out = tmp_path / "sdk"
    proc = subprocess.run([sys.executable, "-c", script, cluster.url, uuid, str(sdk_out)],
                          env=cluster.env, capture_output=True, text=True, timeout=120)
    assert "REFUSED" in proc.stdout, proc.stdout + proc.stderr
    assert "symbolic link" in proc.stdout, proc.stdout
    assert not any(p.is_file() for p in sdk_out.rglob("*")) if sdk_out.exists() else True
