"""ProfilerContext: system metrics profiling.

When on, a background thread samples the machine every ``sampling_interval`` seconds (CPU,
memory, disk and network from psutil; GPU utilisation and free memory from ``nvidia-smi`` when
it is present), averages every ``samples_per_report`` samples, and reports the averages to the
master as trial metrics of the groups ``cpu``, ``memory``, ``disk``, ``network`` and ``gpu``,
each as ``{agent_id: {name: value}}`` (GPU metrics by GPU uuid, disk usage by mount path), as
Determined does. The master serves them at ``/api/v1/trials/{id}/profiler/...``.

Only the first process of each node (local rank 0) samples: the metrics are per machine.
"""

import datetime
import logging
import shutil
import subprocess
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")

try:
    import psutil as _psutil
except ImportError:  # python3-psutil is a dependency; without it only GPU metrics are sampled
    _psutil = None

# Paths whose disk usage is reported: the root and Determined's shared_fs mount in containers.
_DISK_PATHS = ["/", "/determined_shared_fs"]
_NVIDIA_SMI_QUERY = ["--query-gpu=uuid,utilization.gpu,memory.free", "--format=csv,noheader,nounits"]


def _average(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Averages samples key by key, one level of nesting deep ({label: {name: value}})."""
    sums: Dict[str, Any] = {}
    counts: Dict[Any, int] = {}
    for sample in samples:
        for key, value in sample.items():
            if isinstance(value, dict):
                inner = sums.setdefault(key, {})
                for name, v in value.items():
                    inner[name] = inner.get(name, 0.0) + float(v)
                    counts[(key, name)] = counts.get((key, name), 0) + 1
            else:
                sums[key] = sums.get(key, 0.0) + float(value)
                counts[key] = counts.get(key, 0) + 1
    out: Dict[str, Any] = {}
    for key, value in sums.items():
        if isinstance(value, dict):
            out[key] = {name: v / counts[(key, name)] for name, v in value.items()}
        else:
            out[key] = value / counts[key]
    return out


class _Group:
    """One group of metrics: samples are appended by sample() and averaged by aggregate()."""

    group = ""

    def __init__(self) -> None:
        self.samples: List[Dict[str, Any]] = []

    def sample(self) -> None:
        metrics = self._read()
        if metrics:
            self.samples.append(metrics)

    def _read(self) -> Dict[str, Any]:
        raise NotImplementedError

    def aggregate(self) -> Dict[str, Any]:
        out = _average(self.samples)
        self.samples = []
        return out


class _CPU(_Group):
    group = "cpu"

    def __init__(self, ps: Any) -> None:
        super().__init__()
        self._ps = ps
        ps.cpu_percent()  # the first call only starts the measurement

    def _read(self) -> Dict[str, Any]:
        return {"cpu_util_simple": self._ps.cpu_percent()}


class _Memory(_Group):
    group = "memory"

    def __init__(self, ps: Any) -> None:
        super().__init__()
        self._ps = ps

    def _read(self) -> Dict[str, Any]:
        return {"memory_free": self._ps.virtual_memory().available}


class _Rates(_Group):
    """Throughputs: counter differences divided by the time between two samples."""

    def __init__(self, read_counters: Callable[[], Any], clock: Callable[[], float]) -> None:
        super().__init__()
        self._read_counters = read_counters
        self._clock = clock
        self._last_time = clock()
        self._last = read_counters()

    def _rates(self) -> Optional[Dict[str, float]]:
        now, counters = self._clock(), self._read_counters()
        elapsed = now - self._last_time
        last, self._last, self._last_time = self._last, counters, now
        if counters is None or last is None or elapsed <= 0:
            return None
        return {
            field: (getattr(counters, field) - getattr(last, field)) / elapsed
            for field in counters._fields
        }


class _Disk(_Rates):
    group = "disk"

    def __init__(self, ps: Any, clock: Callable[[], float]) -> None:
        super().__init__(ps.disk_io_counters, clock)
        self._ps = ps
        self._paths = []
        for path in _DISK_PATHS:
            try:
                ps.disk_usage(path)
                self._paths.append(path)
            except Exception:  # noqa: BLE001 - not mounted here
                pass

    def _read(self) -> Dict[str, Any]:
        rates = self._rates()
        if rates is None:
            return {}
        metrics: Dict[str, Any] = {
            "disk_iops": rates["read_count"] + rates["write_count"],
            "disk_throughput_read": rates["read_bytes"],
            "disk_throughput_write": rates["write_bytes"],
        }
        for path in self._paths:
            metrics[path] = {"disk_util": self._ps.disk_usage(path).percent}
        return metrics


class _Network(_Rates):
    group = "network"

    def __init__(self, ps: Any, clock: Callable[[], float]) -> None:
        super().__init__(ps.net_io_counters, clock)

    def _read(self) -> Dict[str, Any]:
        rates = self._rates()
        if rates is None:
            return {}
        return {
            "net_throughput_sent": rates["bytes_sent"],
            "net_throughput_recv": rates["bytes_recv"],
        }


def _nvidia_smi() -> Optional[str]:
    """The output of nvidia-smi's GPU query, or None without nvidia-smi or GPUs."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        return subprocess.run(
            [exe] + _NVIDIA_SMI_QUERY, capture_output=True, text=True, timeout=10, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as e:
        logger.info("nvidia-smi failed (%s); GPU metrics will not be collected", e)
        return None


def _parse_nvidia_smi(text: str) -> Dict[str, Dict[str, float]]:
    """'uuid, util %, free MiB' lines -> {uuid: {gpu_util, gpu_free_memory (bytes)}}."""
    out: Dict[str, Dict[str, float]] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0]:
            continue
        try:
            out[parts[0]] = {
                "gpu_util": float(parts[1]),
                "gpu_free_memory": float(parts[2]) * 1024 * 1024,
            }
        except ValueError:  # "[N/A]" on some devices
            continue
    return out


