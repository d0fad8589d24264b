"""determined.exec.zygote's pure helpers; the agent's tests (agent/launcher/warm_launcher_test.cc)
and tests/e2e/test_warm_python.py drive the whole warm start."""

import os
import pathlib
import sys

from determined.exec import zygote


def test_pythonpath_entries_are_absolute_and_empty_means_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cwd = os.getcwd()
    assert zygote._pythonpath_entries("") == []
    assert zygote._pythonpath_entries("rel::/abs") == [f"{cwd}/rel", cwd, "/abs"]


def test_path_without_pythonpath_and_dedup():
    path = ["/h", "/usr/lib/python3.11", "/x", "/usr/lib/python3.11"]
    assert zygote._path_without_pythonpath(path, "/h:/x") == ["/usr/lib/python3.11"] * 2
    assert zygote._dedup(["/a", "/b", "/a", "/c", "/b"]) == ["/a", "/b", "/c"]


def test_system_exit_status(capsys):
    assert zygote._system_exit_status(SystemExit()) == 0
    assert zygote._system_exit_status(SystemExit(3)) == 3
    assert zygote._system_exit_status(SystemExit(256 + 7)) == 7
    assert zygote._system_exit_status(SystemExit("bad input")) == 1
    assert capsys.readouterr().err == "bad input\n"


def test_shadowed_module_finds_an_earlier_copy(tmp_path):
    # `zygote` itself is loaded from the harness: a context dir ahead of it with a
    # `determined/` package shadows it, one without does not.
    harness = str(pathlib.Path(zygote.__file__).parents[2])
    base = {m.split(".")[0] for m in sys.modules} - {"determined"}
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "train.py").write_text("")
    assert zygote._shadowed_module([str(clean), harness] + sys.path, base) is None
    shadow = tmp_path / "shadow"
    (shadow / "determined").mkdir(parents=True)
    # A directory without __init__ is a namespace portion: the harness's package still wins.
    assert zygote._shadowed_module([str(shadow), harness] + sys.path, base) is None
    (shadow / "determined" / "__init__.py").write_text("")
    why = zygote._shadowed_module([str(shadow), harness] + sys.path, base)
    assert why is not None and why.startswith("'determined' would come from " + str(shadow)), why


def test_only_what_python_imports_shadows_a_module(tmp_path):
    # make demo's example: a `random.yaml` beside train.py is no module (the warm start refused
    # it as "'random' would come from ..."); a random.py or an extension module is one.
    import importlib.machinery
    import random  # noqa: F401  (loaded from the standard library, so it can be shadowed)

    base = {m.split(".")[0] for m in sys.modules} - {"random"}
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "random.yaml").write_text("x: 1\n")
    (ctx / "random.txt").write_text("")
    assert zygote._shadowed_module([str(ctx)] + sys.path, base) is None
    for name in ["random.py", "random" + importlib.machinery.EXTENSION_SUFFIXES[0]]:
        (ctx / name).write_text("")
        why = zygote._shadowed_module([str(ctx)] + sys.path, base)
        assert why is not None and why.startswith("'random' would come from " + str(ctx)), why
        (ctx / name).unlink()


def _start_zygote(tmp_path):
    import json
    import socket
    import subprocess

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(zygote.__file__).parents[2]),
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "determined.exec.zygote", "--preload", "json"], env=env,
        cwd=tmp_path, close_fds=False, stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.dup2(theirs.fileno(), 3))
    theirs.close()
    ready = json.loads(ours.recv(1 << 16))
    assert ready["op"] == "ready" and ready["preloaded"] == ["json"], ready
    return proc, ours, env


