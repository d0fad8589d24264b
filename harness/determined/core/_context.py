"""core.init() and core.Context: the composition of the Core API's component contexts."""

import logging
import os
import pathlib
import sys
import tempfile
import types
from typing import Any, Dict, Optional, Type, Union

import determined as det
from determined import tensorboard
from determined import _info
from determined.common import api, storage
from determined.core._checkpoint import CheckpointContext, DummyCheckpointContext
from determined.core._distributed import DistributedContext, DummyDistributedContext
from determined.core._metrics import _DummyMetricsContext, _MetricsContext
from determined.core._preempt import DummyPreemptContext, PreemptContext, PreemptMode
from determined.core._profiler import DummyProfilerContext, ProfilerContext
from determined.core._experimental import DummyExperimentalCoreContext, ExperimentalCoreContext
from determined.core._searcher import (
    DummySearcherContext,
    SearcherContext,
    SearcherContextMissing,
    _parse_units,
)
from determined.core._tensorboard_mode import TensorboardMode
from determined.core._train import DummyTrainContext, EarlyExitReason, TrainContext

logger = logging.getLogger("determined.core")


# alert() levels and the LogLevel names the master takes.
_ALERT_LEVELS = {
    "debug": "LOG_LEVEL_DEBUG",
    "info": "LOG_LEVEL_INFO",
    "warn": "LOG_LEVEL_WARNING",
    "error": "LOG_LEVEL_ERROR",
}


class Context:
    """A composition of the Core API components: ``.checkpoint``, ``.distributed``,
    ``.preempt``, ``.searcher``, ``.train``, ``.profiler`` (and ``.info``).

    Always create one with ``with core.init() as core_context:``.
    """

    def __init__(
        self,
        checkpoint: CheckpointContext,
        _session: Optional[api.Session] = None,
        distributed: Optional[DistributedContext] = None,
        preempt: Optional[PreemptContext] = None,
        train: Optional[TrainContext] = None,
        searcher: Optional[SearcherContext] = None,
        info: Optional[_info.ClusterInfo] = None,
        experimental: Optional[ExperimentalCoreContext] = None,
        profiler: Optional[ProfilerContext] = None,
        _metrics: Any = None,
        _tensorboard_manager: Any = None,
        _heartbeat: Any = None,
        _log_shipper: Any = None,
    ) -> None:
        self.checkpoint = checkpoint
        self.distributed = distributed or DummyDistributedContext()
        self.preempt = preempt or DummyPreemptContext(self.distributed)
        self.train = train or DummyTrainContext(self.distributed)
        self.searcher = searcher or SearcherContextMissing()
        self.info = info
        self.experimental = experimental or DummyExperimentalCoreContext()
        self.profiler = profiler or DummyProfilerContext()
        self._session = _session
        self._metrics = _metrics or _DummyMetricsContext()
        self._closed = False

    def alert(
        self,
        title: Optional[str] = None,
        description: Optional[str] = None,
        level: Optional[str] = "info",
    ) -> None:
        """Send an alert to the master, which passes it to the experiment's custom webhooks
        (``POST /api/v1/webhooks/custom``). ``level`` is one of "debug", "info", "warn",
        "error" (anything else counts as "info"). Trials on a cluster only."""
        if self._session is None:
            raise ValueError("alert() needs a Context made by core.init() on a cluster")
        if self.info is None:
            raise ValueError("alert() only works in tasks managed by the platform")
        if self.info.trial is None:
            raise ValueError("alert() only works in trial tasks")
        self._metrics.flush()
        self._session.post(
            "/api/v1/webhooks/custom",
            json_body={
                "data": {
                    "title": title or "",
                    "description": description or "",
                    "level": _ALERT_LEVELS.get(level or "", "LOG_LEVEL_INFO"),
                },
                "experimentId": self.info.trial.experiment_id,
                "trialId": self.info.trial.trial_id,
            },
        )

    def start(self) -> None:
        self.preempt.start()

    def __enter__(self) -> "Context":
        self.start()
        return self

    def close(
        self,
        exc_type: Optional[Type[BaseException]] = None,
        exc_val: Optional[BaseException] = None,
        exc_tb: Optional[types.TracebackType] = None,
        *,
        raise_errors: Optional[bool] = None,
    ) -> None:
        """Flush every pending report and stop background threads.

        Takes the exception being handled, as Determined's does: with one, errors of the
        flush are logged rather than raised over it (``raise_errors`` overrides that)."""
        if raise_errors is None:
            raise_errors = exc_val is None
        if self._closed:
            return
        self._closed = True
        try:
            self.preempt.close()
            self.profiler.close()
            getattr(self.train, "_close_tensorboard", lambda: None)()
        finally:
            self._metrics.close(raise_errors=raise_errors)
            self.distributed.close()

    def __exit__(
        self,
        typ: Optional[Type[BaseException]],
        value: Optional[BaseException],
        tb: Optional[types.TracebackType],
    ) -> None:
        invalid_hp = isinstance(value, det.InvalidHP)
        if invalid_hp:
            logger.info("InvalidHP raised: reporting an early exit and exiting with status 0")
            try:
                self.train.report_early_exit(EarlyExitReason.INVALID_HP)
            except Exception as e:  # noqa: BLE001 - still close and exit
                logger.error("could not report the InvalidHP early exit: %s", e)
        self.close(typ, value, tb)
        if invalid_hp:
            sys.exit(0)


