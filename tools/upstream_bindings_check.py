#!/usr/bin/python3
"""Developer check (not part of `make test`: it needs a clone of Determined's source).

Starts a local cluster, gives it one of everything (an experiment with metrics and checkpoints,
a registered model version, a template, a workspace with a project, a user), then calls, for
every GET route this master serves under /api/v1 (read from master/api/*.cc), the function of
Determined 0.38's generated REST client (determined.common.api.bindings.get_*) with real ids, and
reports each route whose answer the binding refuses (a missing required field, a wrong type, an
unknown enum value) or that answers an error.

    PYTHONPATH=/tmp/det-upstream/harness /usr/bin/python3 tools/upstream_bindings_check.py \
        [--build build] [--keep]

Exit status: 0 when every route checked passed, 1 otherwise.
"""

import argparse
import glob
import inspect
import itertools
import json
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import typing
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent

EXPERIMENT = """\
name: bindings-check
entrypoint: >-
  python3 -c "import determined as det, pathlib;
  ctx = det.core.init().__enter__();
  [ (ctx.train.report_training_metrics(steps_completed=op.length, metrics={'loss': 1.0 / op.length}),
     ctx.train.report_validation_metrics(steps_completed=op.length, metrics={'loss': 0.5}),
     ctx.checkpoint.store_path({'steps_completed': op.length}).__enter__(),
     op.report_completed(0.5)) for op in ctx.searcher.operations() ];
  print('done')"
searcher: {name: single, metric: loss, max_length: 2}
max_restarts: 0
"""

CHECKPOINTED = """\
name: bindings-check-ckpt
entrypoint: python3 train.py
searcher: {name: single, metric: loss, max_length: 2}
max_restarts: 0
profiling: {enabled: true}
"""

TRAIN = """\
import determined as det

with det.core.init() as ctx:
    for op in ctx.searcher.operations():
        for step in range(1, op.length + 1):
            ctx.train.report_training_metrics(steps_completed=step, metrics={"loss": 1.0 / step})
            with ctx.checkpoint.store_path({"steps_completed": step}) as (path, uuid):
                (path / "weights").write_text(str(step))
        ctx.train.report_validation_metrics(steps_completed=op.length, metrics={"loss": 0.5})
        op.report_completed(0.5)
"""


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def our_get_routes():
    """Every GET path under /api/v1 registered in master/api/*.cc."""
    routes = set()
    for f in glob.glob(str(ROOT / "master/api/*.cc")):
        text = open(f).read()
        for m in re.finditer(r'Add\(\s*"GET",\s*"(/api/v1[^"]*)"', text):
            routes.add(m.group(1))
        for m in re.finditer(r'AddPrefix\(\s*"GET",\s*"(/api/v1[^"]*)"', text):
            routes.add(m.group(1) + "*")
    # The trial metrics routes are registered in a loop over their names.
    if "/api/v1/trials/metrics/" in routes:
        routes.discard("/api/v1/trials/metrics/")
        for name in ("trial_metrics", "training_metrics", "validation_metrics"):
            routes.add("/api/v1/trials/metrics/" + name)
    return sorted(routes)


