"""determined.experimental.core_v2 pieces that need no master process: the login order, the
heartbeat's final state, the log shipper, config merging and the external-id rules. (The whole
detached flow against a real master is in tests/e2e/test_core_v2.py.)"""

import http.server
import json
import os
import sys
import threading
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from determined.common import api
from determined.experimental import core_v2
from determined.experimental.core_v2 import _client, _core_v2, _heartbeat, _log_shipper, _unmanaged


class _LoginMaster:
    """Answers login (token "tok-<user>-<password hash prefix>") and /api/v1/me (valid tokens)."""

    def __init__(self) -> None:
        self.valid = set()
        self.logins: List[Dict[str, Any]] = []
        master = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                master.logins.append(body)
                token = f"tok-{body['username']}"
                master.valid.add(token)
                self._send(200, {"token": token, "user": {"username": body["username"]}})

            def do_GET(self) -> None:
                token = (self.headers.get("Authorization") or "").replace("Bearer ", "")
                if token in master.valid:
                    self._send(200, {"username": "x"})
                else:
                    self._send(401, {"error": {"code": 16, "reason": "Unauthenticated", "error": "invalid credentials"}})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def login_master(tmp_path, monkeypatch) -> Iterator[_LoginMaster]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    m = _LoginMaster()
    try:
        yield m
    finally:
        m.stop()


def _write_cache(tmp_path, master: str, user: str, token: str) -> None:
    path = tmp_path / "config" / "determined" / "auth.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "masters": {master: {"active_user": user, "tokens": {user: token}}}}))


def test_login_with_det_user_and_det_pass_caches_the_token(login_master, tmp_path, monkeypatch):
    monkeypatch.setenv("DET_MASTER", login_master.url)
    monkeypatch.setenv("DET_USER", "alice")
    monkeypatch.setenv("DET_PASS", "secret")
    client = _client.make_client()
    assert client._token == "tok-alice" and client._username == "alice"
    assert login_master.logins == [
        {"username": "alice", "password": api.salt_and_hash("secret"), "isHashed": True}
    ]
    cache = json.loads((tmp_path / "config" / "determined" / "auth.json").read_text())
    assert cache["masters"][login_master.url]["tokens"]["alice"] == "tok-alice"
    # The next client reuses the cached token: no second login.
    again = _client.make_client()
    assert again._token == "tok-alice" and len(login_master.logins) == 1


def test_a_cached_token_of_the_active_user_is_used_and_an_expired_one_replaced(login_master, tmp_path, monkeypatch):
    monkeypatch.setenv("DET_MASTER", login_master.url)
    login_master.valid.add("cached-bob")
    _write_cache(tmp_path, login_master.url, "bob", "cached-bob")
    client = _client.make_client()
    assert (client._token, client._username) == ("cached-bob", "bob")
    assert login_master.logins == []

    login_master.valid.discard("cached-bob")  # the master forgot it
    client = _client.make_client()
    assert client._token == "tok-determined"  # a fresh login as the default user, blank password
    assert login_master.logins == [{"username": "determined", "password": "", "isHashed": True}]


def test_det_user_token_wins(login_master, monkeypatch):
    monkeypatch.setenv("DET_MASTER", login_master.url)
    monkeypatch.setenv("DET_USER_TOKEN", "env-token")
    client = _client.make_client()
    assert client._token == "env-token" and login_master.logins == []
    assert client._session._user_token == "env-token"