def _tensorboard_dir(info: _info.ClusterInfo, rank: int) -> pathlib.Path:
    # Allocation ids repeat across clusters; the cluster id keeps their directories apart.
    name = "-".join(p for p in ("tensorboard", info.cluster_id, info.allocation_id, str(rank)) if p)
    return pathlib.Path(tempfile.gettempdir(), name)


def _get_storage_manager(
    checkpoint_storage: Union[str, Dict[str, Any], None], info: Optional[_info.ClusterInfo]
) -> storage.StorageManager:
    if checkpoint_storage is not None:
        if isinstance(checkpoint_storage, dict) and checkpoint_storage.get("type") == "shared_fs" and info:
            logger.warning("checkpoint_storage of type shared_fs passed to core.init(); using it")
        return storage.build(checkpoint_storage)
    if info is not None and info.trial is not None:
        config = info.trial._config.get("checkpoint_storage")
        if not config:
            logger.warning(
                "the experiment config has no checkpoint_storage; using %s", storage.shared_fs.DEFAULT_CONFIG
            )
        return storage.build(config)
    base = os.path.join(tempfile.gettempdir(), "determined-checkpoints")
    logger.info("no checkpoint_storage given; saving checkpoints under %s", base)
    return storage.build(base)


def _dummy_init(
    *,
    distributed: Optional[DistributedContext],
    checkpoint_storage: Union[str, Dict[str, Any], None],
    preempt_mode: PreemptMode,
) -> Context:
    distributed = distributed or DummyDistributedContext()
    storage_manager = _get_storage_manager(checkpoint_storage, None)
    checkpoint = DummyCheckpointContext(distributed, storage_manager)
    return Context(
        checkpoint=checkpoint,
        distributed=distributed,
        preempt=DummyPreemptContext(distributed, preempt_mode),
        train=DummyTrainContext(distributed),
        searcher=DummySearcherContext(distributed),
        profiler=DummyProfilerContext(),
    )


def init(
    *,
    distributed: Optional[DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
    tensorboard_mode: TensorboardMode = TensorboardMode.AUTO,
) -> Context:
    """Build a :class:`Context` for the Core API. Use as ``with core.init() as core_context:``.

    On a cluster everything comes from the ``DET_*`` environment; off-cluster, checkpoints go to
    ``checkpoint_storage`` (default: ``<tmp>/determined-checkpoints``), metrics are printed,
    the searcher yields one operation of length 1 and ``should_preempt()`` is always False.
    """
    preempt_mode = PreemptMode(preempt_mode)
    tensorboard_mode = TensorboardMode(tensorboard_mode)
    info = det.get_cluster_info()
    if info is None:
        return _dummy_init(
            distributed=distributed, checkpoint_storage=checkpoint_storage, preempt_mode=preempt_mode
        )

    distributed = distributed or DummyDistributedContext()
    session = api.Session(info.master_url, allocation_token=info.session_token)
    storage_manager = _get_storage_manager(checkpoint_storage, info)

    metrics: Any = _DummyMetricsContext()
    if info.task_type == "TRIAL" and info.trial is not None:
        trial = info.trial
        metrics = _MetricsContext(session, trial.trial_id, trial._trial_run_id)
        train: Optional[TrainContext] = TrainContext(
            session,
            trial.trial_id,
            trial.experiment_id,
            metrics,
            distributed,
            tensorboard_mode,
            tensorboard.TensorboardManager(
                _tensorboard_dir(info, distributed.rank),
                storage_manager,
                info.cluster_id,
                trial.experiment_id,
                trial.trial_id,
            ),
            allocation_id=info.allocation_id,
        )
        max_length = (trial._config.get("searcher") or {}).get("max_length")
        searcher: Optional[SearcherContext] = SearcherContext(
            session,
            distributed,
            trial.trial_id,
            trial._trial_run_id,
            info.allocation_id,
            _parse_units(max_length),
            config=trial._config,
            post_async=metrics.post_async,
            flush=metrics.flush,
        )
        experimental: Optional[ExperimentalCoreContext] = ExperimentalCoreContext(session, trial.trial_id)
    else:
        train = None
        searcher = None
        experimental = None

    checkpoint = CheckpointContext(
        distributed,
        storage_manager,
        session,
        info.task_id,
        info.allocation_id,
        tensorboard_mode,
        flush=metrics.flush,
    )
    preempt = PreemptContext(session, info.allocation_id, distributed, preempt_mode)
    return Context(
        checkpoint=checkpoint,
        _session=session,
        distributed=distributed,
        preempt=preempt,
        train=train,
        searcher=searcher,
        info=info,
        experimental=experimental,
        profiler=ProfilerContext(info.agent_id, metrics, distributed),
        _metrics=metrics,
    )
