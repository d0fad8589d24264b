"""Log fields and the allocation usage report (issue #34).

GET .../logs/fields gives the distinct agent, container, rank, stdtype and source values of a
trial's or task's logs (a task's with its allocation ids too), once or followed until the task
ends; each value, used as a filter of GET /api/v1/tasks/{id}/logs, selects some lines, and rank
-1 selects the lines without a rank. GET /resources/allocation/allocations-csv lists each
allocation of the period with its task type, owner, workspace and experiment as they were when
it ran: moving the project or deleting the experiment leaves the row as it was, and
/api/v1/resources/allocation/aggregated sums it per day. The web UI's own reads: each user's
settings (/api/v1/users/setting), the running-task counts and each pool's queue stats."""

import csv
import datetime
import io
import json
import pathlib
import re
import urllib.parse

import yaml

from cluster import Cluster, wait_for
from test_permissions import as_user, new_user

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "webhooks"


def ndjson(c: Cluster, path: str) -> list:
    return [json.loads(line)["result"] for line in c.request("GET", path, raw=True).splitlines()
            if line.strip()]


def ok_experiment(c: Cluster, tmp_path: pathlib.Path, *extra: str) -> int:
    """A one-trial experiment whose process prints a line (the agent ships it with its agent,
    container and stream) before reporting."""
    ctx = tmp_path / "ctx"
    ctx.mkdir(exist_ok=True)
    (ctx / "script.py").write_text(
        "print('hello from the trial', flush=True)\n" + (FIXTURES / "script.py").read_text())
    config = yaml.safe_load((FIXTURES / "ok.yaml").read_text())
    config.pop("integrations")
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(config))
    exp = c.create(path, ctx, *extra)
    c.wait_state(exp, "STATE_COMPLETED")
    return exp



def test_log_fields_select_lines(cluster, tmp_path):
    c = cluster
    exp = ok_experiment(c, tmp_path)
    (trial,) = c.trials(exp)
    (fields,) = ndjson(c, f"/api/v1/trials/{trial['id']}/logs/fields")
    assert "allocationIds" not in fields, fields
    assert fields["agentIds"] and fields["stdtypes"] and fields["sources"], fields

    task = trial["taskId"]
    followed = ndjson(c, f"/api/v1/tasks/{task}/logs/fields?follow=true")
    assert followed, "following a finished task's fields answers once and ends"
    task_fields = ndjson(c, f"/api/v1/tasks/{task}/logs/fields")[0]
    assert task_fields["allocationIds"] == [f"{task}.1"], task_fields
    every = ndjson(c, f"/api/v1/tasks/{task}/logs")
    for name, values in task_fields.items():
        for value in values:
            q = urllib.parse.urlencode({name: value})
            lines = ndjson(c, f"/api/v1/tasks/{task}/logs?{q}")
            assert lines, f"{name}={value} selected no line"
            assert len(lines) <= len(every)
    unranked = ndjson(c, f"/api/v1/tasks/{task}/logs?rankIds=-1")
    assert unranked and all("rankId" not in l or l["rankId"] is None for l in unranked), unranked
    assert ndjson(c, f"/api/v1/tasks/{task}/logs?rankIds=-2") == []

    missing = c.request_status("GET", "/api/v1/tasks/no-such-task/logs/fields",
                               headers={"Authorization": f"Bearer {c.token()}"})
    assert missing[0] == 404, missing


def timestamp(delta: int) -> str:
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=delta)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def usage(c: Cluster, start: str) -> list:
    q = urllib.parse.urlencode({"timestamp_after": start, "timestamp_before": timestamp(5)})
    return list(csv.DictReader(io.StringIO(
        c.request("GET", f"/resources/allocation/allocations-csv?{q}", raw=True))))


