"""Routes the Python SDK (experimental.client) uses for trials, checkpoints and metrics: checkpoint
sorting and filtering, a trial's warm-start checkpoint, streamed metrics."""

import json
import urllib.error
import urllib.request

import pytest

from cluster import wait_for
from test_checkpoints import FIXTURES


@pytest.fixture(scope="module")
def finished(cluster):
    """An experiment whose metric grows (smaller is better): steps 1-3 and 9-10 kept, 4-8 GC'd."""
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            "hyperparameters.scale=1.1")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    trial_id = cluster.trials(exp_id)[0]["id"]

    def collected():
        ckpts = cluster.request("GET", f"/api/v1/trials/{trial_id}/checkpoints")["checkpoints"]
        return ckpts if sum(c["state"] == "STATE_DELETED" for c in ckpts) == 5 else None

    wait_for(collected, 60, "checkpoint GC")
    return exp_id, trial_id


def ckpts(cluster, trial_id, query=""):
    return cluster.request("GET", f"/api/v1/trials/{trial_id}/checkpoints{query}")["checkpoints"]


def steps(items):
    return [c["metadata"]["steps_completed"] for c in items]


def get_status(cluster, path):
    req = urllib.request.Request(cluster.url + path)
    req.add_header("Authorization", f"Bearer {cluster.token()}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_trial_checkpoints_sort_order_and_states(cluster, finished):
    _, trial_id = finished
    # Searcher metric without an order: best first by smaller_is_better (step 1 has x=1.0).
    assert steps(ckpts(cluster, trial_id, "?sortByAttr=SORT_BY_SEARCHER_METRIC")) == list(range(1, 11))
    # Explicit orders use the raw value.
    assert steps(ckpts(cluster, trial_id, "?sortByAttr=SORT_BY_SEARCHER_METRIC&orderBy=ORDER_BY_DESC")) \
        == list(range(10, 0, -1))
    assert steps(ckpts(cluster, trial_id, "?sortByAttr=SORT_BY_BATCH_NUMBER&orderBy=ORDER_BY_DESC")) \
        == list(range(10, 0, -1))
    # A named validation metric sorts the same way; limit takes the first.
    top = ckpts(cluster, trial_id, "?sortByMetric=x&orderBy=ORDER_BY_ASC&limit=1")
    assert steps(top) == [1] and top[0]["training"]["searcherMetric"] == pytest.approx(1.0)
    by_uuid = ckpts(cluster, trial_id, "?sortByAttr=SORT_BY_UUID&orderBy=ORDER_BY_ASC")
    assert [c["uuid"] for c in by_uuid] == sorted(c["uuid"] for c in by_uuid)
    by_time = ckpts(cluster, trial_id, "?sortByAttr=SORT_BY_END_TIME&orderBy=ORDER_BY_DESC")
    assert [c["reportTime"] for c in by_time] == sorted((c["reportTime"] for c in by_time), reverse=True)
    # states: repeated query values, as the SDK sends a list.
    kept = ckpts(cluster, trial_id, "?states=STATE_COMPLETED&sortByAttr=SORT_BY_BATCH_NUMBER")
    assert steps(kept) == [1, 2, 3, 9, 10]
    both = ckpts(cluster, trial_id, "?states=STATE_COMPLETED&states=STATE_DELETED")
    assert len(both) == 10
    code, body = get_status(cluster, f"/api/v1/trials/{trial_id}/checkpoints?sortByAttr=SORT_BY_SIZE")
    assert code == 400 and "sortByAttr" in body


def test_experiment_checkpoints_sort_the_same_way(cluster, finished):
    exp_id, trial_id = finished

    def exp_ckpts(query):
        return cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints{query}")["checkpoints"]

    for query in ("?sortByAttr=SORT_BY_SEARCHER_METRIC",
                  "?sortByAttr=SORT_BY_SEARCHER_METRIC&orderBy=ORDER_BY_DESC",
                  "?states=STATE_COMPLETED&sortByAttr=SORT_BY_BATCH_NUMBER",
                  "?states=STATE_COMPLETED&states=STATE_DELETED&sortByAttr=SORT_BY_UUID"):
        assert exp_ckpts(query) == ckpts(cluster, trial_id, query), query
    # `det experiment list-checkpoints --best 2` asks for this: the two best, best first.
    assert steps(exp_ckpts("?sortByAttr=SORT_BY_SEARCHER_METRIC&limit=2")) == [1, 2]
    code, body = get_status(cluster, f"/api/v1/experiments/{exp_id}/checkpoints?orderBy=UP")
    assert code == 400 and "orderBy" in body


def test_trials_metrics_stream(cluster, finished):
    _, trial_id = finished
    for path, group, key in [
        (f"trial_metrics?trialIds={trial_id}&group=validation", "validation", "validation_metrics"),
        (f"training_metrics?trialIds={trial_id}", "training", "avg_metrics"),
        (f"validation_metrics?trialIds={trial_id}", "validation", "validation_metrics"),
    ]:
        code, text = get_status(cluster, "/api/v1/trials/metrics/" + path)
        assert code == 200, text
        lines = [json.loads(line) for line in text.splitlines() if line]
        reports = [m for line in lines for m in line["result"]["metrics"]]
        assert [m["totalBatches"] for m in reports] == list(range(1, 11))
        first = reports[0]
        assert first["trialId"] == trial_id and first["group"] == group
        assert set(first) >= {"id", "trialRunId", "endTime", "archived", "metrics"}
        assert key in first["metrics"]
    code, body = get_status(cluster, f"/api/v1/trials/metrics/trial_metrics?trialIds={trial_id}")
    assert code == 400 and "group" in body
    code, body = get_status(cluster, "/api/v1/trials/metrics/trial_metrics?group=training")
    assert code == 400 and "trialIds" in body
    code, _ = get_status(cluster, "/api/v1/trials/metrics/training_metrics?trialIds=999999")
    assert code == 404


def test_warm_start_checkpoint_uuid(cluster, finished):
    _, trial_id = finished
    assert cluster.request("GET", f"/api/v1/trials/{trial_id}")["trial"]["warmStartCheckpointUuid"] is None
    source = ckpts(cluster, trial_id, "?states=STATE_COMPLETED&sortByAttr=SORT_BY_BATCH_NUMBER")[-1]
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            f"searcher.source_checkpoint_uuid={source['uuid']}")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    child = cluster.trials(exp_id)[0]
    assert child["warmStartCheckpointUuid"] == source["uuid"]


