"""The client SDK (determined.experimental): its public names held against Determined 0.38's,
and its behaviour against an in-process fake master (login and the token cache, experiment
creation, metrics followed while a trial runs, filtering, downloads).

The upstream names are written here (taken once from Determined 0.38), not read from a copy
of Determined, so the test runs anywhere. The end-to-end test against a real cluster is
tests/e2e/test_sdk_client.py.
"""

import base64
import importlib
import importlib.util
import io
import json
import pathlib
import tarfile
import threading
import urllib.parse
import warnings
from typing import Any, Callable, Dict, List, Tuple

import pytest
import yaml

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UPSTREAM_NAMES = {
    "determined.experimental": [
        "Checkpoint", "Determined", "Experiment", "ExperimentReference", "OrderBy", "Project",
        "Trial", "TrialOrderBy", "TrialReference", "TrialSortBy", "checkpoint", "client",
        "metrics", "test_one_batch",
    ],
    "determined.experimental.client": [
        "Checkpoint", "CheckpointOrderBy", "CheckpointSortBy", "CheckpointState", "Determined",
        "DownloadMode", "Experiment", "ExperimentOrderBy", "ExperimentSortBy",
        "ExperimentState", "Oauth2ScimClient", "OrderBy", "Project", "ResourcePool",
        "TrainingMetrics", "Trial", "TrialMetrics", "TrialOrderBy", "TrialSortBy", "TrialState",
        "User", "ValidationMetrics", "Workspace", "add_oauth_client", "create_experiment",
        "create_model", "create_user", "create_workspace", "delete_workspace",
        "get_checkpoint", "get_experiment", "get_model", "get_model_by_id", "get_model_labels",
        "get_models", "get_session_username", "get_trial", "get_user_by_id",
        "get_user_by_name", "get_workspace", "iter_trials_metrics", "list_experiments",
        "list_models", "list_oauth_clients", "list_users", "list_workspaces", "login",
        "logout", "remove_oauth_client", "stream_trials_metrics",
        "stream_trials_training_metrics", "stream_trials_validation_metrics", "whoami",
    ],
}

# Names of the model registry (determined.common.experimental.model).
MODEL_NAMES = {
    "determined.experimental": ["Model", "ModelOrderBy", "ModelSortBy", "ModelVersion", "model"],
    "determined.experimental.client": ["Model", "ModelOrderBy", "ModelSortBy", "ModelVersion"],
}

# Names this project adds (the task's list; Determined has them one level down).
OUR_EXTRA_NAMES = {
    "determined.experimental": [
        "CheckpointOrderBy", "CheckpointSortBy", "CheckpointState", "DownloadMode",
        "ExperimentState", "ResourcePool", "TrainingMetrics", "TrialMetrics", "TrialState",
        "User", "ValidationMetrics", "Workspace",
    ],
    "determined.experimental.client": ["get_resource_pool", "list_resource_pools"],
}

LEFT_OUT: set = set()

