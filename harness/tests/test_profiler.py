"""The system metrics profiler: sampling with a fake psutil and clock, aggregation, nvidia-smi
parsing, and what ProfilerContext reports to a (fake) master."""

import collections
import threading
import time

import pytest

from determined import core
from determined.core import _profiler

DiskIO = collections.namedtuple("DiskIO", "read_count write_count read_bytes write_bytes")
NetIO = collections.namedtuple("NetIO", "bytes_sent bytes_recv packets_sent packets_recv")
Usage = collections.namedtuple("Usage", "total used free percent")
VMem = collections.namedtuple("VMem", "total available")


class FakePsutil:
    """psutil's calls the profiler makes, with values the test sets."""

    def __init__(self) -> None:
        self.cpu = [0.0]
        self.available = 1000
        self.disk = DiskIO(0, 0, 0, 0)
        self.net = NetIO(0, 0, 0, 0)
        self.mounted = {"/": 40.0}

    def cpu_percent(self) -> float:
        return self.cpu.pop(0) if len(self.cpu) > 1 else self.cpu[0]

    def virtual_memory(self) -> VMem:
        return VMem(4000, self.available)

    def disk_io_counters(self) -> DiskIO:
        return self.disk

    def net_io_counters(self) -> NetIO:
        return self.net

    def disk_usage(self, path: str) -> Usage:
        if path not in self.mounted:
            raise FileNotFoundError(path)
        return Usage(100, 0, 0, self.mounted[path])


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_average_is_per_key_and_one_level_deep():
    got = _profiler._average([{"a": 1, "g": {"x": 2}}, {"a": 3, "g": {"x": 4, "y": 10}}])
    assert got == {"a": 2.0, "g": {"x": 3.0, "y": 10.0}}
    assert _profiler._average([]) == {}


def test_sampler_rates_and_averages_with_fake_psutil_and_clock():
    ps, clock = FakePsutil(), FakeClock()
    ps.cpu = [99.0, 20.0, 40.0]  # the first value only primes cpu_percent
    groups = [_profiler._CPU(ps), _profiler._Memory(ps), _profiler._Disk(ps, clock),
              _profiler._Network(ps, clock)]
    reports = []
    sampler = _profiler._Sampler(groups, lambda g, m: reports.append((g, m)), "agent-7")

    clock.now += 2
    ps.disk = DiskIO(10, 30, 2000, 4000)
    ps.net = NetIO(600, 200, 0, 0)
    ps.available = 500
    sampler.sample()
    clock.now += 1
    ps.disk = DiskIO(10, 30, 2000, 4000)  # nothing happened in this second
    ps.net = NetIO(600, 200, 0, 0)
    ps.available = 700
    sampler.sample()
    assert sampler.samples == 2
    sampler.report()
    assert sampler.samples == 0

    by_group = dict(reports)
    assert set(by_group) == {"cpu", "memory", "disk", "network"}
    assert by_group["cpu"] == {"agent-7": {"cpu_util_simple": 30.0}}
    assert by_group["memory"] == {"agent-7": {"memory_free": 600.0}}
    # First interval: 40 ops, 2000/4000 bytes over 2 s; second: 0.
    assert by_group["disk"] == {"agent-7": {
        "disk_iops": 10.0, "disk_throughput_read": 500.0, "disk_throughput_write": 1000.0,
        "/": {"disk_util": 40.0},  # only mounted paths
    }}
    assert by_group["network"] == {"agent-7": {"net_throughput_sent": 150.0, "net_throughput_recv": 50.0}}

    # Aggregates start over after a report.
    reports.clear()
    sampler.report()
    assert reports == []


def test_a_failing_source_does_not_stop_the_others():
    class Broken(_profiler._Group):
        group = "gpu"

        def _read(self):
            raise RuntimeError("driver gone")

    ps = FakePsutil()
    ps.cpu = [0.0, 5.0]
    reports = []
    sampler = _profiler._Sampler([Broken(), _profiler._CPU(ps)], lambda g, m: reports.append(g), "a")
    sampler.sample()
    sampler.report()
    assert reports == ["cpu"]


