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