def test_children_outlive_the_agent_and_the_zygote_waits_for_them(tmp_path):
    """After the agent's end of the socket closes (its kill -9), a running fork goes on and
    the zygote exits once it ended, instead of failing to report the exit."""
    import json
    import socket
    import subprocess
    import time

    proc, ours, env = _start_zygote(tmp_path)
    try:
        (tmp_path / "t.py").write_text(
            "import sys, time\ntime.sleep(0.5)\nopen('done', 'w').write(' '.join(sys.argv))\n")
        out = open(tmp_path / "out.txt", "wb")
        null = open(os.devnull, "rb")
        request = {"op": "spawn", "id": 1, "executable": sys.executable,
                   "argv": ["python3", "t.py", "a"], "script": "t.py", "args": ["a"],
                   "env": env, "cwd": str(tmp_path)}
        socket.send_fds(ours, [json.dumps(request).encode()],
                        [null.fileno(), out.fileno(), out.fileno()])
        spawned = json.loads(ours.recv(1 << 16))
        assert spawned["op"] == "spawned" and spawned["id"] == 1 and spawned["pid"] > 0, spawned
        ours.close()  # the agent is gone
        assert proc.wait(timeout=30) == 0
        assert (tmp_path / "done").read_text() == "t.py a"
        assert (tmp_path / "out.txt").read_bytes() == b""
    finally:
        if proc.poll() is None:
            proc.kill()


def _children_of(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return {int(p) for p in f.read().split()}


def _spawn_and_wait(ours, tmp_path, env, rid, name):
    import json
    import socket

    out = open(tmp_path / f"{name}.out", "wb")
    null = open(os.devnull, "rb")
    request = {"op": "spawn", "id": rid, "executable": sys.executable,
               "argv": ["python3", "t.py", name], "script": "t.py", "args": [name],
               "env": dict(env, WHO=name), "cwd": str(tmp_path)}
    socket.send_fds(ours, [json.dumps(request).encode()], [null.fileno(), out.fileno(), out.fileno()])
    out.close()
    null.close()
    spawned = json.loads(ours.recv(1 << 16))
    assert spawned["op"] == "spawned" and spawned["id"] == rid, spawned
    exited = json.loads(ours.recv(1 << 16))
    assert exited == {"op": "exited", "pid": spawned["pid"], "status": 0}, exited
    return spawned["pid"]


def test_spawns_are_served_by_the_spare_fork_made_ahead(tmp_path):
    """The zygote keeps one child forked ahead; a spawn gets it (its pid existed before the
    request) and it runs the trial exactly as a fresh fork would; a spare killed while waiting
    is replaced by a plain fork for that spawn."""
    import signal
    import time

    proc, ours, env = _start_zygote(tmp_path)
    try:
        (tmp_path / "t.py").write_text(
            "import os, sys\nprint(sys.argv, os.environ['WHO'], os.getcwd() == os.environ['PWD'],"
            " os.getpgid(0) == os.getpid(), os.getsid(0) == os.getpid(), flush=True)\n")

        def spare():
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                kids = _children_of(proc.pid)
                if len(kids) == 1:
                    return kids.pop()
                time.sleep(0.01)
            raise AssertionError(f"no single spare child: {_children_of(proc.pid)}")

        first_spare = spare()
        assert _spawn_and_wait(ours, tmp_path, env, 1, "one") == first_spare
        second_spare = spare()
        assert second_spare != first_spare
        assert _spawn_and_wait(ours, tmp_path, env, 2, "two") == second_spare
        for name in ("one", "two"):
            assert (tmp_path / f"{name}.out").read_text() == f"['t.py', '{name}'] {name} True True True\n"
        third_spare = spare()
        os.kill(third_spare, signal.SIGKILL)
        deadline = time.monotonic() + 30  # dead (a zombie the zygote has not reaped yet)
        while open(f"/proc/{third_spare}/stat").read().split(") ")[1][0] != "Z":
            assert time.monotonic() < deadline, "the killed spare did not die"
            time.sleep(0.01)
        pid = _spawn_and_wait(ours, tmp_path, env, 3, "three")
        assert pid != third_spare
        assert (tmp_path / "three.out").read_text() == "['t.py', 'three'] three True True True\n"
        ours.close()
        assert proc.wait(timeout=30) == 0  # the spare is dropped with the agent's socket
    finally:
        if proc.poll() is None:
            proc.kill()
