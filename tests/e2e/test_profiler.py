"""The profiler and TensorBoard files end to end: a trial with profiling on reports system
metrics that GET /trials/{id}/profiler/available_series lists and /profiler/metrics returns,
and its reported metrics reach checkpoint storage as TensorBoard event files at Determined's
path (<storage>/<cluster id>/tensorboard/experiment/<id>/trial/<id>/)."""

import datetime
import json
import pathlib
import struct
import threading
import urllib.error
import urllib.request

import pytest

from cluster import wait_for

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "profiler"


def ndjson(cluster, path):
    raw = cluster.request("GET", path, raw=True)
    return [json.loads(line)["result"] for line in raw.splitlines() if line.strip()]


def series(cluster, trial_id):
    (first, *rest) = ndjson(cluster, f"/api/v1/trials/{trial_id}/profiler/available_series")
    assert rest == []
    return first["labels"]


def crc32c(data: bytes) -> int:
    """Bit by bit (the harness uses a table), so the check is independent of it."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tf_records(path: pathlib.Path):
    data, pos, out = path.read_bytes(), 0, []
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        assert struct.unpack_from("<I", data, pos + 8)[0] == masked(data[pos:pos + 8])
        payload = data[pos + 12:pos + 12 + n]
        assert struct.unpack_from("<I", data, pos + 12 + n)[0] == masked(payload)
        out.append(payload)
        pos += 16 + n
    assert pos == len(data), "trailing bytes"
    return out


def scalars(payload: bytes):
    """(step, tag, value) of an Event's Summary values, decoded from the wire format."""

    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            num, wt = key >> 3, key & 7
            if wt == 0:
                v, i = varint(buf, i)
            elif wt == 1:
                v, i = buf[i:i + 8], i + 8
            elif wt == 5:
                v, i = buf[i:i + 4], i + 4
            elif wt == 2:
                n, i = varint(buf, i)
                v, i = buf[i:i + n], i + n
            else:
                raise AssertionError(f"wire type {wt}")
            yield num, v

    def varint(buf, i):
        shift = result = 0
        while True:
            b = buf[i]
            i += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result, i

    step, out = 0, []
    for num, v in fields(payload):
        if num == 2:
            step = v
        elif num == 5:
            for _, value in fields(v):
                tag, x = None, None
                for n2, v2 in fields(value):
                    if n2 == 1:
                        tag = v2.decode()
                    elif n2 == 2:
                        x = struct.unpack("<f", v2)[0]
                out.append((tag, x))
    return [(step, t, x) for t, x in out]


@pytest.fixture
def profiled_experiment(cluster, tmp_path):
    # Under the master's own storage: the only root a default cluster allows.
    storage = cluster.data_dir / "checkpoints" / f"profiler-{tmp_path.name}"
    storage.mkdir(parents=True)
    cfg = tmp_path / "profiled.yaml"
    cfg.write_text((FIXTURES / "profiled.yaml").read_text() +
                   f"checkpoint_storage:\n  type: shared_fs\n  host_path: {storage}\n"
                   "  storage_path: ckpts\n")
    exp_id = cluster.create(cfg, FIXTURES)
    return exp_id, storage / "ckpts"


