"""determined.pytorch: PyTorchTrial, PyTorchTrialContext, Trainer and friends (needs torch)."""

from determined.pytorch import samplers
from determined.pytorch._callback import PyTorchCallback
from determined.pytorch._data import DataLoader, TorchData, adapt_batch_sampler, data_length, to_device
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._reducer import MetricReducer, Reducer
from determined.pytorch._trial_context import PyTorchExperimentalContext, PyTorchTrialContext
from determined.pytorch._trial import Batch, Epoch, PyTorchTrial, TrainUnit
from determined.pytorch._trainer import Trainer, _run_pytorch_trial, init
from determined.pytorch._load import CheckpointLoadContext, load_trial_from_checkpoint_path

__all__ = [
    "Batch",
    "CheckpointLoadContext",
    "DataLoader",
    "Epoch",
    "LRScheduler",
    "MetricReducer",
    "PyTorchCallback",
    "PyTorchExperimentalContext",
    "PyTorchTrial",
    "PyTorchTrialContext",
    "Reducer",
    "TorchData",
    "TrainUnit",
    "Trainer",
    "adapt_batch_sampler",
    "data_length",
    "init",
    "load_trial_from_checkpoint_path",
    "samplers",
    "to_device",
]
