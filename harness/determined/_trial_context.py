"""TrialContext: the base of the contexts trial classes receive (``PyTorchTrialContext``
and others): hyperparameters, config, ids, and the stop flag."""

import logging
import pathlib
import random
from typing import Any, Dict, Optional

from determined import core
from determined._env_context import EnvContext

logger = logging.getLogger("determined")


def _representative_hparam(spec: Any) -> Any:
    """The value a hyperparameter takes off-cluster: const value, minval, first category
    (what local test mode uses too); nested dicts recurse."""
    if not isinstance(spec, dict):
        return spec
    kind = spec.get("type")
    if kind == "const":
        return spec.get("val")
    if kind in ("int", "double", "log"):
        return spec.get("minval")
    if kind == "categorical":
        values = spec.get("vals") or [None]
        return values[0]
    return {k: _representative_hparam(v) for k, v in spec.items()}


def _env_from_core(core_context: core.Context, config: Optional[Dict[str, Any]] = None) -> EnvContext:
    info = core_context.info
    trial = info.trial if info is not None else None
    if info is not None and trial is not None:
        return EnvContext(
            master_url=info.master_url,
            master_cert_file=info.master_cert_file,
            master_cert_name=info.master_cert_name,
            experiment_config=trial._config,
            hparams=trial.hparams,
            latest_checkpoint=info.latest_checkpoint,
            steps_completed=trial._steps_completed,
            use_gpu=bool(info.gpu_uuids),
            container_gpus=list(info.gpu_uuids),
            slot_ids=list(info.slot_ids),
            debug=trial._debug,
            det_trial_id=str(trial.trial_id),
            det_experiment_id=str(trial.experiment_id),
            det_agent_id=info.agent_id,
            det_cluster_id=info.cluster_id,
            trial_seed=trial.trial_seed,
            trial_run_id=trial._trial_run_id,
            allocation_id=info.allocation_id,
            managed_training=True,
            test_mode=False,
            on_cluster=True,
        )
    config = dict(config or {})
    hparams = {k: _representative_hparam(v) for k, v in (config.get("hyperparameters") or {}).items()}
    seed = (config.get("reproducibility") or {}).get("experiment_seed")
    return EnvContext(
        master_url="",
        master_cert_file=None,
        master_cert_name=None,
        experiment_config=config,
        hparams=hparams,
        latest_checkpoint=None,
        steps_completed=0,
        use_gpu=False,
        container_gpus=[],
        slot_ids=[],
        debug=bool(config.get("debug", False)),
        det_trial_id="1",
        det_experiment_id="1",
        det_agent_id="local",
        det_cluster_id="local",
        trial_seed=int(seed) if seed is not None else random.randint(0, (1 << 31) - 1),
        trial_run_id=1,
        allocation_id="local",
        managed_training=False,
        test_mode=False,
        on_cluster=False,
    )


class TrialContext:
    """What a trial class gets from the platform: ``context.env``, ``context.distributed``,
    hyperparameters, config, ids, and the stop flag."""

    def __init__(self, core_context: core.Context, env: Optional[EnvContext] = None) -> None:
        self._core = core_context
        self.env = env if env is not None else _env_from_core(core_context)
        self.distributed = core_context.distributed
        self._stop_requested = False

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "TrialContext":
        """A context for trying a trial class outside the platform: checkpoints go to
        ``checkpoint_storage`` (or a temporary directory), hyperparameters take their const
        value / minval / first category."""
        core_context = core._dummy_init(
            distributed=None,
            checkpoint_storage=config.get("checkpoint_storage"),
            preempt_mode=core.PreemptMode.WorkersAskChief,
        )
        return cls(core_context, _env_from_core(core_context, config))

    def get_experiment_config(self) -> Dict[str, Any]:
        return self.env.experiment_config

    def get_data_config(self) -> Dict[str, Any]:
        return self.get_experiment_config().get("data") or {}

    def get_experiment_id(self) -> int:
        return int(self.env.det_experiment_id)

    def get_trial_id(self) -> int:
        return int(self.env.det_trial_id)

    def get_trial_seed(self) -> int:
        return self.env.trial_seed

    def get_hparams(self) -> Dict[str, Any]:
        return self.env.hparams

    def get_hparam(self, name: str) -> Any:
        if name not in self.env.hparams:
            raise ValueError(
                f"hyperparameter {name!r} is not in the experiment config's hyperparameters "
                f"(it has: {sorted(self.env.hparams)})"
            )
        if name == "global_batch_size":
            logger.warning(
                "use context.get_per_slot_batch_size() and context.get_global_batch_size() "
                "instead of the global_batch_size hyperparameter"
            )
        return self.env.hparams[name]

    def get_stop_requested(self) -> bool:
        return self._stop_requested

    def set_stop_requested(self, stop_requested: bool) -> None:
        """Ask the training loop to finish the current step, checkpoint and exit."""
        if not isinstance(stop_requested, bool):
            raise TypeError(f"stop_requested must be a bool, not {type(stop_requested).__name__}")
        if stop_requested:
            logger.info("trial stop requested: stopping at the end of the current step")
        self._stop_requested = stop_requested

    def get_initial_batch(self) -> int:
        return self.env.steps_completed

    def get_tensorboard_path(self) -> pathlib.Path:
        return self._core.train.get_tensorboard_path()