def test_system_metrics_are_served_while_and_after_the_trial_runs(cluster, profiled_experiment):
    exp_id, _ = profiled_experiment
    (trial,) = wait_for(lambda: cluster.trials(exp_id), 60, "the trial")
    tid = trial["id"]
    # A follower started now sees every report and ends when the trial does.
    followed = {}
    follower = threading.Thread(target=lambda: followed.update(lines=ndjson(
        cluster, f"/api/v1/trials/{tid}/profiler/metrics?labels.name=cpu_util_simple&follow=true")))
    follower.start()
    series_follower = threading.Thread(target=lambda: followed.update(series=ndjson(
        cluster, f"/api/v1/trials/{tid}/profiler/available_series?follow=true")))
    series_follower.start()
    # Reports arrive while it runs (one every 0.4 s).
    labels = wait_for(lambda: [l for l in series(cluster, tid) if l["name"] == "cpu_util_simple"],
                      120, "cpu_util_simple in available_series")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=120)

    labels = series(cluster, tid)
    names = {l["name"] for l in labels}
    assert {"cpu_util_simple", "memory_free", "disk_iops", "disk_throughput_read",
            "disk_throughput_write", "net_throughput_sent", "net_throughput_recv"} <= names, names
    agents = {l["agentId"] for l in labels}
    assert len(agents) == 1 and "" not in agents, agents
    assert all(l["trialId"] == tid and l["metricType"] == "PROFILER_METRIC_TYPE_SYSTEM"
               for l in labels)
    (agent,) = agents

    batches = [r["batch"] for r in ndjson(
        cluster, f"/api/v1/trials/{tid}/profiler/metrics?labels.name=cpu_util_simple"
                 f"&labels.agentId={agent}&labels.metricType=PROFILER_METRIC_TYPE_SYSTEM")]
    assert len(batches) >= 2, batches
    times = []
    for b in batches:
        assert len(b["values"]) == 1 and 0 <= b["values"][0] <= 100, b
        assert b["labels"] == {"trialId": tid, "name": "cpu_util_simple", "agentId": agent,
                               "gpuUuid": "", "metricType": "PROFILER_METRIC_TYPE_SYSTEM"}
        times.append(datetime.datetime.fromisoformat(b["timestamps"][0].replace("Z", "+00:00")))
    assert times == sorted(times)

    memory = [r["batch"]["values"][0] for r in ndjson(
        cluster, f"/api/v1/trials/{tid}/profiler/metrics?labels.name=memory_free")]
    assert memory and all(v > 0 for v in memory)

    follower.join(timeout=60)
    series_follower.join(timeout=60)
    assert not follower.is_alive() and not series_follower.is_alive(), "follow streams did not end"
    assert [r["batch"] for r in followed["lines"]] == batches
    # The series list is sent again whenever it changed; the last one is the full list.
    assert followed["series"][-1]["labels"] == labels
    assert all(a != b for a, b in zip(followed["series"], followed["series"][1:]))

    # follow=true on a finished trial ends after what is there.
    followed = ndjson(cluster, f"/api/v1/trials/{tid}/profiler/metrics?labels.name=cpu_util_simple"
                               "&follow=true")
    assert len(followed) == len(batches)
    # System metrics are not training metrics.
    assert all(m["group"] == "training" for m in cluster.metrics(tid, "training"))
    assert cluster.metrics(tid, "cpu") == []

    # Bad requests name the problem; unknown trials are 404.
    status, body = cluster.request_status(
        "GET", f"/api/v1/trials/{tid}/profiler/metrics",
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 400 and "labels.name" in body["error"]["error"], body
    status, _ = cluster.request_status(
        "GET", "/api/v1/trials/999999/profiler/available_series",
        headers={"Authorization": f"Bearer {cluster.token()}"})
    assert status == 404


def test_tensorboard_event_files_reach_checkpoint_storage(cluster, profiled_experiment):
    exp_id, ckpts = profiled_experiment
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=180)
    (trial,) = cluster.trials(exp_id)
    cluster_id = cluster.request("GET", "/api/v1/master")["clusterId"]
    root = ckpts / cluster_id / "tensorboard" / "experiment" / str(exp_id) / "trial" / str(trial["id"])
    files = sorted(root.glob("events.out.tfevents.*"))
    assert files, f"no event files under {root}: {list(ckpts.rglob('*'))}"
    points = set()
    for f in files:
        records = tf_records(f)
        assert b"brain.Event:2" in records[0]
        for r in records[1:]:
            points.update(scalars(r))
    losses = {step: x for step, tag, x in points if tag == "Determined/loss"}
    assert sorted(losses) == list(range(1, 21)), losses
    assert abs(losses[4] - 0.25) < 1e-6
    assert (20, "Determined/validation_loss", 0.5) in points

    # Deleting the experiment deletes its TensorBoard files too (the checkpoint GC task).
    cluster.request("DELETE", f"/api/v1/experiments/{exp_id}")
    wait_for(lambda: not root.parent.parent.exists(), 120, "the experiment's TensorBoard files to go")


def test_config_profiling_enabled_profiles_a_legacy_pytorch_trial(cluster):
    """`profiling: {enabled: true}` in the experiment config turns the profiler on for a
    PyTorchTrial run by the legacy module:Class entrypoint (Trainer.fit(profiling_enabled))."""
    example = pathlib.Path(__file__).parents[2] / "examples" / "digits-pytorch"
    exp_id = cluster.create(example / "legacy.yaml", example, "--config", "profiling.enabled=true",
                            "--config", "resources.slots_per_trial=1")
    cluster.wait_state(exp_id, "STATE_COMPLETED", timeout=300)
    (trial,) = cluster.trials(exp_id)
    names = {l["name"] for l in series(cluster, trial["id"])}
    assert {"cpu_util_simple", "memory_free", "net_throughput_recv"} <= names, names