class _RecordingSession:
    """Stands in for api.Session: records (method, path, body)."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: List[Tuple[str, str, Any]] = []
        self.lock = threading.Lock()
        self.fail = fail

    def _record(self, method: str, path: str, json_body: Any = None, **_: Any) -> Any:
        with self.lock:
            self.calls.append((method, path, json_body))
        if self.fail:
            raise api.errors.MasterUnavailableError("down")
        return {}

    def patch(self, path: str, **kw: Any) -> Any:
        return self._record("PATCH", path, **kw)

    def post(self, path: str, **kw: Any) -> Any:
        return self._record("POST", path, **kw)

    def states(self) -> List[Optional[str]]:
        return [body.get("state") for m, _, body in self.calls if m == "PATCH"]


@pytest.fixture
def restore_sys():
    exit_, hook = sys.exit, sys.excepthook
    yield
    sys.exit, sys.excepthook = exit_, hook


def test_heartbeat_reports_running_then_completed(restore_sys):
    s = _RecordingSession()
    original_exit, original_hook = sys.exit, sys.excepthook
    hb = _heartbeat._UnmanagedTrialHeartbeat(session=s, trial_id=7).start()
    assert sys.exit is not original_exit and sys.excepthook is not original_hook
    hb.close()
    assert sys.exit is original_exit and sys.excepthook is original_hook
    assert s.states()[0] == "STATE_RUNNING" and s.states()[-1] == "STATE_COMPLETED"
    assert all(path == "/api/v1/trials/7" for _, path, _ in s.calls)
    hb.close()  # closing twice reports once
    assert s.states().count("STATE_COMPLETED") == 1


def test_heartbeat_reports_error_for_an_uncaught_exception_or_a_failing_exit(restore_sys):
    s = _RecordingSession()
    hb = _heartbeat._UnmanagedTrialHeartbeat(session=s, trial_id=1).start()
    try:
        raise ValueError("boom")
    except ValueError as e:
        sys.excepthook(type(e), e, e.__traceback__)  # what the interpreter does at exit
    hb.close()
    assert s.states()[-1] == "STATE_ERROR"

    s = _RecordingSession()
    hb = _heartbeat._UnmanagedTrialHeartbeat(session=s, trial_id=1).start()
    with pytest.raises(SystemExit):
        sys.exit(3)
    hb.close()
    assert s.states()[-1] == "STATE_ERROR"

    s = _RecordingSession()
    hb = _heartbeat._UnmanagedTrialHeartbeat(session=s, trial_id=1).start()
    with pytest.raises(SystemExit):
        sys.exit(0)
    hb.close()
    assert s.states()[-1] == "STATE_COMPLETED"


def test_heartbeat_close_with_an_exception_is_error(restore_sys):
    s = _RecordingSession()
    hb = _heartbeat._UnmanagedTrialHeartbeat(session=s, trial_id=1).start()
    hb.close(RuntimeError, RuntimeError("x"), None)
    assert s.states()[-1] == "STATE_ERROR"


def test_log_shipper_sends_complete_lines_with_the_task(monkeypatch):
    monkeypatch.setattr(_log_shipper, "FLUSH_SECONDS", 0.05)
    s = _RecordingSession()
    out, err = sys.stdout, sys.stderr
    shipper = _log_shipper._UnmanagedTrialLogShipper(session=s, trial_id=3, task_id="9.abc", rank=1)
    shipper.start()
    try:
        print("first line")
        sys.stdout.write("partial")
        print("an error", file=sys.stderr)
    finally:
        shipper.close()
    assert sys.stdout is out and sys.stderr is err
    logs = [entry for _, path, body in s.calls if path == "/api/v1/task/logs" for entry in body["logs"]]
    assert [(e["log"], e["stdtype"]) for e in logs if e["stdtype"] == "stdout"] == [
        ("first line\n", "stdout"), ("partial\n", "stdout")]
    assert [e["log"] for e in logs if e["stdtype"] == "stderr"] == ["an error\n"]
    assert all(e["taskId"] == "9.abc" and e["rankId"] == 1 and e["timestamp"].endswith("Z") for e in logs)


def test_log_shipper_never_blocks_the_script_when_the_master_is_down(monkeypatch):
    monkeypatch.setattr(_log_shipper, "FLUSH_SECONDS", 0.01)
    monkeypatch.setattr(_log_shipper, "QUEUE_LINES", 5)
    s = _RecordingSession(fail=True)
    shipper = _log_shipper._UnmanagedTrialLogShipper(session=s, trial_id=3, task_id="t")
    shipper.start()
    try:
        for i in range(200):
            print(f"line {i}")
    finally:
        shipper.close()
    assert s.calls  # it tried


def test_config_is_needed_off_cluster_and_merges_deprecated_forms():
    with pytest.raises(ValueError, match="specify `defaults` or `config`"):
        _core_v2._merge_config(None, None, None)
    with pytest.warns(FutureWarning):
        defaults = core_v2.DefaultConfig(name="n", project="p")
    with pytest.warns(FutureWarning):
        unmanaged = core_v2.UnmanagedConfig(external_experiment_id="e", workspace="w")
    with pytest.warns(FutureWarning):
        merged = _core_v2._merge_config(None, defaults, unmanaged)
    assert (merged.name, merged.project, merged.workspace, merged.external_experiment_id) == ("n", "p", "w", "e")
    cfg = core_v2.Config(name="x")
    assert _core_v2._merge_config(cfg, None, None) is cfg


def test_experiment_config_of_a_detached_run(tmp_path):
    cfg = _core_v2._experiment_config(core_v2.Config(labels=["a"]), str(tmp_path))
    assert cfg["name"].startswith("unmanaged-")
    assert cfg["searcher"] == {"name": "single", "metric": "unmanaged"}
    assert cfg["checkpoint_storage"] == {"type": "shared_fs", "host_path": str(tmp_path)}
    assert cfg["labels"] == ["a"]
    s3 = _core_v2._experiment_config(core_v2.Config(name="n"), "s3://bucket/pre")
    assert s3["checkpoint_storage"] == {"type": "s3", "bucket": "bucket", "prefix": "pre"}


def test_external_ids_must_be_strings_and_a_trial_id_needs_an_experiment_id():
    client = _client._Client(session=None, master="http://m:8080", token="t", username="u")
    for exp_id, trial_id in ((1, None), ("e", 2), (None, "t")):
        with pytest.raises(NotImplementedError):
            _unmanaged._get_or_create_experiment_and_trial(client, "{}", exp_id, trial_id)


def test_the_singletons_are_unset_until_init():
    assert core_v2.train is None and core_v2.checkpoint is None and core_v2.info is None
    core_v2.close()  # closing without init is harmless
    assert core_v2.searcher is None
