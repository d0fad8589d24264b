"""PyTorchTrialContext: what a PyTorchTrial uses to wrap models/optimizers and step them."""

import logging
import pathlib
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Union

import torch
import torch.distributed

from determined import core
from determined.pytorch._data import to_device as _to_device
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._reducer import MetricReducer, _SimpleReducer, _WrappedReducer

logger = logging.getLogger("determined.pytorch")


def _fp16_to_float(out: Any, warned: Set[type]) -> Any:
    if isinstance(out, torch.Tensor):
        return out.float() if out.dtype == torch.float16 else out
    if isinstance(out, dict):
        return {k: _fp16_to_float(v, warned) for k, v in out.items()}
    if isinstance(out, (list, tuple)) and not hasattr(out, "_fields"):
        return type(out)(_fp16_to_float(v, warned) for v in out)
    if out is not None and type(out) not in warned:
        warned.add(type(out))
        logger.warning("autocast_forward_pass(): left a model output of type %s as it is (float16 "
                       "tensors inside it stay float16)", type(out).__name__)
    return out


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
        enable_tensorboard_logging: bool = True,
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
        self._device_is_cpu = self.device.type == "cpu"
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
        self._torch_profiler: Any = None  # set_profiler()
        self._to_device_warned_types: Set[type] = set()
        self._enable_tensorboard_logging = enable_tensorboard_logging

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

    def set_enable_tensorboard_logging(self, enable_tensorboard_logging: bool) -> None:
        """Whether the Trainer handles TensorBoard files automatically (init()'s
        enable_tensorboard_logging sets it first)."""
        if not isinstance(enable_tensorboard_logging, bool):
            raise AssertionError(
                f"enable_tensorboard_logging must be a bool, not {enable_tensorboard_logging!r}"
            )
        self._enable_tensorboard_logging = enable_tensorboard_logging

    def get_enable_tensorboard_logging(self) -> bool:
        return self._enable_tensorboard_logging

    # -- batch / epoch state -------------------------------------------------------------
    def current_train_batch(self) -> int:
        """Index of the batch being trained (batches completed before it), across restarts."""
        return self._current_batch_idx

    def current_train_epoch(self) -> int:
        """Index of the epoch being trained (0-based)."""
        if not self._epoch_len:
            raise RuntimeError("current_train_epoch() is only available once training has started")
        return self._current_batch_idx // self._epoch_len

    def get_initial_batch(self) -> int:
        """Batches completed before this run started (from the checkpoint it resumes)."""
        return self._steps_completed

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
            except ImportError:
                # No tensorboard package (Debian has none): our writer of scalar event files.
                from determined.tensorboard import SummaryWriter  # type: ignore[assignment]
            self._tb_writer = SummaryWriter(str(self.get_tensorboard_path()))
        return self._tb_writer

    def set_profiler(self, *args: Any, **kwargs: Any) -> None:
        """Profile training with ``torch.profiler.profile(*args, **kwargs)``, its traces written
        into get_tensorboard_path() (``on_trace_ready`` is set to TensorBoard's trace handler;
        traces are uploaded with the other TensorBoard files). The Trainer enters it for the
        training loop and steps it after every batch."""
        import torch.profiler

        kwargs["on_trace_ready"] = torch.profiler.tensorboard_trace_handler(str(self.get_tensorboard_path()))
        self._torch_profiler = torch.profiler.profile(*args, **kwargs)

    # -- wrapping ------------------------------------------------------------------------
    def autocast_forward_pass(self, to_wrap: torch.nn.Module) -> torch.nn.Module:
        """Run ``to_wrap``'s forward pass under torch's autocast and convert float16 outputs
        back to float32, so the loss is computed in full precision. Autocast is enabled on CUDA
        devices only (torch.cuda.amp's behaviour: on CPU the forward pass runs unchanged). The
        module itself is returned (same parameters, state_dict and type), with its forward
        replaced on the instance."""
        if not isinstance(to_wrap, torch.nn.Module):
            raise TypeError(f"autocast_forward_pass() takes a torch.nn.Module, not {type(to_wrap).__name__}")
        device_type = self.device.type
        enabled = device_type == "cuda" and torch.cuda.is_available()
        class_forward = type(to_wrap).forward
        warned: Set[type] = set()

        def forward(module: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            with torch.autocast(device_type="cuda" if enabled else "cpu", enabled=enabled):
                out = class_forward(module, *args, **kwargs)
            return _fp16_to_float(out, warned) if enabled else out

        # A bound method (not a closure over to_wrap) so that copy.deepcopy rebinds it.
        to_wrap.forward = types.MethodType(forward, to_wrap)  # type: ignore[assignment]
        return to_wrap

    def wrap_model(self, model: torch.nn.Module) -> torch.nn.Module:
        model = model.to(self.device)
        if self._use_amp and self.device.type == "cuda":
            model = self.autocast_forward_pass(model)
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

    def reset_reducers(self) -> None:
        """Reset every reducer registered with wrap_reducer()."""
        for wrapped in self._reducers:
            wrapped.reducer.reset()

    def run_cross_slot_reduction(self, reducables: List[_WrappedReducer], gathered: List[Any]) -> Dict[str, Any]:
        """Final metrics of ``reducables`` from ``gathered``: one list per slot, holding each
        reducer's per_slot_reduce() value in the order of ``reducables``."""
        metrics: Dict[str, Any] = {}
        per_reducer = list(zip(*gathered)) if gathered else []
        for wrapped, per_slot in zip(reducables, per_reducer):
            metrics.update(wrapped.finish(list(per_slot)))
        return metrics

    def reduce_metrics(self, for_training: bool) -> Dict[str, Any]:
        """Reduce the reducers registered for training (or validation) across all slots: one
        allgather carries every reducer's per-slot value."""
        reducables = [w for w in self._reducers if (w.for_training if for_training else w.for_validation)]
        if not reducables:
            return {}
        mine = [w.reducer.per_slot_reduce() for w in reducables]
        gathered = self.distributed.allgather(mine) if self.distributed.size > 1 else [mine]
        return self.run_cross_slot_reduction(reducables, gathered)

    def configure_apex_amp(
        self,
        models: Any,
        optimizers: Any,
        enabled: Optional[bool] = True,
        opt_level: Optional[str] = "O1",
        cast_model_type: Optional[torch.dtype] = None,
        patch_torch_functions: Optional[bool] = None,
        keep_batchnorm_fp32: Optional[Union[bool, str]] = None,
        master_weights: Optional[bool] = None,
        loss_scale: Optional[Union[float, str]] = None,
        cast_model_outputs: Optional[torch.dtype] = None,
        num_losses: Optional[int] = 1,
        verbosity: Optional[int] = 1,
        min_loss_scale: Optional[float] = None,
        max_loss_scale: Optional[float] = 2.0**24,
    ) -> Any:
        """NVIDIA apex's amp.initialize() on the wrapped models and optimizers. Needs the apex
        package and a CUDA GPU; torch's native AMP (experimental.use_amp(), wrap_scaler()) needs
        neither."""
        try:
            from apex import amp
        except ImportError:
            raise RuntimeError(
                "configure_apex_amp() needs NVIDIA's `apex` package, which is not installed; "
                "install apex, or use context.experimental.use_amp() / wrap_scaler() (torch's native AMP)"
            ) from None
        if not torch.cuda.is_available():
            raise RuntimeError("configure_apex_amp() needs a CUDA GPU")
        return amp.initialize(
            models, optimizers, enabled=enabled, opt_level=opt_level, cast_model_type=cast_model_type,
            patch_torch_functions=patch_torch_functions, keep_batchnorm_fp32=keep_batchnorm_fp32,
            master_weights=master_weights, loss_scale=loss_scale, cast_model_outputs=cast_model_outputs,
            num_losses=num_losses, verbosity=verbosity, min_loss_scale=min_loss_scale,
            max_loss_scale=max_loss_scale,
        )

    # -- training steps ------------------------------------------------------------------
    def to_device(self, data: Any) -> Any:
        """Move a batch to this context's device (see pytorch.to_device)."""
        if self._device_is_cpu and type(data) in (tuple, list):
            # The default collate's batch on CPU: tensors already there need no copy (to() would
            # return them as they are), so skip the walk; it runs for every batch.
            for v in data:
                if type(v) is not torch.Tensor or not v.is_cpu:
                    break
            else:
                return data
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
