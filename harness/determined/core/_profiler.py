"""ProfilerContext: system profiling switch (collection is not implemented yet; on/off are
accepted and remembered so training code written for Determined runs unchanged)."""

import logging
from typing import Any, Optional

from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")


class ProfilerContext:
    def __init__(self, agent_id: str = "", metrics: Any = None, distributed: Optional[DistributedContext] = None):
        self._agent_id = agent_id
        self._metrics = metrics
        self._dist = distributed
        self._on = False
        self.sampling_interval = 1
        self.samples_per_report = 10

    @property
    def is_on(self) -> bool:
        return self._on

    def on(self, sampling_interval: int = 1, samples_per_report: int = 10) -> None:
        """Turn system profiling on (idempotent). Samples are not collected yet."""
        if self._on:
            return
        if sampling_interval < 1 or samples_per_report < 1:
            raise ValueError("sampling_interval and samples_per_report must be at least 1")
        self.sampling_interval = sampling_interval
        self.samples_per_report = samples_per_report
        self._on = True
        logger.debug("profiler on (system metrics collection is not implemented yet)")

    def off(self) -> None:
        """Turn system profiling off (idempotent)."""
        self._on = False

    def close(self) -> None:
        self.off()


class DummyProfilerContext(ProfilerContext):
    pass