def test_checkpoint_metrics_of_linked_trials(cluster, finished):
    _, trial_id = finished
    uuid = ckpts(cluster, trial_id, "?states=STATE_COMPLETED")[0]["uuid"]
    # Another trial (standing in for an inference task) says it used the checkpoint.
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    user = cluster.trials(exp_id)[0]["id"]
    assert cluster.request("GET", f"/api/v1/checkpoints/{uuid}/metrics")["metrics"] == []
    info = {"trialId": user, "checkpointUuid": uuid,
            "trialSourceInfoType": "TRIAL_SOURCE_INFO_TYPE_INFERENCE"}
    for _ in range(2):  # linking twice is one link
        resp = cluster.request("POST", "/api/v1/trial-source-info", {"trialSourceInfo": info})
        assert resp == {"trialId": user, "checkpointUuid": uuid}
    got = cluster.request("GET", f"/api/v1/checkpoints/{uuid}/metrics?metricGroup=validation"
                          "&trialSourceInfoType=TRIAL_SOURCE_INFO_TYPE_INFERENCE")["metrics"]
    assert [(m["trialId"], m["totalBatches"]) for m in got] == [(user, s) for s in range(1, 11)]
    assert "validation_metrics" in got[0]["metrics"]
    all_groups = cluster.request("GET", f"/api/v1/checkpoints/{uuid}/metrics")["metrics"]
    assert len(all_groups) == 20
    other = cluster.request("GET", f"/api/v1/checkpoints/{uuid}/metrics"
                            "?trialSourceInfoType=TRIAL_SOURCE_INFO_TYPE_FINE_TUNING")["metrics"]
    assert other == []
    bad = dict(info, trialSourceInfoType="TRIAL_SOURCE_INFO_TYPE_BOGUS")
    code, body = cluster.request_status("POST", "/api/v1/trial-source-info", {"trialSourceInfo": bad},
                                        {"Authorization": f"Bearer {cluster.token()}"})
    assert code == 400 and "trialSourceInfoType" in json.dumps(body)
    code, _ = cluster.request_status("POST", "/api/v1/trial-source-info",
                                     {"trialSourceInfo": dict(info, checkpointUuid="nope")},
                                     {"Authorization": f"Bearer {cluster.token()}"})
    assert code == 404
    code, _ = get_status(cluster, "/api/v1/checkpoints/nope/metrics")
    assert code == 404
