"""Core API v2: the singleton-style Core API, on a cluster and in detached (unmanaged) mode.

``core_v2.init(config=core_v2.Config(name=...))`` then ``core_v2.train``, ``core_v2.checkpoint``,
``core_v2.distributed``, ``core_v2.preempt``, ``core_v2.searcher`` and ``core_v2.info``, and
``core_v2.close()``. Inside a trial the platform runs, ``init`` builds the ordinary
``core.init()`` context and ignores the config. Anywhere else (a plain script, a laptop, a
Slurm job) it creates an *unmanaged* experiment and trial on the master named by ``DET_MASTER``
and reports to them: the master records metrics, checkpoints and logs but never schedules
the script; the trial is COMPLETED when the script closes and ERROR when it raises.
"""

from typing import Optional

import determined
from determined import core

# Names a script may take from this module, as in Determined.
from determined.core import DistributedContext, PreemptMode, TensorboardMode
from determined.experimental.core_v2._core_v2 import (
    Config,
    DefaultConfig,
    UnmanagedConfig,
    close,
    init,
    init_context,
    url_reverse_webui_exp_view,
)
from determined.experimental.core_v2._core_context_v2 import _make_v2_context
from determined.experimental.core_v2._unmanaged import (
    _get_or_create_experiment_and_trial,
    _url_reverse_webui_exp_view,
)

# The singletons init() sets and close() clears.
train = None  # type: Optional[core.TrainContext]
distributed = None  # type: Optional[core.DistributedContext]
preempt = None  # type: Optional[core.PreemptContext]
checkpoint = None  # type: Optional[core.CheckpointContext]
searcher = None  # type: Optional[core.SearcherContext]
info = None  # type: Optional[determined.ClusterInfo]

__all__ = [
    "Config",
    "DefaultConfig",
    "DistributedContext",
    "PreemptMode",
    "TensorboardMode",
    "UnmanagedConfig",
    "checkpoint",
    "close",
    "distributed",
    "info",
    "init",
    "init_context",
    "preempt",
    "searcher",
    "train",
    "url_reverse_webui_exp_view",
]