def test_allocation_usage_report(cluster, tmp_path):
    c = cluster
    start = timestamp(-2)
    w1 = c.request("POST", "/api/v1/workspaces", {"name": "usage-w1"})["workspace"]
    w2 = c.request("POST", "/api/v1/workspaces", {"name": "usage-w2"})["workspace"]
    p1 = c.request("POST", f"/api/v1/workspaces/{w1['id']}/projects",
                   {"name": "usage-p1", "workspaceId": w1["id"]})["project"]
    exp = ok_experiment(c, tmp_path, "--project_id", str(p1["id"]))

    def exp_rows():
        return [r for r in usage(c, start) if r["experiment_id"] == str(exp)]

    (row,) = exp_rows()
    assert row["task_type"] == "TRIAL" and row["workspace_name"] == "usage-w1", row
    assert row["username"] == "determined" and row["slots"] == "1" and row["end_time"], row
    assert float(row["slot_hours"]) > 0 and row["resource_pool"] == "default", row

    # Where and for what it ran stays as it was.
    c.request("POST", f"/api/v1/projects/{p1['id']}/move",
              {"destinationWorkspaceId": w2["id"], "projectId": p1["id"]})
    assert exp_rows()[0]["workspace_name"] == "usage-w1"
    c.request("DELETE", f"/api/v1/experiments/{exp}")
    wait_for(lambda: c.request_status("GET", f"/api/v1/experiments/{exp}",
                                      headers={"Authorization": f"Bearer {c.token()}"})[0] == 404
             or None, 60, "the experiment to be deleted")
    assert exp_rows()[0]["workspace_name"] == "usage-w1"

    out = c.det("cmd", "run", "echo", "usage").stdout
    task_id = re.search(r"([0-9a-f-]{36})", out).group(1)
    text = c.request("GET", "/resources/allocation/allocations-csv?" + urllib.parse.urlencode(
        {"timestamp_after": start, "timestamp_before": timestamp(5)}), raw=True)
    assert re.search(f"{task_id}.*,COMMAND,determined,Uncategorized,,", text), text
    logs = c.det("task", "logs", task_id).stdout
    assert "Resources for Command (" in logs and "have started" in logs, logs

    bad = c.request_status("GET", "/resources/allocation/allocations-csv?timestamp_after=yesterday"
                           "&timestamp_before=" + timestamp(0),
                           headers={"Authorization": f"Bearer {c.token()}"})
    assert bad[0] == 400 and "timestamp_after" in bad[1]["error"]["error"], bad
    backwards = c.request_status(
        "GET", f"/resources/allocation/allocations-csv?timestamp_after={timestamp(0)}"
        f"&timestamp_before={timestamp(-60)}", headers={"Authorization": f"Bearer {c.token()}"})
    assert backwards[0] == 400, backwards
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    (day,) = c.request("GET", "/api/v1/resources/allocation/aggregated?startDate=" + today +
                       "&endDate=" + today +
                       "&period=RESOURCE_ALLOCATION_AGGREGATION_PERIOD_DAILY")["resourceEntries"]
    assert day["periodStart"] == today and day["seconds"] > 0, day
    assert day["byUsername"]["determined"] > 0 and day["byResourcePool"]["default"] > 0, day
    anonymous = c.request_status(
        "GET", f"/resources/allocation/allocations-csv?timestamp_after={start}"
        f"&timestamp_before={timestamp(0)}")
    assert anonymous[0] == 401, anonymous


def test_web_settings_counts_and_queue_stats(cluster):
    c = cluster
    carol = new_user(c, "settings-carol", "pw")
    mine = [{"key": "theme", "value": '"dark"', "storagePath": "global"},
            {"key": "columns", "value": "[1,2]", "storagePath": "experiment-list"}]
    c.request("POST", "/api/v1/users/setting", {"settings": mine})
    got = c.request("GET", "/api/v1/users/setting")["settings"]
    assert sorted((s["storagePath"], s["key"], s["value"]) for s in got) == [
        ("experiment-list", "columns", "[1,2]"), ("global", "theme", '"dark"')], got
    status, theirs = c.request_status("GET", "/api/v1/users/setting", headers=as_user(carol))
    assert status == 200 and theirs["settings"] == [], theirs
    c.request("POST", "/api/v1/users/setting",
              {"settings": [{"key": "theme", "value": "", "storagePath": "global"}]})
    assert [s["key"] for s in c.request("GET", "/api/v1/users/setting")["settings"]] == ["columns"]
    status, bad = c.request_status("POST", "/api/v1/users/setting",
                                   {"settings": [{"key": "", "value": "x"}]},
                                   headers=as_user(c.token()))
    assert status == 400 and "settings[0].key" in bad["error"]["error"], bad
    c.request("POST", "/api/v1/users/setting/reset", {})
    assert c.request("GET", "/api/v1/users/setting")["settings"] == []

    out = c.det("cmd", "run", "-d", "sleep", "600").stdout
    task_id = out.strip().splitlines()[-1].strip()
    wait_for(lambda: c.request("GET", "/api/v1/tasks/count")["commands"] >= 1 or None, 120,
             "the command to be counted as running")
    counts = c.request("GET", "/api/v1/tasks/count")
    assert set(counts) == {"commands", "notebooks", "shells", "tensorboards"}, counts
    (stats,) = c.request("GET", "/api/v1/job-queues/stats?resourcePools=default")["results"]
    assert stats["resourcePool"] == "default" and stats["stats"]["scheduledCount"] >= 1, stats
    status, bad = c.request_status("GET", "/api/v1/job-queues/stats?resourcePools=nope",
                                   headers=as_user(c.token()))
    assert status == 400 and "resourcePools" in bad["error"]["error"], bad
    c.request("POST", f"/api/v1/commands/{task_id}/kill")

    unfulfillable = c.det("cmd", "run", "--config", "resources.slots=64", "true", check=False)
    assert unfulfillable.returncode != 0, unfulfillable
    assert "request unfulfillable" in unfulfillable.stderr, unfulfillable.stderr
