"""The Python side of the platform: the Core API (``determined.core``), cluster info,
and the entry points the agent runs (``determined.exec``, ``determined.launch``).

Only the standard library is needed here; torch is needed only by ``determined.pytorch``.
The public names follow Determined 0.38's ``determined`` package; the ones left out on
purpose are listed in docs/compatibility.md.
"""

__version__ = "0.38.1"

# The format for the logging module that lets logs be filtered by level: the agent reads
# "<LEVEL>: " at the start of each output line as the line's level.
LOG_FORMAT = "%(levelname)s: [%(process)s] %(name)s: %(message)s"

from determined._experiment_config import ExperimentConfig
from determined._info import ClusterInfo, RendezvousInfo, ResourcesInfo, TrialInfo, get_cluster_info
from determined._import import import_from_path
from determined import errors
from determined.errors import InvalidHP
from determined import core
from determined._env_context import EnvContext
from determined._trial_context import TrialContext
from determined import common, util

__all__ = [
    "ClusterInfo",
    "EnvContext",
    "ExperimentConfig",
    "InvalidHP",
    "LOG_FORMAT",
    "RendezvousInfo",
    "ResourcesInfo",
    "TrialContext",
    "TrialInfo",
    "common",
    "core",
    "errors",
    "get_cluster_info",
    "import_from_path",
    "util",
]
