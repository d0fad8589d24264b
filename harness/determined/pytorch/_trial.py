"""PyTorchTrial and the TrainUnit types (Batch, Epoch) used by Trainer.fit()."""

import abc
import collections.abc
from typing import Any, Dict, Union

import torch

from determined.pytorch._reducer import Reducer


class TrainUnit:
    """A length or period of training: an int (every N units) or a container of unit counts."""

    def __init__(self, value: Union[int, collections.abc.Container]) -> None:
        if isinstance(value, bool) or not (isinstance(value, int) or isinstance(value, collections.abc.Container)):
            raise TypeError(f"{type(self).__name__}() takes an int or a container of ints, not {value!r}")
        if isinstance(value, int) and value < 0:
            raise ValueError(f"{type(self).__name__}() must not be negative")
        self.value = value

    def should_stop(self, step_num: int) -> bool:
        if isinstance(self.value, int):
            return self.value > 0 and step_num % self.value == 0
        return step_num in self.value

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and self.value == other.value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"


class Batch(TrainUnit):
    """A number of batches."""


class Epoch(TrainUnit):
    """A number of epochs."""


class PyTorchTrial(metaclass=abc.ABCMeta):
    """Subclass this to define a model, optimizer, data loaders and one batch of training."""

    from determined.pytorch._trial_context import PyTorchTrialContext as trial_context_class  # noqa

    @abc.abstractmethod
    def __init__(self, context: Any) -> None:
        pass

    @abc.abstractmethod
    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Union[torch.Tensor, Dict[str, Any]]:
        pass

    @abc.abstractmethod
    def build_training_data_loader(self) -> Any:
        pass

    @abc.abstractmethod
    def build_validation_data_loader(self) -> Any:
        pass

    def build_callbacks(self) -> Dict[str, Any]:
        return {}

    def evaluate_batch(self, batch: Any, batch_idx: int) -> Dict[str, Any]:
        raise NotImplementedError("trial must implement evaluate_batch() or evaluate_full_dataset()")

    def evaluation_reducer(self) -> Union[Reducer, Dict[str, Reducer]]:
        return Reducer.AVG

    def evaluate_full_dataset(self, data_loader: torch.utils.data.DataLoader) -> Dict[str, Any]:
        raise NotImplementedError("trial must implement evaluate_batch() or evaluate_full_dataset()")

    def get_batch_length(self, batch: Any) -> int:
        if isinstance(batch, torch.Tensor):
            return len(batch)
        if isinstance(batch, dict):
            batch = next(iter(batch.values()))
            return self.get_batch_length(batch)
        if isinstance(batch, (list, tuple)):
            return self.get_batch_length(batch[0])
        try:
            return len(batch)
        except TypeError:
            raise TypeError(f"cannot count the records of a {type(batch).__name__} batch; override get_batch_length()") from None


def _overrides(trial: Any, name: str) -> bool:
    return getattr(type(trial), name) is not getattr(PyTorchTrial, name)
