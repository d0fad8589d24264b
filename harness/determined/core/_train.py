"""TrainContext: metrics, status, run metadata and early exits of a trial."""

import enum
import logging
import pathlib
import tempfile
from typing import Any, Callable, Dict, List, Optional

from determined import tensorboard
from determined.common import api
from determined.core._distributed import DistributedContext
from determined.core._metrics import _DummyMetricsContext, _MetricsContext
from determined.core._tensorboard_mode import TensorboardMode

logger = logging.getLogger("determined.core")


class EarlyExitReason(enum.Enum):
    INVALID_HP = "EXITED_REASON_INVALID_HP"
    # This is generally only used internally by Determined.
    USER_REQUESTED_STOP = "EXITED_REASON_USER_REQUESTED_STOP"


def _check_group(group: str) -> None:
    if not isinstance(group, str) or not group:
        raise ValueError(f"metrics group must be a non-empty string, not {group!r}")
    if "." in group:
        raise ValueError(f"metrics group {group!r} must not contain '.'")


def _check_metrics(steps_completed: int, metrics: Dict[str, Any]) -> None:
    if not isinstance(metrics, dict):
        raise TypeError(f"metrics must be a dict, not {type(metrics).__name__}")
    if isinstance(steps_completed, bool) or not isinstance(steps_completed, int):
        try:
            if int(steps_completed) != steps_completed:
                raise ValueError
        except (TypeError, ValueError):
            raise TypeError(f"steps_completed must be an integer, not {steps_completed!r}") from None


def _check_progress(progress: Any) -> float:
    if isinstance(progress, bool) or not isinstance(progress, (int, float)):
        try:
            progress = float(progress)  # numpy/torch scalars
        except (TypeError, ValueError):
            raise TypeError(f"progress must be a number between 0 and 1, not {progress!r}") from None
    if not 0 <= progress <= 1:  # also rejects NaN
        raise ValueError(f"progress must be between 0 and 1, not {progress}")
    return float(progress)


