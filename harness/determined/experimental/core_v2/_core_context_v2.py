"""The core.Context of core_v2: the ordinary one on a cluster, an unmanaged one elsewhere."""

import logging
import os
import types
from typing import Any, Dict, Optional, Type, Union

import determined as det
from determined import core
from determined.common import storage
from determined.experimental.core_v2._client import _Client
from determined.experimental.core_v2._heartbeat import _UnmanagedTrialHeartbeat
from determined.experimental.core_v2._log_shipper import _UnmanagedTrialLogShipper

logger = logging.getLogger("determined.core")


def default_checkpoint_storage() -> str:
    """Where an unmanaged trial keeps checkpoints when told nothing: the user data directory
    (``$XDG_DATA_HOME/determined/checkpoints``, default ``~/.local/share/...``), as Determined."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "determined", "checkpoints")


class _UnmanagedContext(core.Context):
    """A core.Context whose trial state (heartbeat, COMPLETED/ERROR) and output are reported by
    this process, since no agent runs it."""

    def __init__(
        self,
        *,
        heartbeat: Optional[_UnmanagedTrialHeartbeat],
        log_shipper: Optional[_UnmanagedTrialLogShipper],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._unmanaged_heartbeat = heartbeat
        self._unmanaged_log_shipper = log_shipper
        self._unmanaged_closed = False

    def start(self) -> None:
        super().start()
        if self._unmanaged_log_shipper is not None:
            self._unmanaged_log_shipper.start()
        if self._unmanaged_heartbeat is not None:
            self._unmanaged_heartbeat.start()

    def close(
        self,
        exc_type: Optional[Type[BaseException]] = None,
        exc_val: Optional[BaseException] = None,
        exc_tb: Optional[types.TracebackType] = None,
        *,
        raise_errors: Optional[bool] = None,
    ) -> None:
        if self._unmanaged_closed:
            return
        self._unmanaged_closed = True
        failure: Optional[BaseException] = None
        try:
            # Metrics and checkpoints reach the master before the trial is said to be done.
            super().close(exc_type, exc_val, exc_tb, raise_errors=raise_errors)
        except BaseException as e:
            failure = e
            raise
        finally:
            try:
                if self._unmanaged_heartbeat is not None:
                    if failure is not None and exc_val is None:
                        exc_type, exc_val = type(failure), failure
                    self._unmanaged_heartbeat.close(exc_type, exc_val, exc_tb)
            finally:
                if self._unmanaged_log_shipper is not None:
                    self._unmanaged_log_shipper.close(exc_type, exc_val, exc_tb)


def _make_v2_context(
    *,
    distributed: Optional[core.DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    preempt_mode: core.PreemptMode = core.PreemptMode.WorkersAskChief,
    tensorboard_mode: core.TensorboardMode = core.TensorboardMode.AUTO,
    unmanaged_info: Optional[det.ClusterInfo] = None,
    client: Optional[_Client] = None,
) -> core.Context:
    if unmanaged_info is None:
        if det.get_cluster_info() is None:
            raise ValueError(
                "Since the code is running outside of a determined-managed experiment, "
                "you must provide the `unmanaged_info` object."
            )
        # On the cluster: the ordinary Core API context, from the DET_* environment.
        return core.init(
            distributed=distributed,
            checkpoint_storage=checkpoint_storage,
            preempt_mode=preempt_mode,
            tensorboard_mode=tensorboard_mode,
        )

    if client is None:
        raise ValueError("an unmanaged context needs the client its experiment was created with")
    info = unmanaged_info
    trial = info.trial
    if info.task_type != "TRIAL" or trial is None:
        raise NotImplementedError("unmanaged mode is only supported for trials")
    session = client._session
    distributed = distributed or core.DummyDistributedContext()
    if checkpoint_storage is None:
        checkpoint_storage = trial._config.get("checkpoint_storage") or default_checkpoint_storage()
    storage_manager = storage.build(checkpoint_storage)

    metrics = core._MetricsContext(session, trial.trial_id, trial._trial_run_id)
    # TensorBoard files need an uploader the master knows of; detached runs have none.
    train = core.TrainContext(
        session,
        trial.trial_id,
        trial.experiment_id,
        metrics,
        distributed,
        core.TensorboardMode.MANUAL,
    )
    checkpoint = core.CheckpointContext(
        distributed,
        storage_manager,
        session,
        info.task_id,
        None,  # no allocation: the script runs outside the cluster
        core.TensorboardMode.MANUAL,
        flush=metrics.flush,
    )
    heartbeat = None
    if distributed.rank == 0:
        heartbeat = _UnmanagedTrialHeartbeat(session=session, trial_id=trial.trial_id)
    log_shipper = _UnmanagedTrialLogShipper(
        session=session,
        trial_id=trial.trial_id,
        task_id=info.task_id,
        rank=distributed.rank if distributed.size > 1 else None,
    )
    return _UnmanagedContext(
        heartbeat=heartbeat,
        log_shipper=log_shipper,
        checkpoint=checkpoint,
        _session=session,
        distributed=distributed,
        # Detached runs are not preempted (as in Determined).
        preempt=core.DummyPreemptContext(distributed, preempt_mode),
        train=train,
        searcher=None,
        info=info,
        _metrics=metrics,
    )
