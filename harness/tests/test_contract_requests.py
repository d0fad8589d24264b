"""The Python package's requests hold to the REST contract (api/openapi.yaml): a trial's Core API
session against the fake master, every request it made checked against the document (route,
query parameters, body), and the fake master's own answers checked too, so it fakes the
master the contract describes."""

import pathlib
import sys

import pytest

from determined import core

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "api"))

from contract_check import Contract, format_problems  # noqa: E402

# Routes the fake master answers without holding state of its own (the trial-source link).
SERVED = {r"POST /api/v1/trial-source-info": (200, {"trialId": 7, "checkpointUuid": "abc"}),
          r"POST /api/v1/webhooks/custom": (200, {})}


@pytest.fixture(scope="module")
def contract() -> Contract:
    return Contract()


def core_session(master) -> None:
    """What a trial does: searcher operations, metrics of every kind, progress, checkpoints,
    status and metadata, preemption checks, an alert, a checkpoint used for inference."""
    master.ops = [4, 8]
    master.reject.update(SERVED)
    with core.init() as ctx:
        trained = 0
        for op in ctx.searcher.operations():
            while trained < op.length:
                trained += 1
                ctx.train.report_training_metrics(trained, {"loss": 1.0 / trained},
                                                  batch_metrics=[{"loss": 1.0}])
                op.report_progress(trained)
            ctx.train.report_validation_metrics(trained, {"validation_loss": 0.5 / trained})
            ctx.train.report_metrics("inference", trained, {"x": float("nan")})
            with ctx.checkpoint.store_path({"steps_completed": trained}) as (path, _):
                (path / "w.bin").write_bytes(b"123")
            ctx.preempt.should_preempt()
            op.report_completed(0.5 / trained)
        ctx.train.set_status("done training")
        ctx.train.set_metadata({"k": [1, 2], "none": None})
        ctx.train.get_metadata()
        ctx.train.get_experiment_best_validation()
        ctx.alert(title="finished", description="ok", level="info")

        class Ckpt:
            uuid = "abc"

        ctx.experimental.report_task_using_checkpoint(Ckpt())


def test_core_api_requests_follow_the_contract(on_cluster, contract):
    core_session(on_cluster)
    requests = list(on_cluster.requests)
    assert len(requests) >= 20, requests
    problems = []
    used = set()
    for r in requests:
        query = "&".join(f"{k}={v}" for k, v in r.query.items())
        path = r.path + (f"?{query}" if query else "")
        problems += contract.check_request(r.method, path, r.body)
        op = contract.match(r.method, r.path)
        if op is not None:
            used.add(str(op))
    assert not problems, (f"{len(problems)} requests of determined.core break api/openapi.yaml:\n"
                          + format_problems(problems))
    # The session reached every kind of trial-facing route.
    for op in ("POST /api/v1/trials/{id}/metrics", "GET /api/v1/trials/{id}/searcher/operation",
               "POST /api/v1/trials/{id}/searcher/completed_operation",
               "POST /api/v1/trials/{id}/progress", "POST /api/v1/checkpoints",
               "GET /api/v1/allocations/{id}/signals/preemption",
               "POST /api/v1/runs/{id}/metadata", "POST /api/v1/trials/{id}/runner/metadata",
               "POST /api/v1/trial-source-info", "POST /api/v1/webhooks/custom"):
        assert op in used, f"{op} not reached; used: {sorted(used)}"


def test_contract_check_catches_a_bad_request(contract):
    # The check itself can fail: an unknown route, a wrong type, a missing field, a bad query.
    assert contract.check_request("POST", "/api/v1/trials/7/metricz", {})
    assert contract.check_request("POST", "/api/v1/trials/7/metrics",
                                  {"metrics": {"trialRunId": "one"}})
    assert contract.check_request("POST", "/api/v1/trials/7/metrics", {"group": "training"})
    assert contract.check_request("GET", "/api/v1/trials/7/searcher/operation?timeoutSeconds=x")
    # A null field is an absent field, as the master reads it.
    assert not contract.check_request("POST", "/api/v1/trials/7/metrics",
                                      {"metrics": {"trialRunId": 1}, "group": None})


def test_fake_master_answers_follow_the_contract(contract, master):
    """The fake's answers (on the routes it serves) have the shapes the contract gives, so the
    tests above exercise the client against the master the contract describes."""
    import json
    import urllib.error
    import urllib.request

    master.ops = [3]
    master.best_validation = 0.5
    master.reject.update(SERVED)
    headers = {"Grpc-Metadata-x-allocation-token": f"Bearer {master.token}",
               "Content-Type": "application/json"}
    calls = [
        ("GET", "/api/v1/trials/7/searcher/operation?timeoutSeconds=0", None),
        ("POST", "/api/v1/trials/7/metrics",
         {"group": "training", "metrics": {"trialId": 7, "trialRunId": 1, "stepsCompleted": 1,
                                           "metrics": {"avgMetrics": {"loss": 1}}}}),
        ("POST", "/api/v1/trials/7/searcher/completed_operation",
         {"op": {"length": 3}, "searcherMetric": 0.5}),
        ("POST", "/api/v1/trials/7/progress", {"progress": 0.5, "isRaw": True}),
        ("POST", "/api/v1/runs/7/metadata", {"runId": 7, "metadata": {"a": 1}}),
        ("GET", "/api/v1/runs/7/metadata", None),
        ("GET", "/api/v1/experiments/1/searcher/best_searcher_validation_metric", None),
        ("GET", "/api/v1/allocations/1.abc.1/signals/preemption?timeoutSeconds=0", None),
        ("POST", "/api/v1/allocations/1.abc.1/signals/ack_preemption", None),
        ("POST", "/api/v1/trial-source-info",
         {"trialSourceInfo": {"trialId": 7, "checkpointUuid": "abc",
                              "trialSourceInfoType": "TRIAL_SOURCE_INFO_TYPE_INFERENCE"}}),
        ("GET", "/api/v1/checkpoints/missing", None),
    ]
    problems = []
    for method, path, body in calls:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(master.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                status, ctype, text = resp.status, resp.headers["Content-Type"], resp.read()
        except urllib.error.HTTPError as e:
            status, ctype, text = e.code, e.headers["Content-Type"], e.read()
        problems += contract.check_request(method, path, body)
        problems += contract.check_response(method, path, status, ctype, text.decode())
    assert not problems, "the fake master breaks api/openapi.yaml:\n" + format_problems(problems)


def test_every_schema_of_the_contract_is_valid_json_schema(contract):
    """Each schema (components and inline) is valid JSON Schema 2020-12, so the validation the
    tests rely on means what it says."""
    import jsonschema

    found = []

    def walk(node, where):
        if isinstance(node, dict):
            if isinstance(node.get("schema"), dict):
                found.append((where + "/schema", node["schema"]))
            for k, v in node.items():
                walk(v, f"{where}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}/{i}")

    walk(contract.doc["paths"], "#/paths")
    walk(contract.doc["components"]["responses"], "#/components/responses")
    walk(contract.doc["components"]["parameters"], "#/components/parameters")
    found += [(f"#/components/schemas/{k}", v)
              for k, v in contract.doc["components"]["schemas"].items()]
    assert len(found) > 100
    bad = []
    for where, schema in found:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.exceptions.SchemaError as e:
            bad.append(f"{where}: {e.message}")
    assert not bad, "invalid schemas in api/openapi.yaml:\n" + "\n".join(bad)
