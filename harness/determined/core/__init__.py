"""The Core API: ``with core.init() as core_context: ...``."""

from determined.core._tensorboard_mode import TensorboardMode
from determined.core._distributed import DistributedContext, DummyDistributedContext
from determined.core._checkpoint import CheckpointContext, DownloadMode
from determined.core._preempt import DummyPreemptContext, PreemptContext, PreemptMode
from determined.core._profiler import DummyProfilerContext, ProfilerContext
from determined.core._searcher import (
    DummySearcherContext,
    SearcherContext,
    SearcherMode,
    SearcherOperation,
    Unit,
)
from determined.core._train import DummyTrainContext, EarlyExitReason, TrainContext
from determined.core._context import Context, init

__all__ = [
    "CheckpointContext",
    "Context",
    "DistributedContext",
    "DownloadMode",
    "DummyDistributedContext",
    "DummyPreemptContext",
    "DummyProfilerContext",
    "DummySearcherContext",
    "DummyTrainContext",
    "EarlyExitReason",
    "PreemptContext",
    "PreemptMode",
    "ProfilerContext",
    "SearcherContext",
    "SearcherMode",
    "SearcherOperation",
    "TensorboardMode",
    "TrainContext",
    "Unit",
    "init",
]
