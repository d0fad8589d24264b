"""ExperimentConfig: an experiment config dict with typed accessors for the fields the
harness reads (defaults as the master fills them in)."""

from typing import Any, Dict, Optional, Tuple


class ExperimentConfig(dict):
    def _section(self, name: str) -> Dict[str, Any]:
        value = self.get(name)
        return value if isinstance(value, dict) else {}

    def debug_enabled(self) -> bool:
        return bool(self.get("debug", False))

    def scheduling_unit(self) -> int:
        return int(self.get("scheduling_unit", 100))

    def native_parallel_enabled(self) -> bool:
        return bool(self._section("resources").get("native_parallel", False))

    def average_training_metrics_enabled(self) -> bool:
        return bool(self._section("optimizations").get("average_training_metrics", True))

    def slots_per_trial(self) -> int:
        return int(self._section("resources").get("slots_per_trial", 1))

    def experiment_seed(self) -> int:
        return int(self._section("reproducibility").get("experiment_seed", 0))

    def profiling_enabled(self) -> bool:
        return bool(self._section("profiling").get("enabled", False))

    def profiling_interval(self) -> Tuple[int, Optional[int]]:
        if not self.profiling_enabled():
            return 0, 0
        profiling = self._section("profiling")
        return int(profiling.get("begin_on_batch", 0)), profiling.get("end_after_batch")

    def profiling_sync_timings(self) -> bool:
        return bool(self._section("profiling").get("sync_timings", True))

    def get_records_per_epoch(self) -> Optional[int]:
        value = self.get("records_per_epoch")
        return int(value) if value else None

    def get_min_validation_period(self) -> Dict[str, Any]:
        return self.get("min_validation_period") or {}

    def get_min_checkpoint_period(self) -> Dict[str, Any]:
        return self.get("min_checkpoint_period") or {}

    def get_searcher_metric(self) -> str:
        return str(self._section("searcher").get("metric", ""))
