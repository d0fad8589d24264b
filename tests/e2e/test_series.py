"""Metric series downsampled on the server for charts: GET /api/v1/trials/time-series
(Determined's CompareTrials) and /api/v1/trials/{id}/summarize, and the paged trial list."""

import json
import urllib.error
import urllib.request

import pytest

from test_checkpoints import FIXTURES


@pytest.fixture(scope="module")
def trial(cluster):
    """A finished trial that reported training `loss` and validation `x` at steps 1..10."""
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    return exp_id, cluster.trials(exp_id)[0]["id"]


def get(cluster, path):
    req = urllib.request.Request(cluster.url + path)
    req.add_header("Authorization", f"Bearer {cluster.token()}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def batches(series):
    return [p["batches"] for p in series["data"]]


def test_time_series_keeps_first_last_and_even_steps(cluster, trial):
    _, trial_id = trial
    code, body = get(cluster, f"/api/v1/trials/time-series?trialIds={trial_id}&maxDatapoints=4"
                              "&metricIds=training.loss&metricIds=validation.x")
    assert code == 200, body
    [entry] = body["trials"]
    assert entry["trial"]["id"] == trial_id
    train, val = entry["metrics"]
    assert (train["group"], train["type"]) == ("training", "METRIC_TYPE_TRAINING")
    assert (val["group"], val["type"]) == ("validation", "METRIC_TYPE_VALIDATION")
    # Targets 1 + 9k/3: steps 1, 4, 7 and 10.
    assert batches(train) == [1, 4, 7, 10]
    assert batches(val) == [1, 4, 7, 10]
    assert all(isinstance(p["values"]["loss"], float) for p in train["data"])
    assert all(set(p) >= {"batches", "values", "time"} for p in val["data"])
    # The default is 200 points: all ten.
    code, body = get(cluster, f"/api/v1/trials/time-series?trialIds={trial_id}"
                              "&metricNames=loss&group=training")
    assert code == 200, body
    assert batches(body["trials"][0]["metrics"][0]) == list(range(1, 11))


def test_summarize_range_and_groups(cluster, trial):
    _, trial_id = trial
    code, body = get(cluster, f"/api/v1/trials/{trial_id}/summarize?metricNames=loss"
                              "&metricType=METRIC_TYPE_TRAINING&startBatches=3&endBatches=6")
    assert code == 200, body
    assert body["trial"]["id"] == trial_id
    [train] = body["metrics"]
    assert batches(train) == [3, 4, 5, 6]
    # Without a group the names are read from training and validation reports; validation
    # reports have no `loss`, so their values are null (as Determined).
    code, body = get(cluster, f"/api/v1/trials/{trial_id}/summarize?metricNames=loss")
    assert code == 200, body
    groups = {m["group"]: m for m in body["metrics"]}
    assert set(groups) == {"training", "validation"}
    assert all(p["values"]["loss"] is None for p in groups["validation"]["data"])


def test_series_errors_name_the_parameter(cluster, trial):
    _, trial_id = trial
    base = f"/api/v1/trials/time-series?trialIds={trial_id}"
    for path, word, status in [
        (base + "&metricNames=loss&metricIds=training.loss", "metricIds", 400),
        (base + "&metricIds=loss", "metricIds", 400),
        (base + "&metricNames=loss&metricType=METRIC_TYPE_BOGUS", "metricType", 400),
        (base + "&metricNames=loss&group=training&metricType=METRIC_TYPE_TRAINING", "group", 400),
        (base + "&metricNames=loss&maxDatapoints=-1", "maxDatapoints", 400),
        (base + "&metricNames=loss&startBatches=5&endBatches=2", "endBatches", 400),
        (base + "&timeSeriesFilter.name=epochs", "timeSeriesFilter", 400),
        ("/api/v1/trials/time-series?metricNames=loss", "trialIds", 400),
        ("/api/v1/trials/time-series?trialIds=x", "trialIds", 400),
        ("/api/v1/trials/time-series?trialIds=999999&metricNames=loss", "999999", 404),
        (f"/api/v1/trials/{trial_id}/summarize?scale=SCALE_CUBE", "scale", 400),
    ]:
        code, body = get(cluster, path)
        assert code == status and word in body["error"]["error"], (path, code, body)


def test_experiment_trials_are_paged(cluster, trial):
    exp_id, trial_id = trial
    code, body = get(cluster, f"/api/v1/experiments/{exp_id}/trials?limit=1&orderBy=ORDER_BY_DESC")
    assert code == 200, body
    assert [t["id"] for t in body["trials"]] == [trial_id]
    assert body["pagination"]["total"] == 1
    code, body = get(cluster, f"/api/v1/experiments/{exp_id}/trials?offset=1")
    assert code == 200 and body["trials"] == [] and body["pagination"]["total"] == 1
    code, body = get(cluster, "/api/v1/experiments/999999/trials")
    assert code == 404, body
