"""determined-master startup rules that need no cluster."""

import subprocess

from cluster import BIN, free_port


def test_refuses_non_loopback_with_blank_builtin_passwords(tmp_path):
    proc = subprocess.run(
        [str(BIN / "determined-master"), "--bind", "0.0.0.0", "--port", str(free_port()),
         "--data-dir", str(tmp_path / "data")],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "blank password" in out and "0.0.0.0" in out, out


def test_unknown_master_config_key_is_an_error(tmp_path):
    cfg = tmp_path / "master.yaml"
    cfg.write_text("port: 1\nbogus: true\n")
    proc = subprocess.run(
        [str(BIN / "determined-master"), "--config-file", str(cfg), "--data-dir",
         str(tmp_path / "data")],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode != 0
    assert "bogus: unknown field" in proc.stdout + proc.stderr


def test_initial_user_password_protects_builtin_users(tmp_path):
    import hashlib
    import json
    import urllib.error
    import urllib.request

    from cluster import wait_for

    port = free_port()
    cfg = tmp_path / "master.yaml"
    cfg.write_text("security:\n  initial_user_password: s3cret-Pass\n")
    proc = subprocess.Popen(
        [str(BIN / "determined-master"), "--config-file", str(cfg), "--port", str(port),
         "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"

    def login(password: str) -> int:
        hashed = hashlib.sha512(("GubPEmmotfiK9TMD6Zdw" + password).encode()).hexdigest() \
            if password else ""
        req = urllib.request.Request(
            url + "/api/v1/auth/login", method="POST",
            data=json.dumps({"username": "admin", "password": hashed, "isHashed": True}).encode())
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def up():
        try:
            return urllib.request.urlopen(url + "/info", timeout=2).status == 200
        except OSError:
            return False

    try:
        wait_for(up, 30, "master to answer /info")
        assert login("") == 401
        assert login("wrong") == 401
        assert login("s3cret-Pass") == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# `det deploy local master-up` and its startup check ---------------------------------------

def deploy(data_dir, *args, timeout=120):
    return subprocess.run([str(BIN / "det"), "deploy", "local", *args, "--data-dir", str(data_dir)],
                          capture_output=True, text=True, timeout=timeout)


def pid_running(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_master_up_reports_a_live_master_as_up_every_time(tmp_path):
    """A live master was sometimes reported as "exited during startup": det took an empty
    /proc/<pid>/cmdline for a zombie, and it is also empty while the master is inside execve.
    Starting and stopping the master repeatedly must succeed every time, and the master must be
    the recorded, running process each time."""
    data = tmp_path / "data"
    for i in range(8):
        port = free_port()
        up = deploy(data, "master-up", "--master-port", str(port))
        assert up.returncode == 0, f"start {i}: {up.stdout}\n{up.stderr}"
        assert f"Master is up at http://127.0.0.1:{port}" in up.stdout, up.stdout
        pid = int((data / "master.pid").read_text().split()[0])
        assert pid_running(pid), f"start {i}: det reported the master up, but pid {pid} is gone"
        down = deploy(data, "master-down")
        assert down.returncode == 0 and f"Stopped master (pid {pid})" in down.stdout, down.stdout
        assert not pid_running(pid)


def test_master_up_reports_a_master_that_exits_with_its_log_tail(tmp_path):
    data = tmp_path / "data"
    cfg = tmp_path / "master.yaml"
    cfg.write_text("bogus_key: 1\n")
    proc = deploy(data, "master-up", "--master-port", str(free_port()), "--master-config-path",
                  str(cfg))
    assert proc.returncode != 0
    assert "the master exited during startup" in proc.stderr, proc.stderr
    assert "master.log" in proc.stderr and "bogus_key: unknown field" in proc.stderr, proc.stderr
    pid = int((data / "master.pid").read_text().split()[0])
    assert not pid_running(pid)


def test_master_up_reports_a_master_that_cannot_listen(tmp_path):
    """The port is taken by a socket that accepts connections but never answers: det's /info
    polls time out while the master fails to bind and exits; det must report that exit, with
    the master's own error from its log, not wait out its timeout."""
    import socket
    import time

    data = tmp_path / "data"
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(64)
        port = blocker.getsockname()[1]
        t0 = time.monotonic()
        proc = deploy(data, "master-up", "--master-port", str(port), timeout=90)
        elapsed = time.monotonic() - t0
    assert proc.returncode != 0
    assert "the master exited during startup" in proc.stderr, proc.stderr
    assert f"{port}" in proc.stderr and "in use" in proc.stderr, proc.stderr
    assert elapsed < 30, f"took {elapsed:.1f}s: the exit should be noticed at the next poll"
    pid = int((data / "master.pid").read_text().split()[0])
    assert not pid_running(pid)
