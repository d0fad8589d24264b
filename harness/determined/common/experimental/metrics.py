"""Metric reports of trials, as the client SDK yields them."""

import dataclasses
import datetime
from typing import Any, Dict, List, Optional

from determined.common import util


def _metrics_of(report: Dict[str, Any], group: Optional[str]) -> Dict[str, Any]:
    body = report.get("metrics") or {}
    for key in ("validation_metrics", "avg_metrics", "validationMetrics", "avgMetrics"):
        if (group == util._LEGACY_VALIDATION) != key.startswith("validation"):
            continue
        if isinstance(body.get(key), dict):
            return dict(body[key])
    # A custom group stores its metrics under avg_metrics; fall back to whatever dict is there.
    for key in ("avg_metrics", "validation_metrics", "avgMetrics", "validationMetrics"):
        if isinstance(body.get(key), dict):
            return dict(body[key])
    return {}


@dataclasses.dataclass
class TrialMetrics:
    """One metrics report of a trial.

    Attributes:
        trial_id: the trial that reported it.
        trial_run_id: the run (restart) of the trial that reported it.
        steps_completed: the training step it was reported at.
        end_time: when it was reported.
        metrics: the reported metrics.
        group: the metric group ("training", "validation" or a custom one).
        batch_metrics: per-batch metrics, when reported.
    """

    trial_id: int
    trial_run_id: int
    steps_completed: int
    end_time: datetime.datetime
    metrics: Dict[str, Any]
    group: str
    batch_metrics: Optional[List[Dict[str, Any]]] = None

    @classmethod
    def _from_json(cls, report: Dict[str, Any], group: Optional[str] = None) -> "TrialMetrics":
        group = group or report.get("group") or ""
        end = report.get("endTime") or report.get("reportTime")
        return cls(
            trial_id=int(report.get("trialId", 0)),
            trial_run_id=int(report.get("trialRunId", 0)),
            steps_completed=int(report.get("totalBatches", report.get("stepsCompleted", 0))),
            end_time=util.parse_protobuf_timestamp(end) if end else datetime.datetime.min,
            metrics=_metrics_of(report, group),
            batch_metrics=(report.get("metrics") or {}).get("batch_metrics"),
            group=report.get("group") or group,
        )

    @property
    def total_batches(self) -> int:
        """Deprecated name of ``steps_completed``."""
        return self.steps_completed

    @total_batches.setter
    def total_batches(self, value: int) -> None:
        self.steps_completed = value


class TrainingMetrics(TrialMetrics):
    """Deprecated: a TrialMetrics of the "training" group."""

    def __init__(self, total_batches: Optional[int] = None, **kwargs: Any) -> None:
        if total_batches is not None:
            kwargs["steps_completed"] = total_batches
        kwargs["group"] = util._LEGACY_TRAINING
        super().__init__(**kwargs)

    @classmethod
    def _from_json(cls, report: Dict[str, Any], group: Optional[str] = None) -> "TrainingMetrics":
        m = TrialMetrics._from_json(report, util._LEGACY_TRAINING)
        fields = {f.name: getattr(m, f.name) for f in dataclasses.fields(TrialMetrics)}
        fields.pop("group")
        return cls(**fields)


class ValidationMetrics(TrialMetrics):
    """Deprecated: a TrialMetrics of the "validation" group."""

    def __init__(self, total_batches: Optional[int] = None, **kwargs: Any) -> None:
        if total_batches is not None:
            kwargs["steps_completed"] = total_batches
        kwargs["group"] = util._LEGACY_VALIDATION
        super().__init__(**kwargs)

    @classmethod
    def _from_json(cls, report: Dict[str, Any],
                   group: Optional[str] = None) -> "ValidationMetrics":
        m = TrialMetrics._from_json(report, util._LEGACY_VALIDATION)
        fields = {f.name: getattr(m, f.name) for f in dataclasses.fields(TrialMetrics)}
        fields.pop("group")
        return cls(**fields)