def normalize(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


def binding_index(bindings, method="GET"):
    """(normalized path) -> [(function name, path template)] for every binding of `method`."""
    index = {}
    for name, fn in inspect.getmembers(bindings, inspect.isfunction):
        if not name.startswith(method.lower() + "_"):
            continue
        try:
            src = inspect.getsource(fn)
        except OSError:
            continue
        m = re.search(r'method="' + method + r'",\s*path=f?"([^"]+)"', src)
        if m:
            index.setdefault(normalize(m.group(1)), []).append((name, m.group(1)))
    return index


def path_matches(template: str, path: str) -> bool:
    pattern = "^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(template)) + "$"
    return re.match(pattern, path.split("?")[0]) is not None


class Setup:
    """The cluster and the objects whose ids the bindings are called with."""

    def __init__(self, build: pathlib.Path, work: pathlib.Path):
        self.det = str(build / "bin" / "det")
        self.work = work
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = work / "cluster"
        self.answers = []  # (method, path, body) of every request populate() made
        self.change_errors = []

    def up(self):
        subprocess.run([self.det, "deploy", "local", "cluster-up", "--master-port", str(self.port),
                        "--agents", "1", "--slots-per-agent", "2", "--data-dir", str(self.data)],
                       check=True, stdout=subprocess.DEVNULL)

    def down(self):
        subprocess.run([self.det, "deploy", "local", "cluster-down", "--data-dir", str(self.data)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def request(self, method, path, body=None, token=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if token or getattr(self, "token", None):
            req.add_header("Authorization", "Bearer " + (token or self.token))
        with urllib.request.urlopen(req, timeout=60) as resp:
            text = resp.read().decode()
            self.answers.append((method, path, text))
            return json.loads(text) if text.strip() else {}

    def change(self, method, path, body=None):
        """A request whose refusal is a finding, not the end of the check."""
        try:
            return self.request(method, path, body)
        except urllib.error.HTTPError as e:
            self.change_errors.append(f"{method} {path}: HTTP {e.code} {e.read().decode()[:200]}")
            return None

    def wait(self, predicate, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.5)
        raise TimeoutError(f"timed out waiting for {what}")

    def populate(self):
        self.token = self.request("POST", "/api/v1/auth/login",
                                  {"username": "admin", "password": ""})["token"]
        ctx = self.work / "ctx"
        ctx.mkdir()
        (ctx / "train.py").write_text(TRAIN)
        (self.work / "exp.yaml").write_text(CHECKPOINTED)
        out = subprocess.run([self.det, "-m", self.url, "experiment", "create",
                              str(self.work / "exp.yaml"), str(ctx)],
                             check=True, capture_output=True, text=True).stdout
        self.exp = int(re.search(r"Created experiment (\d+)", out).group(1))

        def done():
            e = self.request("GET", f"/api/v1/experiments/{self.exp}")["experiment"]
            if e["state"] in ("STATE_ERROR", "STATE_CANCELED"):
                raise RuntimeError(f"experiment {self.exp} ended {e['state']}")
            return e["state"] == "STATE_COMPLETED"

        self.wait(done, 240, f"experiment {self.exp}")
        self.trial = self.request("GET", f"/api/v1/experiments/{self.exp}/trials")["trials"][0]
        # The latest checkpoint: checkpoint GC keeps it (earlier ones may be deleted).
        ckpts = self.request("GET", f"/api/v1/trials/{self.trial['id']}/checkpoints"
                             "?sortByAttr=SORT_BY_BATCH_NUMBER&orderBy=ORDER_BY_DESC")
        self.uuid = ckpts["checkpoints"][0]["uuid"]
        self.task_id = self.trial["taskId"]
        tasks = self.request("GET", "/api/v1/tasks")
        self.allocation_id = next(iter(tasks.get("allocationIdToSummary", {}) or {}), None)
        self.request("POST", "/api/v1/models", {"name": "check-model", "description": "d"})
        self.request("POST", "/api/v1/models/check-model/versions",
                     {"modelName": "check-model", "checkpointUuid": self.uuid})
        self.model_id = self.request("GET", "/api/v1/models/check-model")["model"]["id"]
        self.request("POST", "/api/v1/templates/check-tpl",
                     {"name": "check-tpl", "config": {"description": "t"}, "workspaceId": 1})
        ws = self.request("POST", "/api/v1/workspaces", {"name": "check-ws"})
        self.workspace = ws["workspace"]["id"]
        pr = self.request("POST", f"/api/v1/workspaces/{self.workspace}/projects",
                          {"name": "check-proj", "workspaceId": self.workspace})
        self.project = pr["project"]["id"]
        self.user = self.request("GET", "/api/v1/me")["user"]
        # Changes, for the shape of their answers.
        self.change("PATCH", f"/api/v1/experiments/{self.exp}", {"notes": "n"})
        self.change("PATCH", "/api/v1/models/check-model", {"description": "d2"})
        self.change("PATCH", "/api/v1/models/check-model/versions/1", {"comment": "c"})
        self.change("PATCH", f"/api/v1/workspaces/{self.workspace}", {"name": "check-ws"})
        self.change("PATCH", f"/api/v1/projects/{self.project}", {"description": "p"})
        self.change("POST", f"/api/v1/projects/{self.project}/archive")
        self.change("POST", f"/api/v1/projects/{self.project}/unarchive")
        self.change("PUT", f"/api/v1/projects/{self.project}/notes",
                    {"notes": [{"name": "n", "contents": "c"}], "projectId": self.project})
        self.change("POST", f"/api/v1/projects/{self.project}/notes",
                    {"name": "n2", "contents": "c2"})
        self.change("POST", f"/api/v1/experiments/{self.exp}/archive")
        self.change("POST", f"/api/v1/experiments/{self.exp}/unarchive")
        created = self.change("POST", "/api/v1/users",
                               {"user": {"username": "check-user", "active": True},
                                "password": "Check-Pass1"})
        if created:
            self.change("PATCH", f"/api/v1/users/{created['user']['id']}", {"displayName": "C"})
        self.change("PATCH", "/api/v1/templates/check-tpl", {"name": "check-tpl",
                                                              "config": {"description": "u"}})
        self.change("DELETE", f"/api/v1/experiments/{self.exp}/tensorboard-files")
        agents = self.request("GET", "/api/v1/agents")["agents"]
        self.agent = agents[0]["id"]
        self.slot = next(iter(agents[0]["slots"]))

    def value_for(self, param: str, segment: str):
        """The value of a path parameter named `param` that follows path segment `segment`."""
        by_name = {
            "trialId": self.trial["id"], "experimentId": self.exp, "checkpointUuid": self.uuid,
            "uuid": self.uuid, "modelName": "check-model", "modelVersionNum": 1,
            "modelVersionId": 1, "workspaceId": self.workspace, "projectId": self.project,
            "userId": self.user["id"], "username": self.user["username"],
            "templateName": "check-tpl", "agentId": self.agent, "slotId": self.slot,
            "taskId": self.task_id, "allocationId": self.allocation_id, "runId": self.trial["id"],
        }
        if param in by_name:
            return by_name[param]
        by_segment = {
            "experiments": self.exp, "trials": self.trial["id"], "runs": self.trial["id"],
            "checkpoints": self.uuid, "models": "check-model", "workspaces": self.workspace,
            "projects": self.project, "users": self.user["id"], "templates": "check-tpl",
            "agents": self.agent, "slots": self.slot, "tasks": self.task_id,
            "allocations": self.allocation_id, "versions": 1,
        }
        return by_segment.get(segment)


# Query arguments a binding requires besides its path parameters.
def required_query(name: str, setup: Setup):
    return {
        "get_GetTrialsSampled": {},
        "get_GetTrialMetricsByIds": {"trialIds": [setup.trial["id"]], "group": "training"},
        "get_GetTrainingMetrics": {"trialIds": [setup.trial["id"]]},
        "get_GetValidationMetrics": {"trialIds": [setup.trial["id"]]},
        "get_GetTrialProfilerMetrics": {
            "labels_trialId": setup.trial["id"], "labels_name": "cpu_util_simple",
            "labels_metricType": "PROFILER_METRIC_TYPE_SYSTEM", "follow": False},
        "get_GetTrialProfilerAvailableSeries": {"follow": False},
        "get_GetMetrics": {"trialIds": [setup.trial["id"]], "group": "training"},
        "get_MasterLogs": {"follow": False},
        "get_TrialLogs": {"follow": False},
        "get_GetAllocationRendezvousInfo": {},
    }.get(name, {})


class ShapeChecker:
    """Checks raw JSON against the type hints of the binding classes: required fields present,
    every field of the declared type, enum values known. The generated from_json reads only what
    it needs and converts loosely, so this finds what it lets through."""

    def __init__(self, bindings):
        self.bindings = bindings
        self.ns = vars(bindings)
        self.hints = {}

    def class_hints(self, cls):
        """{field: (type hint, required)} from the class's __init__ (required fields have no
        default; optional ones default to Unset)."""
        if cls not in self.hints:
            hints = typing.get_type_hints(cls.__init__, globalns=self.ns)
            params = inspect.signature(cls.__init__).parameters
            self.hints[cls] = {
                name: (hint, params[name].default is inspect.Parameter.empty)
                for name, hint in hints.items() if name in params and name != "return"}
        return self.hints[cls]

    def check(self, value, hint, path, problems, notes):
        if hint is typing.Any:
            return
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Union:
            if value is None and type(None) in args:
                return
            rest = [a for a in args if a is not type(None) and a is not self.bindings.Unset]
            return self.check(value, rest[0], path, problems, notes) if len(rest) == 1 else None
        if value is None:
            notes.append(f"{path}: null where {getattr(hint, '__name__', hint)} is declared")
            return
        if origin in (list, typing.Sequence) or origin is getattr(
                __import__("collections.abc").abc, "Sequence"):
            if not isinstance(value, list):
                problems.append(f"{path}: expected a list, got {type(value).__name__}")
                return
            for i, item in enumerate(value):
                self.check(item, args[0], f"{path}[{i}]", problems, notes)
            return
        if origin in (dict, typing.Dict) or origin is getattr(
                __import__("collections.abc").abc, "Mapping"):
            if not isinstance(value, dict):
                problems.append(f"{path}: expected an object, got {type(value).__name__}")
                return
            for k, v in value.items():
                self.check(v, args[1], f"{path}.{k}", problems, notes)
            return
        if isinstance(hint, type) and issubclass(hint, self.bindings.DetEnum):
            if value not in {e.value for e in hint}:
                problems.append(f"{path}: {value!r} is not a {hint.__name__} value")
            return
        if hint is bool:
            if not isinstance(value, bool):
                problems.append(f"{path}: expected a boolean, got {value!r}")
            return
        if hint is int:
            if isinstance(value, bool) or not (isinstance(value, int) or (
                    isinstance(value, str) and re.fullmatch(r"-?\d+", value))):
                problems.append(f"{path}: expected an integer, got {value!r}")
            return
        if hint is float:
            if isinstance(value, bool) or not (isinstance(value, (int, float)) or value in (
                    "NaN", "Infinity", "-Infinity")):
                problems.append(f"{path}: expected a number, got {value!r}")
            return
        if hint is str:
            if isinstance(value, int) and not isinstance(value, bool):
                # int64 fields: Determined's gateway writes them as strings; the bindings
                # declare str and pass a number through.
                notes.append(f"{path}: int64 as a JSON number ({value})")
            elif not isinstance(value, str):
                problems.append(f"{path}: expected a string, got {value!r}")
            return
        if isinstance(hint, type) and hasattr(hint, "from_json"):
            if not isinstance(value, dict):
                problems.append(f"{path}: expected a {hint.__name__} object, got {value!r}")
                return
            for name, (field_hint, required) in self.class_hints(hint).items():
                if name not in value:
                    if required:
                        problems.append(f"{path}.{name}: required field missing ({hint.__name__})")
                    continue
                self.check(value[name], field_hint, f"{path}.{name}", problems, notes)
            return


def response_class(bindings, fn):
    """The class a binding function returns (for streams, the class of each item)."""
    ret = inspect.signature(fn).return_annotation
    m = re.search(r"(v1\w+|\w+v1\w+)", str(ret))
    return getattr(bindings, m.group(1)) if m else None


def call(bindings, session, fn_name, template, setup):
    fn = getattr(bindings, fn_name)
    sig = inspect.signature(fn)
    kwargs = {}
    segments = template.strip("/").split("/")
    for i, seg in enumerate(segments):
        m = re.fullmatch(r"\{([^}]+)\}", seg)
        if m:
            value = setup.value_for(m.group(1), segments[i - 1] if i else "")
            if value is None:
                return "skipped", f"no value for path parameter {m.group(1)}"
            kwargs[m.group(1)] = value
    for k, v in required_query(fn_name, setup).items():
        if k in sig.parameters:
            if k == "labels_metricType":
                v = bindings.TrialProfilerMetricLabelsProfilerMetricType(v)
            kwargs[k] = v
    missing = [p.name for p in sig.parameters.values()
               if p.kind == p.KEYWORD_ONLY and p.default is p.empty and p.name not in kwargs]
    if missing:
        return "skipped", f"needs {missing}"
    session.recorded.clear()
    result = fn(session, **kwargs)
    if inspect.isgenerator(result):
        items = list(itertools.islice(result, 20))
        detail = f"{len(items)} streamed item(s)"
    else:
        detail = type(result).__name__
    cls = response_class(bindings, fn)
    problems, notes = [], []
    if cls is not None:
        for body in session.recorded:
            if inspect.isgeneratorfunction(fn):
                for line in body.splitlines():
                    if line.strip():
                        j = json.loads(line)
                        setup.checker.check(j.get("result"), cls, "result", problems, notes)
            elif body.strip():
                setup.checker.check(json.loads(body), cls, "response", problems, notes)
    if problems:
        raise ValueError("; ".join(sorted(set(problems))[:12]))
    detail += f", {len(session.recorded)} answer(s) checked"
    return "ok", detail + (f" (notes: {'; '.join(sorted(set(notes))[:6])})" if notes else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--keep", action="store_true", help="keep the cluster's data dir")
    args = parser.parse_args()
    try:
        from determined.common import api
        from determined.common.api import bindings
    except ImportError:
        print("Determined's harness is not importable: set PYTHONPATH to its harness/",
              file=sys.stderr)
        return 2
    if not hasattr(bindings, "get_GetTrial"):
        print("determined.common.api.bindings is not Determined's generated bindings",
              file=sys.stderr)
        return 2
    work = pathlib.Path(tempfile.mkdtemp(prefix="bindings-check-"))
    setup = Setup(pathlib.Path(args.build), work)
    setup.up()
    try:
        setup.populate()
        session = api.Session(master=setup.url, username="admin", token=setup.token, cert=None,
                              max_retries=None)
        # Keep every raw answer body, for the shape check.
        session.recorded = []
        do_request = session._do_request

        def recording(*a, **kw):
            resp = do_request(*a, **kw)
            if kw.get("stream"):
                body = b"".join(resp.iter_content(chunk_size=None)).decode()
                resp._content, resp._content_consumed = body.encode(), True
                resp.iter_lines = lambda chunk_size=None, _b=body: iter(
                    line.encode() for line in _b.splitlines())
            else:
                body = resp.text
            session.recorded.append(body)
            return resp

        session._do_request = recording
        setup.checker = ShapeChecker(bindings)
        index = binding_index(bindings)
        checked, failed, skipped, unmatched = 0, [], [], []
        for route in our_get_routes():
            matches = index.get(normalize(route), [])
            if not matches:
                unmatched.append(route)
                continue
            for fn_name, template in matches:
                try:
                    status, detail = call(bindings, session, fn_name, template, setup)
                except Exception as e:  # noqa: BLE001 - every failure is a finding
                    checked += 1
                    tb = traceback.format_exc().strip().splitlines()
                    failed.append((route, fn_name, f"{type(e).__name__}: {e}", tb[-3:]))
                    print(f"FAIL     {route} ({fn_name}): {type(e).__name__}: {e}")
                    continue
                if status == "skipped":
                    skipped.append((route, fn_name, detail))
                    print(f"skipped  {route} ({fn_name}): {detail}")
                    continue
                checked += 1
                print(f"ok       {route} ({fn_name}): {detail}")
        # The answers of the changes populate() made, against their bindings' response classes.
        for method, path, body in setup.answers:
            if method == "GET" or path == "/api/v1/auth/login":
                continue
            fns = [(fn, t) for lst in binding_index(bindings, method).values() for fn, t in lst
                   if path_matches(t, path)]
            if not fns:
                unmatched.append(f"{method} {path}")
                continue
            fn_name, _ = fns[0]
            cls = response_class(bindings, getattr(bindings, fn_name))
            problems, notes = [], []
            if cls is not None and body.strip():
                setup.checker.check(json.loads(body), cls, "response", problems, notes)
            checked += 1
            route = f"{method} {path}"
            if problems:
                failed.append((route, fn_name, "; ".join(sorted(set(problems))[:12]), []))
                print(f"FAIL     {route} ({fn_name}): {'; '.join(sorted(set(problems))[:12])}")
            else:
                print(f"ok       {route} ({fn_name})" + (f" (notes: {notes[:4]})" if notes else ""))
        for err in setup.change_errors:
            checked += 1
            failed.append((err.split(":")[0], "-", err, []))
            print(f"FAIL     {err}")
        print()
        print(f"{checked} route bindings called, {len(failed)} failed, {len(skipped)} skipped, "
              f"{len(unmatched)} routes with no upstream GET binding:")
        for r in unmatched:
            print(f"  no binding: {r}")
        for route, fn, err, tb in failed:
            print(f"  FAIL {route} ({fn}): {err}")
            for line in tb:
                print(f"      {line}")
        return 1 if failed else 0
    finally:
        setup.down()
        if args.keep:
            print(f"data dir kept: {setup.data}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
