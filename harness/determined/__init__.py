"""The Python side of the platform: the Core API (``determined.core``), cluster info,
and the entry points the agent runs (``determined.exec``, ``determined.launch``).

Only the standard library is needed here; torch is needed only by ``determined.pytorch``.
"""

__version__ = "0.38.1"

from determined.errors import InvalidHP
from determined._info import ClusterInfo, RendezvousInfo, TrialInfo, get_cluster_info
from determined import core

__all__ = [
    "ClusterInfo",
    "InvalidHP",
    "RendezvousInfo",
    "TrialInfo",
    "core",
    "get_cluster_info",
]
