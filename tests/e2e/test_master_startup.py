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


# The data dir belongs to one master and records its store (docs/operations.md, "The data dir")

def master_cmd(data_dir, port, *args):
    return [str(BIN / "determined-master"), "--port", str(port), "--data-dir", str(data_dir),
            *args]


def answers_info(port: int) -> bool:
    import urllib.request
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/info", timeout=2).status == 200
    except OSError:
        return False


def test_a_second_master_on_one_data_dir_exits_naming_the_first(tmp_path):
    from cluster import wait_for

    data = tmp_path / "data"
    port = free_port()
    first = subprocess.Popen(master_cmd(data, port), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: answers_info(port), 30, "the first master to answer /info")
        second = subprocess.run(master_cmd(data, free_port()), capture_output=True, text=True,
                                timeout=30)
        out = second.stdout + second.stderr
        assert second.returncode != 0, out
        assert "in use by another determined-master" in out, out
        assert f"pid {first.pid}" in out, out
        # The first keeps serving, alone.
        assert first.poll() is None
        assert answers_info(port)
    finally:
        first.terminate()
        first.wait(timeout=30)
    # Once the first is gone the data dir is free again.
    port = free_port()
    again = subprocess.Popen(master_cmd(data, port), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: answers_info(port), 30, "a master after the first stopped")
    finally:
        again.terminate()
        again.wait(timeout=30)


def test_a_zero_length_database_refuses_to_start(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "determined.db").write_bytes(b"")
    proc = subprocess.run(master_cmd(data, free_port()), capture_output=True, text=True,
                          timeout=30)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "is empty (zero bytes)" in out and str(data / "determined.db") in out, out
    assert (data / "determined.db").stat().st_size == 0, "the empty file was written to"
    assert not (data / "store.json").exists()


def test_the_data_dir_records_its_store_and_refuses_another(tmp_path):
    import json

    from cluster import wait_for

    data = tmp_path / "data"
    port = free_port()
    proc = subprocess.Popen(master_cmd(data, port), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: answers_info(port), 30, "the master to answer /info")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    record = json.loads((data / "store.json").read_text())
    assert record == {"store": "sqlite", "path": str((data / "determined.db").resolve())}, record
    # Another store on this data dir is refused, naming both; nothing is connected to.
    other = subprocess.run(
        master_cmd(data, free_port(), "--db", "postgres://det:pw-123@127.0.0.1:1/elsewhere"),
        capture_output=True, text=True, timeout=30)
    out = other.stdout + other.stderr
    assert other.returncode != 0, out
    assert "SQLite database " + str((data / "determined.db").resolve()) in out, out
    assert "PostgreSQL database elsewhere on 127.0.0.1:1 as user det" in out, out
    assert "pw-123" not in out
    # The recorded file gone while the record says it existed: refused, not a fresh cluster.
    (data / "determined.db").rename(tmp_path / "moved.db")
    for suffix in ("-wal", "-shm"):
        (data / ("determined.db" + suffix)).unlink(missing_ok=True)
    gone = subprocess.run(master_cmd(data, free_port()), capture_output=True, text=True,
                          timeout=30)
    assert gone.returncode != 0
    assert "that file is missing" in gone.stdout + gone.stderr, gone.stdout + gone.stderr
    assert not (data / "determined.db").exists()
