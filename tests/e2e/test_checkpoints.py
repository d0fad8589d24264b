"""Checkpoint GC by the save_* policy, checked on the storage itself; deletion; download."""

import filecmp
import pathlib
import subprocess

import pytest

from cluster import BIN, wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def steps_by_state(cluster, exp_id):
    ckpts = cluster.request("GET", f"/api/v1/experiments/{exp_id}/checkpoints")["checkpoints"]
    out = {}
    for c in ckpts:
        out.setdefault(c["state"], set()).add(c["metadata"]["steps_completed"])
    return out, {c["metadata"]["steps_completed"]: c["uuid"] for c in ckpts}


@pytest.mark.parametrize("scale,kept", [("0.9", {8, 9, 10}), ("1.1", {1, 2, 3, 9, 10})])
def test_gc_keeps_best_and_latest(cluster, scale, kept):
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            f"hyperparameters.scale={scale}")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)

    def collected():
        # GC records deletions one checkpoint at a time: wait for all of them.
        states, _ = steps_by_state(cluster, exp_id)
        return states if states.get("STATE_DELETED") == set(range(1, 11)) - kept else None

    states = wait_for(collected, 60, "checkpoint GC")
    assert states["STATE_COMPLETED"] == kept
    _, uuids = steps_by_state(cluster, exp_id)
    base = cluster.data_dir / "checkpoints"
    for step, uuid in uuids.items():
        assert (base / uuid).exists() == (step in kept), f"step {step} ({uuid}) on storage"


def test_delete_partial_delete_and_download(cluster, tmp_path):
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            "checkpoint_storage.save_trial_latest=10")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    _, uuids = steps_by_state(cluster, exp_id)
    assert len(uuids) == 10

    # Download by UUID in both modes: identical bytes.
    u = uuids[10]
    direct, master = tmp_path / "direct", tmp_path / "master"
    cluster.det("checkpoint", "download", u, "--mode", "direct", "-o", str(direct))
    cluster.det("checkpoint", "download", u, "--mode", "master", "-o", str(master))
    cmp = filecmp.dircmp(direct, master)
    assert (direct / "metadata.json").exists() and (direct / "nested" / "weights.bin").exists()
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only
    assert filecmp.cmp(direct / "nested" / "weights.bin", master / "nested" / "weights.bin",
                       shallow=False)

    # Remove files by glob: PARTIALLY_DELETED, and only after the files are gone.
    cluster.det("checkpoint", "rm", uuids[5], "--glob", "nested/**", "--yes")
    wait_for(lambda: cluster.request("GET", f"/api/v1/checkpoints/{uuids[5]}")["checkpoint"]["state"]
             == "STATE_PARTIALLY_DELETED", 60, "partial delete")
    assert not (cluster.data_dir / "checkpoints" / uuids[5] / "nested" / "weights.bin").exists()
    assert (cluster.data_dir / "checkpoints" / uuids[5] / "state.json").exists()
    # Delete: DELETED and gone from storage; deleting again is fine.
    for _ in range(2):
        cluster.det("checkpoint", "delete", uuids[4], "--yes")
        wait_for(lambda: cluster.request("GET", f"/api/v1/checkpoints/{uuids[4]}")["checkpoint"]
                 ["state"] == "STATE_DELETED", 60, "delete")
    assert not (cluster.data_dir / "checkpoints" / uuids[4]).exists()
    out = cluster.det("experiment", "list-checkpoints", str(exp_id)).stdout
    assert uuids[10] in out and "# of Batches" in out