class TrainContext:
    """Reports training and validation metrics to the master during trial tasks."""

    def __init__(
        self,
        session: api.Session,
        trial_id: int,
        exp_id: int,
        metrics: _MetricsContext,
        distributed: DistributedContext,
        tensorboard_mode: TensorboardMode = TensorboardMode.AUTO,
        tensorboard_manager: Any = None,
        tbd_writer: Any = None,
        *,
        allocation_id: Optional[str] = None,
    ) -> None:
        self._session = session
        self._trial_id = trial_id
        self._exp_id = exp_id
        self._metrics = metrics
        self._dist = distributed
        self._tensorboard_mode = tensorboard_mode
        self._allocation_id = allocation_id
        self._tensorboard_manager = tensorboard_manager
        self._tbd_writer = tbd_writer

    def set_status(self, status: str) -> None:
        """Report a short user-facing string describing what the trial is doing."""
        self._metrics.post_async(f"/api/v1/trials/{self._trial_id}/runner/metadata", {"state": str(status)})

    def set_metadata(self, metadata: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        """Overwrite the metadata of the current run; returns the metadata that was set."""
        if not isinstance(metadata, dict):
            raise TypeError("metadata must be a dict")
        self._metrics.flush()
        resp = self._session.post(
            f"/api/v1/runs/{self._trial_id}/metadata",
            json_body={"runId": self._trial_id, "metadata": metadata},
        )
        return (resp or {}).get("metadata")

    def get_metadata(self) -> Optional[Dict[str, Any]]:
        """Get the metadata of the current run."""
        self._metrics.flush()
        resp = self._session.get(f"/api/v1/runs/{self._trial_id}/metadata")
        return (resp or {}).get("metadata")

    def report_training_metrics(
        self,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        """Report training metrics (and optionally per-batch metrics) to the master."""
        _check_metrics(steps_completed, metrics)
        self._metrics.report("training", int(steps_completed), metrics, batch_metrics)
        self._write_tensorboard(int(steps_completed), metrics, batch_metrics, validation=False)

    def report_validation_metrics(self, steps_completed: int, metrics: Dict[str, Any]) -> None:
        """Report validation metrics to the master."""
        _check_metrics(steps_completed, metrics)
        self._metrics.report("validation", int(steps_completed), metrics)
        self._write_tensorboard(int(steps_completed), metrics, None, validation=True)

    def report_metrics(self, group: str, steps_completed: int, metrics: Dict[str, Any]) -> None:
        """Report metrics of any group (a name without '.') to the master."""
        _check_group(group)
        _check_metrics(steps_completed, metrics)
        self._metrics.report(group, int(steps_completed), metrics)

    def report_early_exit(self, reason: EarlyExitReason) -> None:
        """Report an early exit reason (e.g. EarlyExitReason.INVALID_HP) to the master."""
        reason = EarlyExitReason(reason)
        self._metrics.flush()
        logger.info("report_early_exit(%s)", reason.value)
        try:
            self._session.post(
                f"/api/v1/trials/{self._trial_id}/early_exit", json_body={"reason": reason.value}
            )
        except api.APIException as e:
            # The master answers 400 when an early exit was already reported.
            if e.status != 400:
                raise
            logger.warning("early exit not recorded: %s", e)

    def report_progress(self, progress: float) -> None:
        """Report how far training is, as a fraction in [0, 1] (e.g. ``batch / max_batches``);
        the master shows it as the trial's and experiment's progress."""
        value = _check_progress(progress)
        logger.debug("report_progress(%s)", value)
        # Queued behind earlier reports so the order the master sees is the order of calls.
        self._metrics.post_async(
            f"/api/v1/trials/{self._trial_id}/progress", {"progress": value, "isRaw": True}
        )

    def get_experiment_best_validation(self) -> Optional[float]:
        """The best searcher-metric validation of the whole experiment, or None if none yet."""
        self._metrics.flush()
        try:
            resp = self._session.get(
                f"/api/v1/experiments/{self._exp_id}/searcher/best_searcher_validation_metric"
            )
        except api.NotFoundError:
            return None
        if not resp or resp.get("metric") is None:
            return None
        return float(resp["metric"])

    def get_tensorboard_path(self) -> pathlib.Path:
        """The directory to write TensorBoard files into (synced to checkpoint storage)."""
        manager = getattr(self, "_tensorboard_manager", None)
        if manager is not None:
            manager.base_path.mkdir(parents=True, exist_ok=True)
            return pathlib.Path(manager.base_path)
        name = f"tensorboard-{self._allocation_id}-{self._dist.rank}" if self._allocation_id else "tensorboard"
        path = pathlib.Path(tempfile.gettempdir()) / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def upload_tensorboard_files(
        self,
        selector: Callable[[pathlib.Path], bool] = lambda _: True,
        mangler: Callable[[pathlib.Path, int], pathlib.Path] = lambda p, __: p,
    ) -> None:
        """Upload the files of get_tensorboard_path() (those ``selector`` accepts, renamed by
        ``mangler(relative_path, rank)``) to checkpoint storage. MANUAL mode only: in AUTO
        mode they are uploaded with every metrics report."""
        if self._tensorboard_mode == TensorboardMode.AUTO:
            raise RuntimeError("upload_tensorboard_files can only be used in MANUAL mode")
        manager = getattr(self, "_tensorboard_manager", None)
        if manager is None:
            logger.debug("upload_tensorboard_files(): no checkpoint storage here, nothing uploaded")
            return
        manager.sync(selector, mangler, self._dist.rank, force=True)

    def _write_tensorboard(
        self,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]],
        validation: bool,
    ) -> None:
        """TensorboardMode.AUTO: mirror the report into an event file and sync the directory."""
        manager = getattr(self, "_tensorboard_manager", None)
        if self._tensorboard_mode != TensorboardMode.AUTO or manager is None:
            return
        try:
            if self._tbd_writer is None:
                self._tbd_writer = tensorboard.BatchMetricWriter(
                    tensorboard.EventFileWriter(self.get_tensorboard_path())
                )
            if validation:
                self._tbd_writer.on_validation_step_end(steps_completed, metrics)
            else:
                self._tbd_writer.on_train_step_end(steps_completed, metrics, batch_metrics)
            manager.sync()
        except Exception as e:  # noqa: BLE001 - TensorBoard files never fail training
            logger.warning("could not write or upload TensorBoard files: %s", e)

    def _close_tensorboard(self) -> None:
        """Final upload when the Context closes (AUTO mode)."""
        manager = getattr(self, "_tensorboard_manager", None)
        writer, self._tbd_writer = getattr(self, "_tbd_writer", None), None
        if writer is not None:
            writer.close()
        if self._tensorboard_mode == TensorboardMode.AUTO and manager is not None:
            try:
                manager.sync(force=True)
            except Exception as e:  # noqa: BLE001
                logger.warning("could not upload TensorBoard files: %s", e)


class DummyTrainContext(TrainContext):
    """Off-cluster TrainContext: metrics go to stdout, nothing is sent anywhere."""

    def __init__(self, distributed: Optional[DistributedContext] = None) -> None:
        from determined.core._distributed import DummyDistributedContext

        self._dist = distributed or DummyDistributedContext()
        self._metrics = _DummyMetricsContext()  # type: ignore[assignment]
        self._allocation_id = None
        self._tensorboard_mode = TensorboardMode.MANUAL
        self._metadata: Dict[str, Any] = {}

    def set_status(self, status: str) -> None:
        logger.info("status: %s", status)

    def set_metadata(self, metadata: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        self._metadata = dict(metadata)
        return dict(self._metadata)

    def get_metadata(self) -> Optional[Dict[str, Any]]:
        return dict(self._metadata)

    def report_early_exit(self, reason: EarlyExitReason) -> None:
        logger.info("report_early_exit(%s)", EarlyExitReason(reason).value)

    def report_progress(self, progress: float) -> None:
        logger.info("report_progress with progress=%s", _check_progress(progress))

    def get_experiment_best_validation(self) -> Optional[float]:
        return None