UPSTREAM_MEMBERS = {
    "Determined": [
        "add_oauth_client", "create_experiment", "create_model", "create_user",
        "create_workspace", "delete_workspace", "get_checkpoint", "get_experiment", "get_model",
        "get_model_by_id", "get_model_labels", "get_models", "get_session_username",
        "get_trial", "get_user_by_id", "get_user_by_name", "get_workspace",
        "iter_trials_metrics", "list_experiments", "list_models", "list_oauth_clients",
        "list_users", "list_workspaces", "logout", "remove_oauth_client",
        "stream_trials_metrics", "stream_trials_training_metrics",
        "stream_trials_validation_metrics", "whoami",
    ],
    "Experiment": [
        "activate", "add_label", "archive", "await_first_trial", "cancel", "delete",
        "delete_tensorboard_files", "download_code", "get_pachyderm_config", "get_trials", "id",
        "iter_trials", "kill", "list_checkpoints", "list_trials", "move_to_project", "pause",
        "reload", "remove_label", "set_description", "set_labels", "set_name", "set_notes",
        "top_checkpoint", "top_n_checkpoints", "unarchive", "wait",
    ],
    "Trial": [
        "get_checkpoints", "get_experiment", "iter_logs", "iter_metrics", "kill",
        "list_checkpoints", "logs", "reload", "select_checkpoint", "stream_metrics",
        "stream_training_metrics", "stream_validation_metrics", "top_checkpoint",
    ],
    "Checkpoint": [
        "add_metadata", "delete", "download", "get_metrics", "get_pachyderm_commit", "reload",
        "remove_files", "remove_metadata", "write_metadata_file",
    ],
    "TrialMetrics": ["batch_metrics", "total_batches"],
    "User": [
        "activate", "change_display_name", "change_password", "deactivate", "link_with_agent",
        "reload", "rename",
    ],
    "Workspace": [
        "create_project", "delete_project", "get_project", "list_pools", "list_projects",
        "reload",
    ],
    "Project": [
        "add_note", "archive", "list_experiments", "reload", "remove_note", "set_description",
        "set_key", "set_name", "unarchive",
    ],
    "ResourcePool": ["add_bindings", "list_workspaces", "remove_bindings", "replace_bindings"],
}

UPSTREAM_ENUMS = {
    "ExperimentState": [
        "ACTIVE", "PAUSED", "STOPPING_COMPLETED", "STOPPING_CANCELED", "STOPPING_ERROR",
        "COMPLETED", "CANCELED", "ERROR", "DELETED", "DELETING", "DELETE_FAILED",
        "STOPPING_KILLED", "QUEUED", "PULLING", "STARTING", "RUNNING",
    ],
    "TrialState": [
        "ACTIVE", "PAUSED", "STOPPING_CANCELED", "STOPPING_KILLED", "STOPPING_COMPLETED",
        "STOPPING_ERROR", "CANCELED", "COMPLETED", "ERROR", "QUEUED", "PULLING", "STARTING",
        "RUNNING",
    ],
    "CheckpointState": ["ACTIVE", "COMPLETED", "ERROR", "DELETED", "PARTIALLY_DELETED"],
    "DownloadMode": ["DIRECT", "MASTER", "AUTO"],
    "TrialSortBy": [
        "ID", "START_TIME", "END_TIME", "STATE", "BEST_VALIDATION_METRIC",
        "LATEST_VALIDATION_METRIC", "BATCHES_PROCESSED", "DURATION", "RESTARTS",
        "CHECKPOINT_SIZE", "LOG_RETENTION_DAYS",
    ],
    "CheckpointSortBy": ["UUID", "TRIAL_ID", "BATCH_NUMBER", "END_TIME", "STATE",
                         "SEARCHER_METRIC"],
    "OrderBy": ["ASCENDING", "DESCENDING"],
    "ExperimentSortBy": [
        "ID", "DESCRIPTION", "START_TIME", "END_TIME", "STATE", "NUM_TRIALS", "PROGRESS",
        "USER", "NAME", "FORKED_FROM", "RESOURCE_POOL", "PROJECT_ID", "CHECKPOINT_SIZE",
        "CHECKPOINT_COUNT", "SEARCHER_METRIC_VAL",
    ],
}

HAVE_MODEL = importlib.util.find_spec("determined.common.experimental.model") is not None


@pytest.mark.parametrize("module", sorted(UPSTREAM_NAMES))
def test_upstream_names_exist(module):
    mod = importlib.import_module(module)
    missing = [n for n in UPSTREAM_NAMES[module] + OUR_EXTRA_NAMES.get(module, [])
               if (module, n) not in LEFT_OUT and not hasattr(mod, n)]
    assert missing == []


@pytest.mark.skipif(not HAVE_MODEL, reason="determined.common.experimental.model is not here")
@pytest.mark.parametrize("module", sorted(MODEL_NAMES))
def test_model_names_exist(module):
    mod = importlib.import_module(module)
    assert [n for n in MODEL_NAMES[module] if not hasattr(mod, n)] == []