def test_lifecycle_commands(cluster):
    cfg = FIXTURES / "flaky.yaml"
    exp_id = cluster.create(cfg, FIXTURES, "--paused")
    assert "Added label 'demo'" in cluster.det("experiment", "label", "add", str(exp_id), "demo").stdout
    assert cluster.experiment(exp_id)["labels"] == ["demo"]
    cluster.det("experiment", "label", "remove", str(exp_id), "demo")
    assert cluster.experiment(exp_id)["labels"] == []
    out = cluster.det("experiment", "set", "priority", str(exp_id), "7").stdout
    assert "to 7" in out
    assert cluster.experiment(exp_id)["config"]["resources"]["priority"] == 7
    bad = cluster.det("experiment", "set", "priority", str(exp_id), "100", check=False)
    assert bad.returncode != 0 and "priority" in bad.stderr
    # Archiving needs a terminal state.
    assert cluster.det("experiment", "archive", str(exp_id), check=False).returncode != 0
    # A paused experiment asks for no resources, so it is in no queue (as in Determined).
    jobs = cluster.det("job", "list").stdout
    assert "# " in jobs and f"({exp_id})" not in jobs
    cluster.det("experiment", "kill", str(exp_id))
    cluster.wait_state(exp_id, "STATE_CANCELED", timeout=60)
    cluster.det("experiment", "archive", str(exp_id))
    assert cluster.experiment(exp_id)["archived"] is True
    cluster.det("experiment", "unarchive", str(exp_id))
    assert cluster.experiment(exp_id)["archived"] is False


def test_trial_kill_and_continue(cluster, tmp_path):
    cfg = tmp_path / "slow.yaml"
    cfg.write_text((FIXTURES / "flaky.yaml").read_text().replace("sleep_per_step: 0.0",
                                                                 "sleep_per_step: 0.3"))
    exp_id = cluster.create(cfg, FIXTURES)
    (trial,) = wait_for(lambda: cluster.trials(exp_id), 60, "trial")
    wait_for(lambda: cluster.metrics(trial["id"], "training"), 60, "training to start")
    assert "Killed trial" in cluster.det("trial", "kill", str(trial["id"])).stdout
    cluster.wait_state(exp_id, "STATE_CANCELED", timeout=60)
    assert cluster.trials(exp_id)[0]["state"] == "STATE_CANCELED"
    cluster.det("experiment", "continue", str(exp_id), "--config", "hyperparameters.sleep_per_step=0")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    (trial,) = cluster.trials(exp_id)
    assert trial["state"] == "STATE_COMPLETED"
    steps = [m["stepsCompleted"] for m in cluster.metrics(trial["id"], "training")]
    assert steps == list(range(1, 21)), steps


def test_delete_experiment_removes_files_and_records(cluster):
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES, "--config",
                            "checkpoint_storage.save_trial_latest=10")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    _, uuids = steps_by_state(cluster, exp_id)
    assert len(uuids) == 10
    busy = cluster.create(FIXTURES / "flaky.yaml", FIXTURES, "--paused")
    refused = cluster.det("experiment", "delete", str(busy), "--yes", check=False)
    assert refused.returncode != 0 and "must be COMPLETED, CANCELED or ERROR" in refused.stderr
    cluster.det("experiment", "delete", str(exp_id), "--yes")
    wait_for(lambda: cluster.request_status(
        "GET", f"/api/v1/experiments/{exp_id}",
        headers={"Authorization": f"Bearer {cluster.token()}"})[0] == 404, 60,
        "the experiment to be gone")
    for uuid in uuids.values():
        assert not (cluster.data_dir / "checkpoints" / uuid).exists()
    cluster.det("experiment", "kill", str(busy))


def test_checkpoint_metadata_add_and_remove(cluster):
    exp_id = cluster.create(FIXTURES / "checkpoints.yaml", FIXTURES)
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)
    _, uuids = steps_by_state(cluster, exp_id)
    u = uuids[10]
    cluster.det("checkpoint", "add-metadata", u, "note=best", "score=0.5")
    md = cluster.request("GET", f"/api/v1/checkpoints/{u}")["checkpoint"]["metadata"]
    assert md["note"] == "best" and md["score"] == 0.5 and md["steps_completed"] == 10
    cluster.det("checkpoint", "remove-metadata", u, "note")
    md = cluster.request("GET", f"/api/v1/checkpoints/{u}")["checkpoint"]["metadata"]
    assert "note" not in md and md["score"] == 0.5
    refused = cluster.det("checkpoint", "remove-metadata", u, "steps_completed", check=False)
    assert refused.returncode != 0 and "steps_completed" in refused.stderr