def test_nvidia_smi_output_is_parsed_per_gpu_in_bytes():
    text = "GPU-aaa, 37, 1024\nGPU-bbb, [N/A], 5\n\nGPU-ccc, 0, 0\n"
    assert _profiler._parse_nvidia_smi(text) == {
        "GPU-aaa": {"gpu_util": 37.0, "gpu_free_memory": 1024.0 * 1024 * 1024},
        "GPU-ccc": {"gpu_util": 0.0, "gpu_free_memory": 0.0},
    }
    outputs = iter(["GPU-aaa, 10, 1", "GPU-aaa, 10, 1", "GPU-aaa, 30, 3"])  # first: the probe
    gpu = _profiler._GPU(query=lambda: next(outputs))
    gpu.sample()
    gpu.sample()
    assert gpu.aggregate() == {"GPU-aaa": {"gpu_util": 20.0, "gpu_free_memory": 2.0 * 1024 * 1024}}


def test_without_nvidia_smi_there_is_no_gpu_group():
    gpu = _profiler._GPU(query=lambda: None)
    gpu.sample()
    assert gpu.aggregate() == {}


def _fake_groups():
    ps = FakePsutil()
    ps.cpu = [0.0, 12.0]
    return [_profiler._CPU(ps), _profiler._Memory(ps)]


def _wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_profiler_on_cluster_reports_system_groups_to_the_master(on_cluster):
    m = on_cluster
    with core.init() as ctx:
        ctx.profiler._groups = _fake_groups
        ctx.profiler.on(sampling_interval=0.1, samples_per_report=2)
        assert ctx.profiler.is_on
        assert _wait_for(lambda: any(b["group"] == "cpu" for b in m.metrics))
        ctx.profiler.off()
        assert not ctx.profiler.is_on
    cpu = [b for b in m.metrics if b["group"] == "cpu"]
    body = cpu[0]["metrics"]
    assert body["trialId"] == 7 and body["trialRunId"] == 1
    assert "stepsCompleted" not in body  # system metrics have no step
    assert body["reportTime"].endswith("Z")
    assert body["metrics"]["avgMetrics"] == {"agent-1": {"cpu_util_simple": 12.0}}
    assert any(b["group"] == "memory" for b in m.metrics)
    assert all(r.path == "/api/v1/trials/7/metrics" for r in m.requests_to(r"POST .*/metrics"))


def test_off_reports_what_was_sampled_since_the_last_report(on_cluster):
    m = on_cluster
    sampled = threading.Event()

    class Counting(_profiler._Group):
        group = "memory"

        def _read(self):
            sampled.set()
            return {"memory_free": 5}

    with core.init() as ctx:
        ctx.profiler._groups = lambda: [Counting()]
        ctx.profiler.on(sampling_interval=0.1, samples_per_report=1000)
        assert sampled.wait(10)  # a sample was taken; the report comes from off()
        ctx.profiler.off()
        ctx._metrics.flush()
        assert [b["group"] for b in m.metrics] == ["memory"]
        assert m.metrics[0]["metrics"]["metrics"]["avgMetrics"] == {"agent-1": {"memory_free": 5.0}}


def test_context_close_stops_the_profiler(on_cluster):
    ctx = core.init()
    ctx.profiler._groups = _fake_groups
    ctx.profiler.on(sampling_interval=0.1, samples_per_report=1)
    collector = ctx.profiler._collector
    assert collector is not None and collector.is_alive()
    ctx.close()
    assert not collector.is_alive()
    assert not ctx.profiler.is_on


def test_only_local_rank_zero_samples(on_cluster):
    class Rank1:
        local_rank = 1

    p = _profiler.ProfilerContext("agent-1", object(), Rank1(), _groups=_fake_groups)
    p.on()
    assert p.is_on and p._collector is None
    p.off()


@pytest.mark.parametrize("kwargs", [
    {"sampling_interval": 0.01}, {"sampling_interval": "1"}, {"samples_per_report": 0},
    {"samples_per_report": 1.5},
])
def test_on_rejects_bad_arguments(kwargs):
    p = _profiler.ProfilerContext("a", None, None, _groups=_fake_groups)
    with pytest.raises(ValueError):
        p.on(**kwargs)
    assert not p.is_on


def test_real_psutil_samples_every_group():
    psutil = pytest.importorskip("psutil")
    clock = time.monotonic
    groups = [_profiler._CPU(psutil), _profiler._Memory(psutil), _profiler._Disk(psutil, clock),
              _profiler._Network(psutil, clock)]
    reports = {}
    sampler = _profiler._Sampler(groups, lambda g, m: reports.update({g: m}), "a")
    sampler.sample()
    sampler.report()
    assert {"cpu", "memory", "network"} <= set(reports)
    assert reports["memory"]["a"]["memory_free"] > 0
    assert 0 <= reports["cpu"]["a"]["cpu_util_simple"] <= 100
