"""PyTorchTrialContext: what a PyTorchTrial uses to wrap models/optimizers and step them."""

import logging
import pathlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Union

import numpy as np
import torch
import torch.distributed

from determined import core
from determined.pytorch._data import to_device as _to_device
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._reducer import MetricReducer, _SimpleReducer, _WrappedReducer

logger = logging.getLogger("determined.pytorch")


class PyTorchExperimentalContext:
    def __init__(self, parent: "PyTorchTrialContext") -> None:
        self._parent = parent
        self._auto_to_device = True
        self._data_repro_checks_disabled = False

    def use_amp(self) -> None:
        """Use torch's native AMP with a default GradScaler (autocast only on CUDA)."""
        p = self._parent
        p._use_amp = True
        p.wrap_scaler(torch.cuda.amp.GradScaler(enabled=p.device.type == "cuda"))

    def disable_auto_to_device(self) -> None:
        self._auto_to_device = False

    def disable_dataset_reproducibility_checks(self) -> None:
        self._data_repro_checks_disabled = True

    def wrap_reducer(self, reducer: Union[Callable, MetricReducer], name: Optional[str] = None,
                     for_training: bool = True, for_validation: bool = True) -> MetricReducer:
        return self._parent.wrap_reducer(reducer, name, for_training, for_validation)


