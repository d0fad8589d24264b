"""Trainer: the training loop around a PyTorchTrial (validation, checkpoints, metrics,
searcher operations and preemption), and pytorch.init()."""

import contextlib
import inspect
import json
import logging
import os
import pickle
import random
import shutil
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed
import torch.utils.data

import determined as det
from determined import core
from determined.pytorch._callback import PyTorchCallback
from determined.pytorch._data import DataLoader
from determined.pytorch._reducer import Reducer, _reduce_metrics
from determined.pytorch._trial import Batch, Epoch, PyTorchTrial, TrainUnit, _overrides
from determined.pytorch._trial_context import PyTorchTrialContext

logger = logging.getLogger("determined.pytorch")

STATE_FILE = "state_dict.pth"
TRIAL_STATE_FILE = "trial_state.pkl"
LOAD_DATA_FILE = "load_data.json"


def _to_python(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        if v.numel() == 1:
            return v.item()  # item() needs no detach(); this runs for every batch's metrics
        return v.detach().cpu().tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.item() if v.size == 1 else v.tolist()
    return v


def _metrics_dict(out: Any, what: str) -> Dict[str, Any]:
    if type(out) is dict:  # the common case, without the checks below
        return {k: _to_python(v) for k, v in out.items()}
    if isinstance(out, torch.Tensor):
        out = {"loss": out}
    if not isinstance(out, dict):
        raise TypeError(f"{what} must return a dict of metrics (or a loss tensor), not {type(out).__name__}")
    return {k: _to_python(v) for k, v in out.items()}


def _rng_state() -> Dict[str, Any]:
    state = {
        "cpu_rng_state": torch.random.get_rng_state(),
        "np_rng_state": np.random.get_state(),
        "random_rng_state": random.getstate(),
    }
    if torch.cuda.is_available():
        state["gpu_rng_state"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: Dict[str, Any]) -> None:
    torch.random.set_rng_state(state["cpu_rng_state"])
    np.random.set_state(state["np_rng_state"])
    random.setstate(state["random_rng_state"])
    if "gpu_rng_state" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["gpu_rng_state"])