class _GPU(_Group):
    group = "gpu"

    def __init__(self, query: Callable[[], Optional[str]] = _nvidia_smi) -> None:
        super().__init__()
        self._query = query
        first = query()
        self._enabled = first is not None and bool(_parse_nvidia_smi(first))
        if not self._enabled:
            logger.info("no GPUs found by nvidia-smi; GPU metrics will not be collected")

    def _read(self) -> Dict[str, Any]:
        if not self._enabled:
            return {}
        text = self._query()
        return _parse_nvidia_smi(text) if text else {}


def _now_rfc3339() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class _Sampler:
    """Samples every group and reports averages; driven by _Collector's thread (or tests)."""

    def __init__(
        self,
        groups: List[_Group],
        report: Callable[[str, Dict[str, Any]], None],
        agent_id: str,
    ) -> None:
        self._groups = groups
        self._report = report
        self._agent_id = agent_id
        self.samples = 0

    def sample(self) -> None:
        for g in self._groups:
            try:
                g.sample()
            except Exception as e:  # noqa: BLE001 - one failing source must not stop the others
                logger.debug("sampling %s failed: %s", g.group, e)
        self.samples += 1

    def report(self) -> None:
        for g in self._groups:
            metrics = g.aggregate()
            if metrics:
                self._report(g.group, {self._agent_id: metrics})
        self.samples = 0


def _default_groups(clock: Callable[[], float]) -> List[_Group]:
    groups: List[_Group] = [_GPU()]
    if _psutil is None:
        logger.warning("psutil is not installed: CPU, memory, disk and network are not profiled")
        return groups
    return groups + [_CPU(_psutil), _Memory(_psutil), _Disk(_psutil, clock), _Network(_psutil, clock)]


