"""determined.pytorch: PyTorchTrial, PyTorchTrialContext, Trainer and friends (needs torch)."""

from determined.pytorch._callback import PyTorchCallback
from determined.pytorch._data import DataLoader
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._reducer import MetricReducer, Reducer
from determined.pytorch._trial_context import PyTorchExperimentalContext, PyTorchTrialContext
from determined.pytorch._trial import Batch, Epoch, PyTorchTrial, TrainUnit
from determined.pytorch._trainer import Trainer, _run_pytorch_trial, init
from determined.pytorch._load import load_trial_from_checkpoint_path
from determined.pytorch import samplers

TorchData = object  # the seed's type alias of a batch (dict, sequence or tensor)

__all__ = [
    "Batch",
    "DataLoader",
    "Epoch",
    "LRScheduler",
    "MetricReducer",
    "PyTorchCallback",
    "PyTorchExperimentalContext",
    "PyTorchTrial",
    "PyTorchTrialContext",
    "Reducer",
    "TrainUnit",
    "Trainer",
    "init",
    "load_trial_from_checkpoint_path",
    "samplers",
]