def _set_random_seeds(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.random.manual_seed(seed)


def _period_from_config(value: Any) -> Optional[TrainUnit]:
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (k, v), = value.items()
    if k == "batches":
        return Batch(int(v)) if int(v) > 0 else None
    if k == "epochs":
        return Epoch(int(v)) if int(v) > 0 else None
    if k == "records":
        return _Records(int(v)) if int(v) > 0 else None
    return None


class _Records(TrainUnit):
    """min_*_period / max_length in records (converted with the global batch size)."""


class _TrainBoundary:
    def __init__(self) -> None:
        pass


class Trainer:
    """Runs a PyTorchTrial: ``Trainer(trial, context).fit(...)``."""

    def __init__(self, trial: PyTorchTrial, context: PyTorchTrialContext) -> None:
        self._trial = trial
        self._context = context
        self._core = context._core
        self._dist = context.distributed
        self._info = det.get_cluster_info()
        self._profiler_conf: Dict[str, Any] = {}

    def configure_profiler(self, sync_timings: bool, enabled: bool, begin_on_batch: int,
                           end_after_batch: int) -> None:
        self._profiler_conf = dict(sync_timings=sync_timings, enabled=enabled,
                                   begin_on_batch=begin_on_batch, end_after_batch=end_after_batch)
        if enabled:
            self._core.profiler.on()

    def fit(
        self,
        checkpoint_period: Optional[TrainUnit] = None,
        validation_period: Optional[TrainUnit] = None,
        max_length: Optional[TrainUnit] = None,
        reporting_period: TrainUnit = Batch(100),
        checkpoint_policy: str = "best",
        latest_checkpoint: Optional[str] = None,
        step_zero_validation: bool = False,
        test_mode: bool = False,
        profiling_enabled: bool = False,
    ) -> None:
        if checkpoint_policy not in ("best", "all", "none"):
            raise ValueError(f"checkpoint_policy must be 'best', 'all' or 'none', not {checkpoint_policy!r}")
        for name, v in (("checkpoint_period", checkpoint_period), ("validation_period", validation_period),
                        ("max_length", max_length), ("reporting_period", reporting_period)):
            if v is not None and not isinstance(v, TrainUnit):
                raise TypeError(f"{name} must be a pytorch.Batch or pytorch.Epoch, not {v!r}")
        managed = self._context._managed_training
        conf = self._context._exp_conf or {}
        if managed:
            if max_length is not None and not test_mode:
                logger.warning("max_length is ignored on a cluster: the searcher's max_length decides")
            if validation_period is None:
                validation_period = _period_from_config(conf.get("min_validation_period"))
            if checkpoint_period is None:
                checkpoint_period = _period_from_config(conf.get("min_checkpoint_period"))
            if reporting_period == Batch(100) and conf.get("scheduling_unit"):
                reporting_period = Batch(int(conf["scheduling_unit"]))
            if latest_checkpoint is None and self._info is not None:
                latest_checkpoint = self._info.latest_checkpoint
        elif max_length is None and not test_mode:
            raise ValueError("max_length is required when training off-cluster, e.g. fit(max_length=pytorch.Epoch(1))")
        if test_mode:
            max_length = Batch(1)
            checkpoint_policy = "none"
        if isinstance(max_length, TrainUnit) and not isinstance(max_length.value, int):
            raise TypeError("max_length must be a Batch or Epoch of an int")
        loop = _TrainLoop(self, checkpoint_period, validation_period, max_length, reporting_period,
                          checkpoint_policy, latest_checkpoint, step_zero_validation, test_mode, managed)
        if not self._context.get_enable_tensorboard_logging():
            # Reported metrics are then not mirrored into TensorBoard files nor uploaded.
            self._core.train._tensorboard_mode = core.TensorboardMode.MANUAL
        # System metrics profiling: the core context's profiler is on for the duration of fit().
        profiler = self._core.profiler
        started_profiler = bool(profiling_enabled) and not getattr(profiler, "is_on", False)
        if started_profiler:
            if not managed:
                logger.warning("profiling_enabled: system metrics are only collected on a cluster")
            profiler.on()
        torch_profiler = self._context._torch_profiler
        try:
            if torch_profiler is not None:
                with torch_profiler:
                    loop.run()
            else:
                loop.run()
        finally:
            if started_profiler:
                profiler.off()


class _ShutdownRequested(Exception):
    pass


class _TrainLoop:
    def __init__(self, trainer: Trainer, checkpoint_period: Optional[TrainUnit],
                 validation_period: Optional[TrainUnit], max_length: Optional[TrainUnit],
                 reporting_period: TrainUnit, checkpoint_policy: str, latest_checkpoint: Optional[str],
                 step_zero_validation: bool, test_mode: bool, managed: bool) -> None:
        self.trial = trainer._trial
        self.ctx = trainer._context
        self.core = trainer._core
        self.dist = trainer._dist
        self.info = trainer._info
        self.checkpoint_period = checkpoint_period
        self.validation_period = validation_period
        self.max_length = max_length
        self.reporting_period = reporting_period
        self.checkpoint_policy = checkpoint_policy
        self.latest_checkpoint = latest_checkpoint
        self.step_zero_validation = step_zero_validation
        self.test_mode = test_mode
        self.managed = managed and not test_mode
        self.is_chief = self.dist.rank == 0
        self.steps = 0
        self.last_val_step: Optional[int] = None
        self.last_ckpt_step: Optional[int] = None
        self.best_metric: Optional[float] = None
        self.window: List[Dict[str, Any]] = []
        self.window_start = 0
        conf = self.ctx._exp_conf or {}
        searcher = conf.get("searcher") or {}
        self.searcher_metric_name = searcher.get("metric")
        self.smaller_is_better = bool(searcher.get("smaller_is_better", True))
        self.records_per_epoch = int(conf.get("records_per_epoch") or 0)
        self.callbacks: Dict[str, PyTorchCallback] = {}
        # Models are put in train mode before the first batch and again after anything other
        # than train_batch() ran (validation, callbacks), not before every batch: Module.train()
        # walks every submodule, a real cost per batch on small models.
        self.need_train_mode = True

    # -- helpers -------------------------------------------------------------------------
    def _cb(self, hook: str, *args: Any) -> None:
        if not self.callbacks:
            return
        for cb in self.callbacks.values():
            getattr(cb, hook)(*args)
        # A callback may have switched a model to eval mode: set train mode before the next batch.
        self.need_train_mode = True

    def _global_batch_size(self) -> Optional[int]:
        try:
            return self.ctx.get_global_batch_size()
        except ValueError:
            return None

    def _to_batches(self, unit: TrainUnit, n: int) -> int:
        if isinstance(unit, Batch):
            return n
        if isinstance(unit, Epoch):
            return n * self.epoch_len
        if isinstance(unit, _Records):
            gbs = self._global_batch_size()
            if not gbs:
                raise ValueError("lengths in records need the hyperparameter global_batch_size")
            return n // gbs
        raise TypeError(f"unknown TrainUnit {unit!r}")

    def _op_batches(self, length: int) -> int:
        units = self.core.searcher.get_configured_units() if self.managed else None
        if units == core.Unit.EPOCHS:
            return length * self.epoch_len
        if units == core.Unit.RECORDS:
            gbs = self._global_batch_size()
            if not gbs:
                raise ValueError("searcher lengths in records need the hyperparameter global_batch_size")
            return length // gbs
        return length

    def _op_progress(self, batches: int) -> float:
        units = self.core.searcher.get_configured_units() if self.managed else None
        if units == core.Unit.EPOCHS:
            return batches / self.epoch_len
        if units == core.Unit.RECORDS:
            return batches * (self._global_batch_size() or 1)
        return batches

    def _period_hit(self, period: Optional[TrainUnit], epoch_end: bool) -> bool:
        if period is None:
            return False
        if isinstance(period, Batch):
            return period.should_stop(self.steps)
        if isinstance(period, Epoch):
            return epoch_end and period.should_stop(self.steps // self.epoch_len)
        if isinstance(period, _Records):
            gbs = self._global_batch_size() or 1
            return (self.steps * gbs) // period.value > ((self.steps - 1) * gbs) // period.value
        return False

    # -- data ----------------------------------------------------------------------------
    def _build_loaders(self) -> None:
        checks_off = self.ctx.experimental._data_repro_checks_disabled
        seed = self.ctx._trial_seed
        train = self.trial.build_training_data_loader()
        self.train_plain: Optional[torch.utils.data.DataLoader] = None
        if isinstance(train, DataLoader):
            self.epoch_len = train._batch_sampler(seed, False, 0, self.dist.size, self.dist.rank, True).batches_per_epoch()
            self.train_dl: Any = train
        elif isinstance(train, torch.utils.data.DataLoader) and checks_off:
            self.train_plain = train
            self.epoch_len = len(train)
            self.train_dl = train
        else:
            raise RuntimeError(
                "build_training_data_loader() must return a determined.pytorch.DataLoader, not "
                f"{type(train).__module__}.{type(train).__name__} (call "
                "context.experimental.disable_dataset_reproducibility_checks() to return any torch DataLoader)"
            )
        if self.records_per_epoch and self._global_batch_size():
            self.epoch_len = max(1, self.records_per_epoch // self._global_batch_size())
        if self.epoch_len <= 0:
            raise ValueError("the training data loader is empty")
        self.ctx._epoch_len = self.epoch_len
        val = self.trial.build_validation_data_loader()
        if not isinstance(val, DataLoader) and not (isinstance(val, torch.utils.data.DataLoader) and checks_off):
            raise RuntimeError(
                "build_validation_data_loader() must return a determined.pytorch.DataLoader, not "
                f"{type(val).__module__}.{type(val).__name__} (call "
                "context.experimental.disable_dataset_reproducibility_checks() to return any torch DataLoader)"
            )
        self.val_dl = val

    def _train_batches(self) -> Iterator[Any]:
        if self.train_plain is None:
            loader = self.train_dl.get_data_loader(repeat=True, skip=self.steps, num_replicas=self.dist.size,
                                                   rank=self.dist.rank, seed=self.ctx._trial_seed)
            yield from loader
            raise RuntimeError("the training data loader ran out of data")
        skip = self.steps % max(1, len(self.train_plain))
        while True:
            n = 0
            for i, b in enumerate(self.train_plain):
                if skip and i < skip:
                    continue
                n += 1
                yield b
            skip = 0
            if n == 0:
                raise RuntimeError("the training data loader is empty")

    def _auto_to_device(self, batch: Any) -> Any:
        if self.ctx.experimental._auto_to_device:
            return self.ctx.to_device(batch)
        return batch

    # -- checkpoints ---------------------------------------------------------------------
    def _state(self) -> Dict[str, Any]:
        state: Dict[str, Any] = {
            "models_state_dict": [m.state_dict() for m in self.ctx.models],
            "optimizers_state_dict": [o.state_dict() for o in self.ctx.optimizers],
            "lr_schedulers_state_dict": [s.state_dict() for s in self.ctx.lr_schedulers],
            "callbacks": {k: cb.state_dict() for k, cb in self.callbacks.items()},
            "rng_state": _rng_state(),
        }
        if self.ctx._scalers:
            state["scalers_state_dict"] = [s.state_dict() for s in self.ctx._scalers]
        return state

    def _trial_state(self) -> Dict[str, Any]:
        return {
            "trial_id": self.ctx.get_trial_id(),
            "batches_trained": self.steps,
            "epochs_trained": self.steps // self.epoch_len,
            "last_val_step": self.last_val_step,
            "best_metric": self.best_metric,
            "trial_seed": self.ctx._trial_seed,
            "world_size": self.dist.size,
        }

    def _checkpoint(self) -> str:
        state = self._state()
        rng_states = self.dist.gather(state["rng_state"])
        # Training metrics not yet reported (a preemption mid reporting period) travel with the
        # checkpoint, so the resumed run reports exactly what an uninterrupted one would.
        pending = self.dist.gather(list(self.window))
        self._cb("on_checkpoint_save_start", state)
        uuid: Optional[str] = None
        if self.is_chief:
            state["rng_states"] = rng_states
            metadata = {
                "steps_completed": self.steps,
                "framework": f"torch-{torch.__version__}",
                "format": "pickle",
                "determined_version": det.__version__,
            }
            with self.core.checkpoint.store_path(metadata) as (path, uuid):
                torch.save(state, str(path / STATE_FILE))
                with open(path / TRIAL_STATE_FILE, "wb") as f:
                    trial_state = self._trial_state()
                    trial_state["pending_training_windows"] = pending
                    pickle.dump(trial_state, f)
                _write_load_data(path, self.trial, self.ctx)
                self._cb("on_checkpoint_write_end", str(path))
                self._cb("on_checkpoint_end", str(path))
        uuid = self.dist.broadcast(uuid)
        self._cb("on_checkpoint_upload_end", uuid)
        self.last_ckpt_step = self.steps
        return uuid

    def _read_checkpoint(self, uuid: str) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        with self.core.checkpoint.restore_path(uuid) as path:
            state = torch.load(str(path / STATE_FILE), map_location=self.ctx.device)
            trial_state: Dict[str, Any] = {}
            if (path / TRIAL_STATE_FILE).exists():
                with open(path / TRIAL_STATE_FILE, "rb") as f:
                    trial_state = pickle.load(f)
            else:
                md = path / "metadata.json"
                if md.exists():
                    trial_state = {"batches_trained": json.loads(md.read_text()).get("steps_completed", 0)}
        return state, trial_state

    def _apply_checkpoint(self, state: Dict[str, Any], trial_state: Dict[str, Any], warm_start: bool) -> None:
        self._cb("on_checkpoint_load_start", state)
        _load_state(self.ctx, state, strict=True)
        for name, cb_state in (state.get("callbacks") or {}).items():
            if name in self.callbacks:
                self.callbacks[name].load_state_dict(cb_state)
        if warm_start:
            return
        rng = state.get("rng_states")
        if isinstance(rng, list) and len(rng) == self.dist.size:
            _set_rng_state(rng[self.dist.rank])
        elif "rng_state" in state:
            _set_rng_state(state["rng_state"])
        self.steps = int(trial_state.get("batches_trained", 0))
        pending = trial_state.get("pending_training_windows")
        if not warm_start and isinstance(pending, list) and len(pending) == self.dist.size:
            self.window = list(pending[self.dist.rank])
        self.last_val_step = trial_state.get("last_val_step")
        self.best_metric = trial_state.get("best_metric")
        self.last_ckpt_step = self.steps

    # -- training ------------------------------------------------------------------------
    def _report_training(self) -> None:
        if not self.window:
            return
        window = self.window
        self.window = []
        batch_metrics: List[Dict[str, Any]]
        if self.dist.size == 1:
            batch_metrics = window  # this loop built the dicts; nothing else holds them
        else:
            per_rank = self.dist.allgather(window)
            batch_metrics = []
            for i in range(len(per_rank[0])):
                rows = [r[i] for r in per_rank if i < len(r)]
                batch_metrics.append(_reduce_metrics([rows], Reducer.AVG) if len(rows) > 1 else dict(rows[0]))
        avg = _reduce_metrics([batch_metrics], Reducer.AVG)
        avg.update(self._finish_reducers("for_training"))
        if self.is_chief:
            self.core.train.report_training_metrics(self.steps, avg, batch_metrics=batch_metrics)
        self._cb("on_training_workload_end", avg, batch_metrics)
        self._reset_reducers("for_training")

    def _reset_reducers(self, which: str) -> None:
        for r in self.ctx._reducers:
            if getattr(r, which):
                r.reducer.reset()

    def _finish_reducers(self, which: str) -> Dict[str, Any]:
        return self.ctx.reduce_metrics(for_training=which == "for_training")

    def _train_one(self, batches: Iterator[Any]) -> bool:
        """Train one batch; returns whether it ended an epoch. Runs once per batch: keep it lean."""
        ctx = self.ctx
        steps = self.steps
        epoch_idx, batch_in_epoch = divmod(steps, self.epoch_len)
        if batch_in_epoch == 0:
            self._cb("on_training_epoch_start", epoch_idx)
        batch = next(batches)
        if ctx.experimental._auto_to_device:
            batch = ctx.to_device(batch)
        ctx._current_batch_idx = steps
        if self.need_train_mode:
            for m in ctx.models:
                m.train()
            self.need_train_mode = False
        out = self.trial.train_batch(batch, epoch_idx, steps)
        if ctx._use_amp and ctx._scalers and ctx._should_communicate_and_update():
            ctx._scalers[0].update()
        self.window.append(_metrics_dict(out, "train_batch()"))
        steps += 1
        self.steps = steps
        schedulers = ctx.lr_schedulers
        for s in schedulers:
            s._after_batch(steps)
        prof = ctx._torch_profiler
        if prof is not None:
            prof.step()
        epoch_end = batch_in_epoch + 1 == self.epoch_len
        if epoch_end:
            self._cb("on_training_epoch_end", epoch_idx)
            for s in schedulers:
                s._after_epoch(epoch_idx + 1)
        return epoch_end

    # -- validation ----------------------------------------------------------------------
    def _validate(self) -> Dict[str, Any]:
        self._cb("on_validation_start")
        self._cb("on_validation_epoch_start")
        for m in self.ctx.models:
            m.eval()
        self._reset_reducers("for_validation")
        outputs: List[Any] = []
        full = _overrides(self.trial, "evaluate_full_dataset") and not _overrides(self.trial, "evaluate_batch")
        with torch.no_grad():
            if full:
                metrics: Optional[Dict[str, Any]] = None
                if self.is_chief:
                    loader = self.val_dl.get_data_loader(seed=self.ctx._trial_seed) if isinstance(self.val_dl, DataLoader) else self.val_dl
                    metrics = _metrics_dict(self.trial.evaluate_full_dataset(loader), "evaluate_full_dataset()")
                metrics = self.dist.broadcast(metrics)
                assert metrics is not None
            else:
                if isinstance(self.val_dl, DataLoader):
                    loader = self.val_dl.get_data_loader(num_replicas=self.dist.size, rank=self.dist.rank,
                                                         seed=self.ctx._trial_seed, pad=False)
                else:
                    loader = self.val_dl
                takes_idx = len(inspect.signature(self.trial.evaluate_batch).parameters) >= 2
                batch_metrics: List[Dict[str, Any]] = []
                for idx, batch in enumerate(loader):
                    batch = self._auto_to_device(batch)
                    out = self.trial.evaluate_batch(batch, idx) if takes_idx else self.trial.evaluate_batch(batch)
                    outputs.append(out)
                    batch_metrics.append(_metrics_dict(out, "evaluate_batch()"))
                    if self.test_mode:
                        break
                per_slot = self.dist.allgather(batch_metrics) if self.dist.size > 1 else [batch_metrics]
                metrics = _reduce_metrics(per_slot, self.trial.evaluation_reducer())
            metrics.update(self._finish_reducers("for_validation"))
        for m in self.ctx.models:
            m.train()
        self._cb("on_validation_epoch_end", outputs)
        if self.is_chief:
            self.core.train.report_validation_metrics(self.steps, metrics)
        self._cb("on_validation_end", metrics)
        self.last_val_step = self.steps
        return metrics

    def _searcher_metric(self, metrics: Dict[str, Any]) -> Optional[float]:
        name = self.searcher_metric_name
        if not name:
            return None
        if name not in metrics:
            raise RuntimeError(
                f"the searcher metric {name!r} is not among the validation metrics {sorted(metrics)}"
            )
        return float(metrics[name])

    def _is_best(self, value: Optional[float]) -> bool:
        if value is None:
            return False
        best = self.best_metric
        if self.managed and self.is_chief:
            try:
                exp_best = self.core.train.get_experiment_best_validation()
            except Exception:  # noqa: BLE001
                exp_best = None
            if exp_best is not None:
                best = exp_best if best is None else (min(best, exp_best) if self.smaller_is_better else max(best, exp_best))
        is_best = best is None or (value <= best if self.smaller_is_better else value >= best)
        if self.best_metric is None or (value < self.best_metric if self.smaller_is_better else value > self.best_metric):
            self.best_metric = value
        return bool(self.dist.broadcast(is_best))

    def _validate_and_maybe_checkpoint(self) -> Dict[str, Any]:
        metrics = self._validate()
        value = self._searcher_metric(metrics) if self.searcher_metric_name in metrics or self.managed else None
        if self.checkpoint_policy == "all" or (self.checkpoint_policy == "best" and self._is_best(value)):
            if self.last_ckpt_step != self.steps:
                self._checkpoint()
        return metrics

    def _should_stop(self) -> Tuple[bool, bool]:
        """(stop requested by the trial on any rank, preempted)."""
        stop = self.ctx._stop_requested
        if self.dist.size > 1:
            stop = any(self.dist.allgather(stop))
            self.ctx._stop_requested = stop
        preempt = False if self.test_mode else self.core.preempt.should_preempt()
        return stop, preempt

    # -- main ----------------------------------------------------------------------------
    def run(self) -> None:
        self.callbacks = dict(self.trial.build_callbacks() or {})
        for name, cb in self.callbacks.items():
            if not isinstance(cb, PyTorchCallback):
                raise TypeError(f"callback {name!r} is not a pytorch.PyTorchCallback")
        ckpt: Optional[Tuple[Dict[str, Any], Dict[str, Any]]] = None
        warm_start = False
        if self.latest_checkpoint:
            ckpt = self._read_checkpoint(self.latest_checkpoint)
            ckpt_trial = ckpt[1].get("trial_id")
            warm_start = bool(self.managed and ckpt_trial not in (None, 0, self.ctx.get_trial_id()))
        first = 0 if (ckpt is None or warm_start) else int(ckpt[1].get("batches_trained", 0))
        self._cb("on_trial_startup", first, self.latest_checkpoint)
        self._build_loaders()
        if ckpt is not None:
            self._apply_checkpoint(ckpt[0], ckpt[1], warm_start)
            if warm_start:
                logger.info("warm-starting from checkpoint %s of another trial", self.latest_checkpoint)
            else:
                logger.info("resumed from checkpoint %s at batch %d", self.latest_checkpoint, self.steps)
        self.ctx._current_batch_idx = self.steps
        self._cb("on_training_start")
        preempted = False
        stop = False
        try:
            if self.step_zero_validation and self.steps == 0 and not self.test_mode:
                self._validate_and_maybe_checkpoint()
            batches = self._train_batches()
            self._reset_reducers("for_training")
            # Decided once, not per batch: which periods exist at all.
            report_period = self.reporting_period
            has_val_period = self.validation_period is not None
            has_ckpt_period = self.checkpoint_period is not None
            for op in self._ops():
                target = self._op_batches(op.length) if self.managed else op.length
                while self.steps < target:
                    epoch_end = self._train_one(batches)
                    if report_period.should_stop(self.steps) if type(report_period) is Batch \
                            else self._period_hit(report_period, epoch_end):
                        self._report_training()
                        if self.is_chief and self.managed:
                            op.report_progress(self._op_progress(self.steps))
                    # Preemption and stop requests are honoured at every batch boundary.
                    stop, preempted = self._should_stop()
                    if stop or preempted:
                        break
                    if has_val_period and self._period_hit(self.validation_period, epoch_end):
                        self._report_training()
                        self._validate_and_maybe_checkpoint()
                    if has_ckpt_period and self._period_hit(self.checkpoint_period, epoch_end) \
                            and self.last_ckpt_step != self.steps:
                        self._report_training()
                        self._checkpoint()
                if preempted:
                    break
                self._report_training()
                if stop and self.steps < target:
                    # Finish the step: checkpoint, tell the master, exit.
                    break
                metrics = None
                if self.last_val_step != self.steps:
                    metrics = self._validate_and_maybe_checkpoint()
                if self.is_chief:
                    value = None
                    if metrics is not None:
                        value = self._searcher_metric(metrics) if self.searcher_metric_name else None
                    if value is None and self.managed and self.searcher_metric_name:
                        value = self._last_metric_value()
                    op.report_completed(value if value is not None else 0.0)
                if stop:
                    break
            if self.last_ckpt_step != self.steps or self.test_mode and self.last_ckpt_step is None:
                self._checkpoint()
            if stop and self.is_chief and self.managed:
                self.core.train.report_early_exit(core.EarlyExitReason.USER_REQUESTED_STOP)
            if preempted:
                logger.info("preempted: saved a checkpoint at batch %d; exiting", self.steps)
        finally:
            self._cb("on_trial_shutdown")

    def _last_metric_value(self) -> Optional[float]:
        return self.best_metric

    def _ops(self) -> Iterator[Any]:
        if self.managed:
            yield from self.core.searcher.operations()
            return
        assert self.max_length is not None
        yield _LocalOp(self._to_batches(self.max_length, int(self.max_length.value)))


class _LocalOp:
    def __init__(self, length: int) -> None:
        self.length = length

    def report_progress(self, length: float) -> None:
        pass

    def report_completed(self, searcher_metric: Any) -> None:
        pass


def _load_state(ctx: PyTorchTrialContext, state: Dict[str, Any], strict: bool = True) -> None:
    models = state.get("models_state_dict")
    if models is None and "model_state_dict" in state:
        models = [state["model_state_dict"]]
    for m, sd in zip(ctx.models, models or []):
        m.load_state_dict(sd, strict=strict)
    opts = state.get("optimizers_state_dict")
    if opts is None and "optimizer_state_dict" in state:
        opts = [state["optimizer_state_dict"]]
    for o, sd in zip(ctx.optimizers, opts or []):
        o.load_state_dict(sd)
    lrs = state.get("lr_schedulers_state_dict")
    if lrs is None and "lr_scheduler" in state:
        lrs = [state["lr_scheduler"]]
    for s, sd in zip(ctx.lr_schedulers, lrs or []):
        s.load_state_dict(sd)
    for s, sd in zip(ctx._scalers, state.get("scalers_state_dict") or []):
        s.load_state_dict(sd)


def _trial_spec(trial: Any) -> str:
    cls = type(trial)
    return f"{cls.__module__}:{cls.__qualname__}"


def _write_load_data(path: Any, trial: Any, ctx: PyTorchTrialContext) -> None:
    """load_data.json (how to rebuild the trial) and code/ (the trial's source directory)."""
    load_data = {
        "trial_type": "PyTorchTrial",
        "trial_cls_spec": _trial_spec(trial),
        "hparams": ctx._hparams,
        "experiment_config": ctx._exp_conf or {},
        "trial_seed": ctx._trial_seed,
    }
    with open(os.path.join(str(path), LOAD_DATA_FILE), "w") as f:
        json.dump(load_data, f, default=str)
    mod = sys.modules.get(type(trial).__module__)
    src = getattr(mod, "__file__", None)
    if not src:
        return
    src_dir = os.path.dirname(os.path.abspath(src))
    code = os.path.join(str(path), "code")
    os.makedirs(code, exist_ok=True)
    total = 0
    for name in sorted(os.listdir(src_dir)):
        full = os.path.join(src_dir, name)
        if name.endswith((".py", ".yaml", ".yml")) and os.path.isfile(full):
            total += os.path.getsize(full)
            if total > 16 * 1024 * 1024:
                break
            shutil.copy2(full, os.path.join(code, name))


# -- pytorch.init() ------------------------------------------------------------------------
def _hparam_defaults(hparams: Dict[str, Any]) -> Dict[str, Any]:
    """Concrete values for an experiment config's hyperparameters (for local test mode)."""
    out: Dict[str, Any] = {}
    for k, v in (hparams or {}).items():
        if isinstance(v, dict) and "type" in v:
            t = v["type"]
            if t == "const":
                out[k] = v.get("val")
            elif t == "int":
                out[k] = int(v["minval"])
            elif t == "double":
                out[k] = float(v["minval"])
            elif t == "log":
                out[k] = float(v.get("base", 10)) ** float(v["minval"])
            elif t == "categorical":
                out[k] = v["vals"][0]
            else:
                out[k] = v
        elif isinstance(v, dict):
            out[k] = _hparam_defaults(v)
        else:
            out[k] = v
    return out


def _trial_seed_from(exp_conf: Optional[Dict[str, Any]]) -> int:
    seed = ((exp_conf or {}).get("reproducibility") or {}).get("experiment_seed")
    if seed is None:
        return random.SystemRandom().randint(0, 2**31 - 1)
    return int(seed)


@contextlib.contextmanager
def init(
    *,
    hparams: Optional[Dict] = None,
    exp_conf: Optional[Dict[str, Any]] = None,
    distributed: Optional[core.DistributedContext] = None,
    aggregation_frequency: int = 1,
    enable_tensorboard_logging: bool = True,
) -> Iterator[PyTorchTrialContext]:
    """Create a PyTorchTrialContext; all Trainer calls must happen inside this context."""
    info = det.get_cluster_info()
    managed = info is not None and info.task_type == "TRIAL" and info.trial is not None
    steps_completed = 0
    if managed:
        assert info is not None and info.trial is not None
        hparams = info.trial.hparams
        exp_conf = info.trial._config
        trial_seed = info.trial.trial_seed
        steps_completed = info.trial._steps_completed
    else:
        trial_seed = _trial_seed_from(exp_conf)
    opt_conf = (exp_conf or {}).get("optimizations") or {}
    if aggregation_frequency == 1 and opt_conf.get("aggregation_frequency"):
        aggregation_frequency = int(opt_conf["aggregation_frequency"])
    average = bool(opt_conf.get("average_aggregated_gradients", True))
    if distributed is None and int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        distributed = core.DistributedContext.from_torch_distributed()
    size = distributed.size if distributed is not None else 1
    num_gpus = len(info.gpu_uuids) if info is not None else (1 if torch.cuda.is_available() else 0)
    created_pg = False
    if size > 1 and not torch.distributed.is_initialized():
        assert distributed is not None
        backend = "nccl" if num_gpus > 0 and torch.cuda.is_available() else "gloo"
        os.environ.setdefault("MASTER_ADDR", os.environ.get("DET_CHIEF_IP", "127.0.0.1"))
        os.environ.setdefault("MASTER_PORT", "29400")
        torch.distributed.init_process_group(backend, rank=distributed.rank, world_size=distributed.size)
        created_pg = True
    _set_random_seeds(trial_seed + (distributed.rank if distributed is not None else 0))
    checkpoint_storage = None if managed else (exp_conf or {}).get("checkpoint_storage")
    try:
        with core.init(distributed=distributed, checkpoint_storage=checkpoint_storage) as core_context:
            context = PyTorchTrialContext(
                core_context,
                trial_seed=trial_seed,
                hparams=hparams,
                slots_per_trial=size,
                num_gpus=num_gpus,
                exp_conf=exp_conf,
                aggregation_frequency=aggregation_frequency,
                steps_completed=steps_completed,
                managed_training=managed,
                debug_enabled=bool((exp_conf or {}).get("debug", False)),
                average_aggregated_gradients=average,
                enable_tensorboard_logging=enable_tensorboard_logging,
            )
            yield context
    finally:
        if created_pg and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


def _run_pytorch_trial(trial_class: Any, info: Optional[det.ClusterInfo], *, test_mode: bool = False,
                       exp_conf: Optional[Dict[str, Any]] = None, hparams: Optional[Dict[str, Any]] = None) -> None:
    """What ``python -m determined.exec.harness module:Class`` runs for a PyTorchTrial."""
    if test_mode:
        import tempfile

        exp_conf = dict(exp_conf or {})
        exp_conf["checkpoint_storage"] = tempfile.mkdtemp(prefix="det-test-mode-")
    with init(hparams=hparams, exp_conf=exp_conf) as context:
        trial = trial_class(context)
        trainer = Trainer(trial, context)
        if test_mode:
            try:
                trainer.fit(test_mode=True, latest_checkpoint=None)
                _test_mode_round_trip(trial, context, trainer)
            finally:
                shutil.rmtree(str(exp_conf["checkpoint_storage"]), ignore_errors=True)
            return
        latest = info.latest_checkpoint if info is not None else None
        # The experiment config's `profiling: {enabled: true}` turns system metrics on.
        profiling = (context._exp_conf or {}).get("profiling") or {}
        trainer.fit(latest_checkpoint=latest, profiling_enabled=bool(profiling.get("enabled", False)))


def _test_mode_round_trip(trial: Any, context: PyTorchTrialContext, trainer: Trainer) -> None:
    """Reload the checkpoint test mode saved and check the weights survive the round trip."""
    if context.distributed.rank != 0:
        return
    before = [{k: v.clone() for k, v in m.state_dict().items()} for m in context.models]
    storage = context._core.checkpoint._storage_manager
    ckpts = [p for p in storage.base_path.iterdir() if (p / STATE_FILE).exists()] if storage.base_path.exists() else []
    if not ckpts:
        raise RuntimeError("test mode: no checkpoint was written")
    latest = max(ckpts, key=lambda p: (p / STATE_FILE).stat().st_mtime)
    state = torch.load(str(latest / STATE_FILE), map_location=context.device)
    _load_state(context, state, strict=True)
    for m, b in zip(context.models, before):
        for k, v in m.state_dict().items():
            if not torch.equal(v, b[k]):
                raise RuntimeError(f"test mode: checkpoint round trip changed parameter {k}")
    print(f"Checkpoint round trip succeeded ({latest.name}).", flush=True)