class _Collector(threading.Thread):
    def __init__(
        self, make_sampler: Callable[[], _Sampler], sampling_interval: float, samples_per_report: int
    ) -> None:
        super().__init__(daemon=True, name="determined-profiler")
        self._make_sampler = make_sampler
        self._interval = sampling_interval
        self._per_report = samples_per_report
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            # Built here: probing nvidia-smi must not hold up the caller of on().
            sampler = self._make_sampler()
            next_time = time.monotonic()
            while not self._stop_event.is_set():
                sampler.sample()
                if sampler.samples >= self._per_report:
                    sampler.report()
                next_time += self._interval
                self._stop_event.wait(max(0.0, next_time - time.monotonic()))
            # Report what was sampled since the last report, so short runs are profiled too.
            if sampler.samples:
                sampler.report()
        except Exception as e:  # noqa: BLE001 - profiling never fails training
            logger.warning("system metrics profiling stopped: %s", e)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


class ProfilerContext:
    """Gives access to system profiling: ``core_context.profiler.on()`` starts collecting
    system metrics in the background and reporting them to the master; ``off()`` stops (both
    are idempotent). ``core.Context`` turns it off when it closes."""

    def __init__(
        self,
        agent_id: str = "",
        metrics: Any = None,
        distributed: Optional[DistributedContext] = None,
        *,
        _groups: Optional[Callable[[], List[_Group]]] = None,
    ) -> None:
        self._agent_id = agent_id
        self._metrics = metrics
        self._dist = distributed
        self._groups = _groups or (lambda: _default_groups(time.monotonic))
        self._collector: Optional[_Collector] = None
        self._on = False
        self.sampling_interval: float = 1
        self.samples_per_report = 10

    @property
    def is_on(self) -> bool:
        return self._on

    def on(self, sampling_interval: float = 1, samples_per_report: int = 10) -> None:
        """Turn system profiling on: sample every ``sampling_interval`` seconds and report the
        average of every ``samples_per_report`` samples. Idempotent."""
        if self._on:
            return
        if isinstance(sampling_interval, bool) or not isinstance(sampling_interval, (int, float)) \
                or sampling_interval < 0.1:
            raise ValueError(f"sampling_interval must be a number of seconds >= 0.1, got {sampling_interval!r}")
        if isinstance(samples_per_report, bool) or not isinstance(samples_per_report, int) \
                or samples_per_report < 1:
            raise ValueError(f"samples_per_report must be an int >= 1, got {samples_per_report!r}")
        self.sampling_interval = sampling_interval
        self.samples_per_report = samples_per_report
        self._on = True
        # Machine-level metrics: one sampler per node.
        if self._dist is not None and self._dist.local_rank != 0:
            return
        if self._metrics is None or getattr(self._metrics, "_trial_id", None) is None:
            logger.info("profiler on: system metrics are only collected in trials on a cluster")
            return
        logger.info("starting system metrics profiling (every %ss)", sampling_interval)
        agent_id = self._agent_id or "unknown-agent"
        self._collector = _Collector(
            lambda: _Sampler(self._groups(), self._post, agent_id), sampling_interval, samples_per_report
        )
        self._collector.start()

    def off(self) -> None:
        """Turn system profiling off (idempotent); what was sampled so far is reported."""
        if not self._on:
            return
        self._on = False
        collector, self._collector = self._collector, None
        if collector is not None:
            logger.info("stopping system metrics profiling")
            collector.stop()

    def close(self) -> None:
        self.off()

    _close = close

    def _post(self, group: str, metrics: Dict[str, Any]) -> None:
        m = self._metrics
        body = {
            "group": group,
            "metrics": {
                "trialId": m._trial_id,
                "trialRunId": m._run_id,
                "reportTime": _now_rfc3339(),
                "metrics": {"avgMetrics": metrics},
            },
        }
        m.post_async(f"/api/v1/trials/{m._trial_id}/metrics", body)


class DummyProfilerContext(ProfilerContext):
    """Off-cluster: on()/off() are accepted and nothing is collected."""

    def __init__(self) -> None:
        super().__init__()

    def on(self, sampling_interval: float = 1, samples_per_report: int = 10) -> None:
        self._on = True

    def off(self) -> None:
        self._on = False