def test_left_out_names_are_explained():
    doc = (pathlib.Path(__file__).parents[2] / "docs" / "compatibility.md").read_text()
    section = doc.split("## Python client SDK (determined.experimental)", 1)
    assert len(section) == 2, "docs/compatibility.md lacks the client SDK section"
    for _, name in LEFT_OUT:
        assert f"`{name}`" in section[1], name


@pytest.mark.parametrize("cls", sorted(UPSTREAM_MEMBERS))
def test_upstream_members_exist(cls):
    from determined.experimental import client

    obj = getattr(client, cls)
    assert [m for m in UPSTREAM_MEMBERS[cls] if not hasattr(obj, m)] == []


@pytest.mark.parametrize("name", sorted(UPSTREAM_ENUMS))
def test_enum_members(name):
    from determined.experimental import client

    assert [m.name for m in getattr(client, name)] == UPSTREAM_ENUMS[name]


def test_deprecated_aliases_warn():
    from determined.experimental import ExperimentReference, TrialOrderBy, TrialReference

    with pytest.warns(FutureWarning):
        TrialOrderBy.ASCENDING
    with pytest.warns(FutureWarning):
        ExperimentReference(1, None)
    with pytest.warns(FutureWarning):
        TrialReference(1, None)


# -- a fake master --------------------------------------------------------------------------
Handler = Callable[[Dict[str, Any], Any, Dict[str, str]], Tuple[int, Any]]


