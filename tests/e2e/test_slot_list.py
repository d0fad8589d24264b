"""`det slot list` (and `det slot ls`, plain `det slot`): every slot of every agent with the
allocation and task that holds it, in Determined's columns (Agent ID, Resource Pool, Slot ID,
Enabled, Draining, Allocation ID, Task Name, Type, Device), as CSV with --csv and as Determined's
list of objects with --json. On a cluster of its own: it counts slots exactly."""

import csv
import io
import json
import pathlib

import pytest
import yaml

from cluster import Cluster, brought_up, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
HEADERS = ["Agent ID", "Resource Pool", "Slot ID", "Enabled", "Draining", "Allocation ID",
           "Task Name", "Type", "Device"]
JSON_KEYS = {"agent_id", "resource_pools", "slot_id", "enabled", "draining", "allocation_id",
             "task_name", "type", "device"}


@pytest.fixture(scope="module")
def c():
    with brought_up(Cluster(agents=1, slots=2)) as cl:
        yield cl


def slots_json(c):
    out = c.det("slot", "list", "--json").stdout
    rows = json.loads(out)
    assert isinstance(rows, list)
    for r in rows:
        assert set(r) == JSON_KEYS, r
    return rows


def test_idle_cluster_lists_free_slots(c):
    (agent,) = c.request("GET", "/api/v1/agents")["agents"]
    out = c.det("slot", "list").stdout
    lines = out.rstrip("\n").split("\n")
    assert [h.strip() for h in lines[0].split("|")] == HEADERS, out
    assert set(lines[1]) <= {"-", "+"}, out
    assert len(lines) == 4, out
    rows = slots_json(c)
    assert [(r["agent_id"], r["slot_id"]) for r in rows] == [(agent["id"], "0"), (agent["id"], "1")]
    for r in rows:
        assert r["resource_pools"] == "default"
        assert r["enabled"] is True and r["draining"] is False
        assert r["allocation_id"] == "FREE" and r["task_name"] == "FREE"
        assert r["type"] == "cpu" and r["device"], r
    # `ls` and plain `det slot` are the same listing; --csv has the same columns.
    assert c.det("slot", "ls").stdout == out
    assert c.det("slot").stdout == out
    table = list(csv.reader(io.StringIO(c.det("slot", "list", "--csv").stdout)))
    assert table[0] == HEADERS
    assert [row[2] for row in table[1:]] == ["0", "1"]
    assert all(row[3:7] == ["True", "False", "FREE", "FREE"] for row in table[1:]), table
    both = c.det("slot", "list", "--json", "--csv", check=False)
    assert both.returncode != 0


def test_running_trial_and_disabled_slot_show(c, tmp_path):
    cfg = yaml.safe_load((FIXTURES / "flaky.yaml").read_text())
    cfg["hyperparameters"]["sleep_per_step"] = 0.5
    cfg["searcher"]["max_length"]["batches"] = 400
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(cfg))
    exp_id = c.create(path, FIXTURES)
    try:
        trial = wait_for(lambda: (c.trials(exp_id) or [None])[0], 60, "the trial")

        def held():
            busy = [r for r in slots_json(c) if r["allocation_id"] != "FREE"]
            return busy or None

        (busy,) = wait_for(held, 120, "a slot held by the trial")
        tasks = c.request("GET", "/api/v1/tasks")["allocationIdToSummary"]
        (alloc,) = [a for a in tasks.values() if a["name"].startswith("Trial ")]
        assert busy["allocation_id"] == alloc["allocationId"]
        assert busy["task_name"] == f"Trial {trial['id']} (Experiment {exp_id})"
        free = [r for r in slots_json(c) if r["slot_id"] != busy["slot_id"]]
        assert [r["allocation_id"] for r in free] == ["FREE"]
        table = c.det("slot", "list").stdout
        assert alloc["allocationId"] in table and f"Trial {trial['id']} (Experiment {exp_id})" in table

        # An admin disables the free slot: the listing shows it.
        agent_id = busy["agent_id"]
        c.det("-u", "admin", "slot", "disable", agent_id, free[0]["slot_id"])
        rows = {r["slot_id"]: r for r in slots_json(c)}
        assert rows[free[0]["slot_id"]]["enabled"] is False
        assert rows[busy["slot_id"]]["enabled"] is True
        c.det("-u", "admin", "slot", "enable", agent_id, free[0]["slot_id"])
        assert all(r["enabled"] for r in slots_json(c))
    finally:
        c.det("experiment", "kill", str(exp_id), check=False)
