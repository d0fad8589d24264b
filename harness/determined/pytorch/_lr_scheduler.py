"""LRScheduler: a wrapper around a torch LR scheduler that steps it at the configured times."""

import enum
from typing import Any, Dict


class LRScheduler:
    """Wrapper for a PyTorch LRScheduler (saves/restores it, steps it per ``step_mode``)."""

    class StepMode(enum.Enum):
        """Specifies when and how scheduler.step() should be executed."""

        STEP_EVERY_EPOCH = 1
        STEP_EVERY_BATCH = 2
        MANUAL_STEP = 3
        STEP_EVERY_OPTIMIZER_STEP = 4

    def __init__(self, scheduler: Any, step_mode: "LRScheduler.StepMode", frequency: int = 1) -> None:
        if not isinstance(step_mode, LRScheduler.StepMode):
            raise TypeError(f"step_mode must be an LRScheduler.StepMode, not {step_mode!r}")
        if int(frequency) < 1:
            raise ValueError(f"frequency must be >= 1, not {frequency}")
        self._scheduler = scheduler
        self._step_mode = step_mode
        self._frequency = int(frequency)
        self._optimizer_steps = 0

    @property
    def scheduler(self) -> Any:
        return self._scheduler

    def step(self, *args: Any, **kwargs: Any) -> None:
        self._scheduler.step(*args, **kwargs)

    def get_last_lr(self) -> Any:
        return self._scheduler.get_last_lr()

    def state_dict(self) -> Dict[str, Any]:
        return self._scheduler.state_dict()

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._scheduler.load_state_dict(state_dict)

    # Called by the training loop.
    def _after_batch(self, batches_trained: int) -> None:
        if self._step_mode == LRScheduler.StepMode.STEP_EVERY_BATCH and batches_trained % self._frequency == 0:
            self._scheduler.step()

    def _after_epoch(self, epochs_trained: int) -> None:
        if self._step_mode == LRScheduler.StepMode.STEP_EVERY_EPOCH and epochs_trained % self._frequency == 0:
            self._scheduler.step()

    def _after_optimizer_step(self, optimizer: Any) -> None:
        if self._step_mode != LRScheduler.StepMode.STEP_EVERY_OPTIMIZER_STEP:
            return
        if getattr(self._scheduler, "optimizer", optimizer) is not optimizer:
            return
        self._optimizer_steps += 1
        if self._optimizer_steps % self._frequency == 0:
            self._scheduler.step()