class FakeMaster:
    """Routes "METHOD /path" (query stripped) to handlers; records requests."""

    def __init__(self) -> None:
        self.routes: Dict[str, Handler] = {}
        self.requests: List[Tuple[str, str, Dict[str, List[str]], Any, Dict[str, str]]] = []
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _do(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                query = urllib.parse.parse_qs(url.query)
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.requests.append((self.command, url.path, query, body, headers))
                handler = fake.routes.get(f"{self.command} {url.path}")
                status, out = (404, {"error": {"error": "no route"}}) if handler is None \
                    else handler(query, body, headers)
                if isinstance(out, bytes):
                    data, ctype = out, "application/octet-stream"
                elif isinstance(out, str):
                    data, ctype = out.encode(), "application/x-ndjson"
                else:
                    data, ctype = json.dumps(out).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _do

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def calls(self, method: str, path: str) -> List[Any]:
        return [r for r in self.requests if r[0] == method and r[1] == path]


@pytest.fixture
def fake(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for var in ("DET_USER", "DET_USER_TOKEN", "DET_PASS", "DET_MASTER"):
        monkeypatch.delenv(var, raising=False)
    m = FakeMaster()
    tokens = {"t1": "determined"}
    issued = []

    def login(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        if body["password"] != "" and body["password"] != _hashed("Secret123"):
            return 401, {"error": {"error": "invalid credentials"}}
        tok = f"t{len(tokens) + 1}"
        tokens[tok] = body["username"]
        issued.append(tok)
        return 200, {"token": tok, "user": {"id": 2, "username": body["username"]}}

    def me(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        tok = h.get("authorization", "").replace("Bearer ", "")
        if tok not in tokens:
            return 401, {"error": {"error": "unauthenticated"}}
        return 200, {"user": {"id": 2, "username": tokens[tok], "admin": False, "active": True}}

    def logout(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        tokens.pop(h.get("authorization", "").replace("Bearer ", ""), None)
        return 200, {}

    m.routes.update({"POST /api/v1/auth/login": login, "GET /api/v1/me": me,
                     "POST /api/v1/auth/logout": logout})
    m.tokens, m.issued = tokens, issued
    yield m
    m.close()


def _hashed(pw: str) -> str:
    from determined.common import api

    return api.salt_and_hash(pw)


def _cache(tmp_path: pathlib.Path) -> Dict[str, Any]:
    return json.loads((tmp_path / "config" / "determined" / "auth.json").read_text())


def test_login_caches_and_reuses_tokens(fake, tmp_path, monkeypatch):
    from determined.experimental import Determined

    d = Determined(master=fake.url, user="alice", password="Secret123")
    [req] = fake.calls("POST", "/api/v1/auth/login")
    assert req[3] == {"username": "alice", "password": _hashed("Secret123"), "isHashed": True}
    entry = _cache(tmp_path)["masters"][fake.url]
    assert entry["active_user"] == "alice" and entry["tokens"]["alice"] == fake.issued[0]
    assert d.get_session_username() == "alice"

    # No password: the cached token of the active user, checked with /me; no new login.
    again = Determined(master=fake.url)
    assert again._session._user_token == fake.issued[0]
    assert len(fake.calls("POST", "/api/v1/auth/login")) == 1

    # A token the master no longer accepts is dropped, and a blank-password login follows.
    fake.tokens.pop(fake.issued[0])
    third = Determined(master=fake.url)
    assert third._session._user_token == fake.issued[1]
    assert fake.calls("POST", "/api/v1/auth/login")[-1][3]["username"] == "alice"

    # $DET_USER_TOKEN is used as is.
    monkeypatch.setenv("DET_USER_TOKEN", "t1")
    monkeypatch.setenv("DET_USER", "determined")
    env = Determined(master=fake.url)
    assert env._session._user_token == "t1" and env.whoami().username == "determined"

    third.logout()
    assert "alice" not in _cache(tmp_path)["masters"][fake.url]["tokens"]
    assert fake.issued[1] not in fake.tokens

    from determined.common.api import errors
    monkeypatch.delenv("DET_USER_TOKEN")
    with pytest.raises(errors.UnauthenticatedException):
        Determined(master=fake.url, user="bob", password="nope")


def test_client_module_login_once(fake, monkeypatch):
    from determined.experimental import client

    monkeypatch.setattr(client, "_determined", None)
    client.login(master=fake.url, user="determined", password="")
    with pytest.raises(ValueError, match="only call login"):
        client.login(master=fake.url)
    assert client.whoami().username == "determined"
    client.logout()
    assert client._determined is None


def test_create_experiment_sends_config_and_files(fake, tmp_path):
    from determined.experimental import Determined

    created = {}

    def create(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        created.update(body)
        return 200, {"experiment": {"id": 7, "state": "STATE_ACTIVE", "config": {},
                                    "labels": ["x"]}}

    fake.routes["POST /api/v1/experiments"] = create
    model = tmp_path / "model"
    (model / "pkg" / "__pycache__").mkdir(parents=True)
    (model / "train.py").write_text("print('hi')\n")
    (model / "pkg" / "mod.py").write_text("x = 1\n")
    (model / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (model / "big.bin").write_bytes(b"\1" * 10)
    (model / "keep.bin").write_bytes(b"\2")
    (model / ".detignore").write_text("*.bin\n!keep.bin\n")
    extra = tmp_path / "extra.txt"
    extra.write_text("included")
    d = Determined(master=fake.url, user="determined", password="")
    exp = d.create_experiment({"name": "n", "searcher": {"name": "single"}}, str(model),
                              includes=[str(extra)], project_id=3, template="t", parent_id=2)
    assert exp.id == 7 and exp.state.name == "ACTIVE" and exp.labels == {"x"}
    assert yaml.safe_load(created["config"]) == {"name": "n", "searcher": {"name": "single"}}
    assert created["activate"] is True
    assert (created["projectId"], created["template"], created["parentId"]) == (3, "t", 2)
    files = {f["path"]: f for f in created["modelDefinition"]}
    assert sorted(files) == [".detignore", "extra.txt", "keep.bin", "pkg", "pkg/mod.py",
                             "train.py"]
    assert files["pkg"]["type"] == 53 and files["train.py"]["type"] == 48
    assert base64.b64decode(files["extra.txt"]["content"]) == b"included"
    paths = [f["path"] for f in created["modelDefinition"]]
    assert paths.index("pkg") < paths.index("pkg/mod.py")

    config_file = tmp_path / "c.yaml"
    config_file.write_text("name: from-file\n")
    d.create_experiment(str(config_file))
    assert created["config"] == "name: from-file\n" and created["modelDefinition"] == []
    config_file.write_text("name: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        d.create_experiment(str(config_file))


def _report(rid: int, step: int, group: str) -> Dict[str, Any]:
    key = "validation_metrics" if group == "validation" else "avg_metrics"
    return {"id": rid, "trialId": 5, "trialRunId": 1, "totalBatches": step, "group": group,
            "endTime": "2024-01-02T03:04:05.123456789Z", "archived": False,
            "metrics": {key: {"loss": 1.0 / step}}}


def test_iter_metrics_follows_until_the_trial_ends(fake, monkeypatch):
    from determined.common.experimental import trial as trial_mod
    from determined.experimental import Determined

    monkeypatch.setattr(trial_mod, "METRICS_POLL_SECONDS", 0.01)
    # Each read of the stream holds one more report; the trial ends after the fourth read.
    reads = {"n": 0}

    def stream(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        assert q["trialIds"] == ["5"] and q["group"] == ["training"]
        reads["n"] += 1
        reports = [_report(i, i, "training") for i in range(1, reads["n"] + 1)]
        return 200, json.dumps({"result": {"metrics": reports}}) + "\n"

    def get_trial(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        state = "STATE_COMPLETED" if reads["n"] >= 4 else "STATE_RUNNING"
        return 200, {"trial": {"id": 5, "experimentId": 1, "state": state, "hparams": {}}}

    fake.routes["GET /api/v1/trials/metrics/trial_metrics"] = stream
    fake.routes["GET /api/v1/trials/5"] = get_trial
    d = Determined(master=fake.url, user="determined", password="")
    t = d.get_trial(5)
    got = list(t.iter_metrics("training"))
    # Reads 1-4 while running, then one more after the state read said COMPLETED.
    assert [m.steps_completed for m in got] == [1, 2, 3, 4, 5]
    assert got[0].metrics == {"loss": 1.0} and got[0].group == "training"
    assert got[0].end_time.year == 2024 and got[0].total_batches == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        legacy = list(d.stream_trials_training_metrics([5]))
    assert type(legacy[0]).__name__ == "TrainingMetrics" and legacy[0].group == "training"


def test_list_experiments_filters_and_sorts_here_too(fake):
    from determined.experimental import Determined, ExperimentState, OrderBy
    from determined.common.experimental.experiment import ExperimentSortBy

    exps = [
        {"id": 1, "name": "alpha", "state": "STATE_COMPLETED", "labels": ["a"],
         "username": "u1", "projectId": 1},
        {"id": 2, "name": "beta", "state": "STATE_ACTIVE", "labels": ["b"], "username": "u2",
         "projectId": 1},
        {"id": 3, "name": "alphabet", "state": "STATE_COMPLETED", "labels": ["a", "b"],
         "username": "u1", "projectId": 1},
    ]
    fake.routes["GET /api/v1/experiments"] = lambda q, b, h: (200, {
        "experiments": exps, "pagination": {"offset": 0, "limit": 0, "startIndex": 0,
                                            "endIndex": 3, "total": 3}})
    d = Determined(master=fake.url, user="determined", password="")
    ids = lambda **kw: [e.id for e in d.list_experiments(**kw)]  # noqa: E731
    assert ids() == [1, 2, 3]
    assert ids(labels=["b"]) == [2, 3]
    assert ids(states=[ExperimentState.COMPLETED], users=["u1"]) == [1, 3]
    assert ids(name="alpha") == [1, 3]
    assert ids(experiment_ids=[2, 3]) == [2, 3]
    assert ids(sort_by=ExperimentSortBy.NAME, order_by=OrderBy.DESC) == [2, 3, 1]
    _, _, query, _, _ = fake.calls("GET", "/api/v1/experiments")[-1]
    assert query["sortBy"] == ["SORT_BY_NAME"] and query["orderBy"] == ["ORDER_BY_DESC"]


def test_wait_and_trials(fake):
    from determined.experimental import Determined, ExperimentState, OrderBy, TrialSortBy

    states = iter(["STATE_ACTIVE", "STATE_PAUSED"])
    fake.routes["GET /api/v1/experiments/4"] = lambda q, b, h: (200, {"experiment": {
        "id": 4, "state": next(states, "STATE_COMPLETED")}})
    trials = [{"id": 10, "state": "STATE_COMPLETED", "restarts": 2,
               "bestValidation": {"searcherMetric": 0.5}},
              {"id": 11, "state": "STATE_ERROR", "restarts": 0,
               "bestValidation": {"searcherMetric": 0.1}},
              {"id": 12, "state": "STATE_COMPLETED", "restarts": 1, "bestValidation": None}]
    fake.routes["GET /api/v1/experiments/4/trials"] = lambda q, b, h: (200, {
        "trials": trials, "pagination": {"endIndex": 3, "total": 3}})
    d = Determined(master=fake.url, user="determined", password="")
    exp = d.get_experiment(4)
    with pytest.raises(ValueError, match="paused"):
        exp.wait(interval=0.01)
    assert exp.wait(interval=0.01) == ExperimentState.COMPLETED
    ids = lambda *a, **kw: [t.id for t in exp.list_trials(*a, **kw)]  # noqa: E731
    assert ids() == [10, 11, 12]
    assert ids(TrialSortBy.RESTARTS, OrderBy.DESC) == [10, 12, 11]
    # Trials without the value sort last either way.
    assert ids(TrialSortBy.BEST_VALIDATION_METRIC, OrderBy.ASC) == [11, 10, 12]
    assert ids(TrialSortBy.BEST_VALIDATION_METRIC, OrderBy.DESC) == [10, 11, 12]
    from determined.experimental import TrialState

    assert ids(states=[TrialState.COMPLETED]) == [10, 12]


CKPT = {
    "uuid": "abc", "taskId": "t", "allocationId": "a", "reportTime": "2024-01-01T00:00:00Z",
    "resources": {"w.bin": 3}, "metadata": {"steps_completed": 3}, "state": "STATE_COMPLETED",
    "training": {"trialId": 5, "experimentId": 1, "hparams": {"lr": 1},
                 "experimentConfig": {"checkpoint_storage": {"type": "shared_fs"}},
                 "validationMetrics": {"avgMetrics": {"loss": 0.5}}},
}


def test_checkpoint_from_json_and_master_download(fake, tmp_path):
    from determined import errors
    from determined.experimental import CheckpointState, Determined, DownloadMode
    from determined.common.experimental.checkpoint import Checkpoint

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = b"weights"
        info = tarfile.TarInfo("sub/w.bin")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    fake.routes["GET /api/v1/checkpoints/abc"] = lambda q, b, h: (200, {"checkpoint": CKPT})
    fake.routes["GET /checkpoints/abc"] = lambda q, b, h: (200, buf.getvalue())
    d = Determined(master=fake.url, user="determined", password="")
    ckpt = d.get_checkpoint("abc")
    assert ckpt.state == CheckpointState.COMPLETED and ckpt.training.trial_id == 5
    assert ckpt.training.validation_metrics == {"avgMetrics": {"loss": 0.5}}
    same = Checkpoint._from_json(d._session, CKPT)
    assert (same.uuid, same.metadata, same.resources) == ("abc", {"steps_completed": 3},
                                                          {"w.bin": 3})
    out = pathlib.Path(ckpt.download(str(tmp_path / "dl"), mode=DownloadMode.MASTER))
    assert (out / "sub" / "w.bin").read_bytes() == b"weights"
    assert json.loads((out / "metadata.json").read_text()) == {"steps_completed": 3}
    req = fake.calls("GET", "/checkpoints/abc")[-1]
    assert req[4]["authorization"].startswith("Bearer ") and "gzip" in req[4]["accept"]
    # A directory that already holds metadata.json is left alone.
    assert ckpt.download(str(tmp_path / "dl"), mode="master") == str(out)
    assert len(fake.calls("GET", "/checkpoints/abc")) == 1

    ckpt.state = CheckpointState.DELETED
    with pytest.raises(errors.CheckpointStateException):
        ckpt.download(str(tmp_path / "other"))


def test_checkpoint_direct_and_auto_download(fake, tmp_path):
    from determined.experimental import Determined, DownloadMode
    from determined.common.experimental.checkpoint import Checkpoint

    storage = tmp_path / "storage"
    (storage / "abc" / "nested").mkdir(parents=True)
    (storage / "abc" / "nested" / "f.txt").write_text("direct")
    cfg = json.loads(json.dumps(CKPT))
    cfg["training"]["experimentConfig"]["checkpoint_storage"] = {
        "type": "shared_fs", "host_path": str(storage)}
    d = Determined(master=fake.url, user="determined", password="")
    ckpt = Checkpoint._from_json(d._session, cfg)
    out = pathlib.Path(ckpt.download(str(tmp_path / "direct"), mode=DownloadMode.DIRECT))
    assert (out / "nested" / "f.txt").read_text() == "direct"

    # AUTO falls back to the master when the storage is not reachable from here.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("m.txt")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"m"))
    fake.routes["GET /checkpoints/abc"] = lambda q, b, h: (200, buf.getvalue())
    cfg["training"]["experimentConfig"]["checkpoint_storage"]["host_path"] = str(tmp_path / "x")
    ckpt = Checkpoint._from_json(d._session, cfg)
    out = pathlib.Path(ckpt.download(str(tmp_path / "auto")))
    assert (out / "m.txt").read_text() == "m"


def test_logs_head_tail_and_filters(fake):
    from determined.experimental import Determined

    logs = [{"id": str(i), "message": f"line {i}\n", "stdtype": "stdout" if i % 2 else "stderr",
             "rankId": i % 2, "level": "LOG_LEVEL_INFO",
             "timestamp": f"2024-01-01T00:00:0{i}Z"} for i in range(1, 7)]

    def get_logs(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        rows = logs[::-1] if q.get("orderBy") == ["ORDER_BY_DESC"] else logs
        if "limit" in q:
            rows = rows[:int(q["limit"][0])]
        return 200, "".join(json.dumps({"result": r}) + "\n" for r in rows)

    fake.routes["GET /api/v1/trials/5/logs"] = get_logs
    d = Determined(master=fake.url, user="determined", password="")
    from determined.common.experimental.trial import Trial

    t = Trial(5, d._session)
    assert list(t.iter_logs()) == [f"line {i}\n" for i in range(1, 7)]
    assert list(t.iter_logs(head=2)) == ["line 1\n", "line 2\n"]
    assert list(t.iter_logs(tail=2)) == ["line 5\n", "line 6\n"]
    assert list(t.iter_logs(stdtypes=["stderr"])) == ["line 2\n", "line 4\n", "line 6\n"]
    assert list(t.iter_logs(rank_ids=[1], search_text="5")) == ["line 5\n"]
    assert list(t.iter_logs(timestamp_after="2024-01-01T00:00:04Z")) == ["line 5\n", "line 6\n"]
    with pytest.raises(ValueError):
        list(t.iter_logs(head=-1))
    with pytest.raises(ValueError):
        list(t.iter_logs(timestamp_before="yesterday"))


def test_raw_routes_retry_while_the_master_is_unavailable(fake):
    from determined.common.experimental import _util
    from determined.common.api import errors
    from determined.experimental import Determined

    answers = iter([(503, {"error": {"error": "starting"}}), (502, {})])
    fake.routes["GET /api/v1/trials/5/logs"] = lambda q, b, h: next(
        answers, (200, json.dumps({"result": {"message": "ok\n"}}) + "\n"))
    d = Determined(master=fake.url, user="determined", password="")
    assert list(_util.ndjson(d._session, "/api/v1/trials/5/logs")) == [{"message": "ok\n"}]
    assert len(fake.calls("GET", "/api/v1/trials/5/logs")) == 3
    fake.routes["GET /api/v1/trials/6/logs"] = lambda q, b, h: (503, {})
    d._session.retry_seconds = 0.3
    with pytest.raises(errors.MasterUnavailableError):
        list(_util.ndjson(d._session, "/api/v1/trials/6/logs"))
    fake.routes["GET /api/v1/trials/7/logs"] = lambda q, b, h: (404, {"error": {"error": "no"}})
    with pytest.raises(errors.NotFoundException, match="no"):
        list(_util.ndjson(d._session, "/api/v1/trials/7/logs"))


@pytest.mark.parametrize("rules,path,is_dir,ignored", [
    (["*.bin"], "a/b/c.bin", False, True),
    (["/top.txt"], "top.txt", False, True),
    (["/top.txt"], "sub/top.txt", False, False),
    (["data/"], "data", True, True),
    (["data/"], "data", False, False),
    (["docs/**/*.md"], "docs/a/b/x.md", False, True),
    (["docs/**/*.md"], "docs/x.md", False, True),
    (["*.log", "!keep.log"], "keep.log", False, False),
    (["*.py[co]"], "m.pyc", False, True),
    (["# comment", ""], "# comment", False, False),
])
def test_detignore_rules(rules, path, is_dir, ignored):
    from determined.common.experimental import _context

    assert _context.Ignore(rules).ignored(path, is_dir) is ignored


def test_context_size_limit(tmp_path):
    from determined.common.experimental import _context

    (tmp_path / "big").write_bytes(b"\0" * 100)
    with pytest.raises(ValueError, match="maximum allowed size"):
        _context.pack(tmp_path, max_bytes=100)
    assert [f["path"] for f in _context.pack(tmp_path, max_bytes=101)] == ["big"]


def test_iter_trials_metrics_of_several_trials(fake, monkeypatch):
    from determined.common.experimental import trial as trial_mod
    from determined.experimental import Determined

    monkeypatch.setattr(trial_mod, "METRICS_POLL_SECONDS", 0.01)
    reads = {"n": 0}

    def stream(q: Any, body: Any, h: Any) -> Tuple[int, Any]:
        assert sorted(q["trialIds"]) == ["5", "6"]
        reads["n"] += 1
        five = [dict(_report(i, i, "validation"), trialId=5) for i in (1, 2)]
        six = [dict(_report(10 + i, i, "validation"), trialId=6) for i in range(1, reads["n"] + 1)]
        return 200, "".join(json.dumps({"result": {"metrics": chunk}}) + "\n"
                            for chunk in (five, six))

    def trial_route(tid: int, done: Callable[[], bool]) -> Handler:
        return lambda q, b, h: (200, {"trial": {
            "id": tid, "state": "STATE_COMPLETED" if done() else "STATE_RUNNING"}})

    fake.routes["GET /api/v1/trials/metrics/trial_metrics"] = stream
    fake.routes["GET /api/v1/trials/5"] = trial_route(5, lambda: True)
    fake.routes["GET /api/v1/trials/6"] = trial_route(6, lambda: reads["n"] >= 3)
    d = Determined(master=fake.url, user="determined", password="")
    got = [(m.trial_id, m.steps_completed) for m in d.iter_trials_metrics([6, 5], "validation")]
    assert got == [(5, 1), (5, 2), (6, 1), (6, 2), (6, 3), (6, 4)]
    # Trial 5 had ended at the first look, so its state was read once.
    assert len(fake.calls("GET", "/api/v1/trials/5")) == 1
    with pytest.raises(ValueError, match="trial_ids"):
        list(d.iter_trials_metrics([], "validation"))