class PyTorchTrialContext:
    """Runtime information and helpers for a PyTorchTrial (see the seed for each method)."""

    def __init__(
        self,
        core_context: core.Context,
        trial_seed: Optional[int],
        hparams: Optional[Dict],
        slots_per_trial: int,
        num_gpus: int,
        exp_conf: Optional[Dict[str, Any]],
        aggregation_frequency: int,
        steps_completed: int,
        managed_training: bool,
        debug_enabled: bool,
        *,
        average_aggregated_gradients: bool = True,
    ) -> None:
        self._core = core_context
        self.distributed = core_context.distributed
        self._trial_seed = trial_seed or 0
        self._hparams = dict(hparams or {})
        self._slots_per_trial = slots_per_trial
        self._num_gpus = num_gpus
        self._exp_conf = exp_conf
        self._aggregation_frequency = max(1, int(aggregation_frequency))
        self._average_aggregated_gradients = average_aggregated_gradients
        self._steps_completed = steps_completed
        self._managed_training = managed_training
        self._debug = debug_enabled
        self.experimental = PyTorchExperimentalContext(self)
        if num_gpus > 0 and torch.cuda.is_available():
            self.device = torch.device("cuda", self.distributed.local_rank)
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        self.models: List[torch.nn.Module] = []
        self.optimizers: List[torch.optim.Optimizer] = []
        self.lr_schedulers: List[LRScheduler] = []
        self._scalers: List[Any] = []
        self._reducers: List[_WrappedReducer] = []
        self._use_amp = False
        self._stop_requested = False
        self._current_batch_idx = steps_completed
        self._epoch_len: Optional[int] = None
        self._loss_ids: Dict[Any, int] = {}
        self._tb_writer: Any = None
        self._to_device_warned_types: Set[type] = set()

    # -- hyperparameters and config ------------------------------------------------------
    def get_hparams(self) -> Dict[str, Any]:
        return self._hparams

    def get_hparam(self, name: str) -> Any:
        if name not in self._hparams:
            raise ValueError(
                f"could not find name '{name}' in experiment hyperparameters; make sure the "
                "hyperparameter exists, is spelled correctly, and is not nested"
            )
        return self._hparams[name]

    def get_experiment_config(self) -> Dict[str, Any]:
        if self._exp_conf is None:
            raise ValueError("no experiment config: pass exp_conf to pytorch.init() when training off-cluster")
        return self._exp_conf

    def get_data_config(self) -> Dict[str, Any]:
        return (self._exp_conf or {}).get("data") or {}

    def get_experiment_id(self) -> int:
        info = self._core.info
        return info.trial.experiment_id if info is not None and info.trial is not None else 0

    def get_trial_id(self) -> int:
        info = self._core.info
        return info.trial.trial_id if info is not None and info.trial is not None else 0

    def get_trial_seed(self) -> int:
        return self._trial_seed

    def get_global_batch_size(self) -> int:
        if "global_batch_size" not in self._hparams:
            raise ValueError("the hyperparameter 'global_batch_size' is required to use get_global_batch_size()")
        return int(self._hparams["global_batch_size"])

    def get_per_slot_batch_size(self) -> int:
        gbs = self.get_global_batch_size()
        size = self.distributed.size
        if gbs % size:
            logger.warning("global_batch_size %d is not divisible by %d slots; rounding down", gbs, size)
        return max(1, gbs // size)

    def get_enable_tensorboard_logging(self) -> bool:
        return True

    # -- batch / epoch state -------------------------------------------------------------
    def current_train_batch(self) -> int:
        return self._current_batch_idx

    def is_epoch_start(self) -> bool:
        if not self._epoch_len:
            raise RuntimeError("is_epoch_start() is only available during training")
        return self._current_batch_idx % self._epoch_len == 0

    def is_epoch_end(self) -> bool:
        if not self._epoch_len:
            raise RuntimeError("is_epoch_end() is only available during training")
        return (self._current_batch_idx + 1) % self._epoch_len == 0

    def get_stop_requested(self) -> bool:
        return self._stop_requested

    def set_stop_requested(self, stop_requested: bool) -> None:
        if not isinstance(stop_requested, bool):
            raise AssertionError("stop_requested must be a boolean")
        if stop_requested:
            logger.info("a trial stop was requested; training stops after this step")
        self._stop_requested = stop_requested

    def get_tensorboard_path(self) -> pathlib.Path:
        return self._core.train.get_tensorboard_path()

    def get_tensorboard_writer(self) -> Any:
        if self._tb_writer is None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as e:
                raise RuntimeError(
                    "get_tensorboard_writer() needs the `tensorboard` package, which is not installed "
                    f"({e}); write files into get_tensorboard_path() instead"
                ) from None
            self._tb_writer = SummaryWriter(str(self.get_tensorboard_path()))
        return self._tb_writer

    def set_profiler(self, *args: Any, **kwargs: Any) -> None:
        logger.info("set_profiler(): torch profiler integration is not available; ignoring")

    # -- wrapping ------------------------------------------------------------------------
    def wrap_model(self, model: torch.nn.Module) -> torch.nn.Module:
        model = model.to(self.device)
        if self.distributed.size > 1 and torch.distributed.is_initialized():
            with torch.no_grad():
                for t in list(model.parameters()) + list(model.buffers()):
                    torch.distributed.broadcast(t.data, src=0)
        self.models.append(model)
        return model

    def wrap_optimizer(self, optimizer: torch.optim.Optimizer, backward_passes_per_step: int = 1,
                       fp16_compression: Optional[bool] = None,
                       average_aggregated_gradients: Optional[bool] = None) -> torch.optim.Optimizer:
        if average_aggregated_gradients is not None:
            self._average_aggregated_gradients = average_aggregated_gradients
        if backward_passes_per_step < 1:
            raise ValueError("backward_passes_per_step must be >= 1")
        self.optimizers.append(optimizer)
        return optimizer

    def wrap_lr_scheduler(self, lr_scheduler: Any, step_mode: LRScheduler.StepMode, frequency: int = 1) -> Any:
        opt = getattr(lr_scheduler, "optimizer", None)
        if opt is not None and self.optimizers and not any(opt is o for o in self.optimizers):
            raise ValueError("the LR scheduler's optimizer must be wrapped with wrap_optimizer() first")
        self.lr_schedulers.append(LRScheduler(lr_scheduler, step_mode, frequency))
        return lr_scheduler

    def wrap_scaler(self, scaler: Any) -> Any:
        self._scalers.append(scaler)
        return scaler

    def wrap_reducer(self, reducer: Union[Callable, MetricReducer], name: Optional[str] = None,
                     for_training: bool = True, for_validation: bool = True) -> MetricReducer:
        if not isinstance(reducer, MetricReducer):
            if not callable(reducer):
                raise TypeError("wrap_reducer() takes a MetricReducer or a function of a list of values")
            reducer = _SimpleReducer(reducer)
        self._reducers.append(_WrappedReducer(reducer, name, for_training, for_validation))
        return reducer

    def configure_apex_amp(self, models: Any, optimizers: Any, enabled: Optional[bool] = True,
                           opt_level: Optional[str] = "O1", **kwargs: Any) -> Any:
        try:
            import apex  # noqa: F401
            from apex import amp
        except ImportError:
            raise RuntimeError(
                "configure_apex_amp() needs NVIDIA's `apex` package, which is not installed; "
                "install apex, or use context.experimental.use_amp() / wrap_scaler() (torch's native AMP)"
            ) from None
        if not torch.cuda.is_available():
            raise RuntimeError("configure_apex_amp() needs a CUDA GPU")
        return amp.initialize(models, optimizers, enabled=enabled, opt_level=opt_level, **kwargs)

    # -- training steps ------------------------------------------------------------------
    def to_device(self, data: Any) -> Any:
        """Move a batch to this context's device (see pytorch.to_device)."""
        return _to_device(data, self.device, self._to_device_warned_types)

    def backward(self, loss: torch.Tensor, gradient: Optional[torch.Tensor] = None,
                 retain_graph: bool = False, create_graph: bool = False) -> None:
        if self._use_amp and self._scalers:
            loss = self._scalers[0].scale(loss)
        loss.backward(gradient=gradient, retain_graph=retain_graph, create_graph=create_graph)

    def _should_communicate_and_update(self) -> bool:
        return (self._current_batch_idx + 1) % self._aggregation_frequency == 0

    def step_optimizer(self, optimizer: torch.optim.Optimizer, clip_grads: Optional[Callable[[Iterator], None]] = None,
                       auto_zero_grads: bool = True, scaler: Optional[Any] = None) -> None:
        for o in self.optimizers:
            if o is optimizer:
                break
        else:
            raise ValueError("step_optimizer() takes an optimizer returned by wrap_optimizer()")
        if self._aggregation_frequency > 1 and not auto_zero_grads:
            raise AssertionError("auto_zero_grads must be True when aggregation_frequency > 1")
        if not self._should_communicate_and_update():
            return
        if scaler is None and self._use_amp and self._scalers:
            scaler = self._scalers[0]
        distributed = self.distributed.size > 1 and torch.distributed.is_initialized()
        # The gradient list is only built when something needs it (not in the common
        # single-process case: that would be a per-batch cost).
        if distributed or self._aggregation_frequency > 1 or clip_grads is not None:
            self._prepare_gradients(optimizer, distributed, clip_grads, scaler)
        if scaler is not None:
            scaler.step(optimizer)
        else:
            optimizer.step()
        if auto_zero_grads:
            optimizer.zero_grad()
        for s in self.lr_schedulers:
            s._after_optimizer_step(optimizer)

    def _prepare_gradients(self, optimizer: torch.optim.Optimizer, distributed: bool,
                           clip_grads: Optional[Callable[[Iterator], None]], scaler: Optional[Any]) -> None:
        """Average gradients across ranks and aggregated batches, then clip them."""
        params = [p for g in optimizer.param_groups for p in g["params"] if p.grad is not None]
        if distributed and params:
            grads = [p.grad for p in params]
            flat = torch.cat([g.reshape(-1) for g in grads])
            torch.distributed.all_reduce(flat)
            flat /= self.distributed.size
            off = 0
            for g in grads:
                n = g.numel()
                g.copy_(flat[off : off + n].view_as(g))
                off += n
        if self._aggregation_frequency > 1 and self._average_aggregated_gradients:
            for p in params:
                p.grad /= self._aggregation_frequency
        if clip_grads is not None:
            if scaler is not None and self._use_amp:
                scaler.unscale_(optimizer)
            clip_grads(params)
