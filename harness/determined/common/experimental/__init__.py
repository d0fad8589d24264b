"""The client SDK's classes (public through :mod:`determined.experimental`).

``Model``, ``ModelVersion``, ``ModelSortBy`` and ``ModelOrderBy`` come from
:mod:`determined.common.experimental.model` (the model registry) when that module is present.
"""

from determined.common.experimental._util import OrderBy
from determined.common.experimental.checkpoint import (
    Checkpoint,
    CheckpointOrderBy,
    CheckpointSortBy,
    CheckpointState,
    DownloadMode,
)
from determined.common.experimental.determined import Determined
from determined.common.experimental.experiment import (
    Experiment,
    ExperimentOrderBy,
    ExperimentReference,
    ExperimentSortBy,
    ExperimentState,
)
from determined.common.experimental.metrics import TrainingMetrics, TrialMetrics, ValidationMetrics
from determined.common.experimental.project import Project
from determined.common.experimental.resource_pool import ResourcePool
from determined.common.experimental.trial import (
    LogLevel,
    Trial,
    TrialOrderBy,
    TrialReference,
    TrialSortBy,
    TrialState,
)
from determined.common.experimental.user import User
from determined.common.experimental.workspace import Workspace

try:
    from determined.common.experimental.model import Model, ModelOrderBy, ModelSortBy, ModelVersion
except ModuleNotFoundError as _e:  # the model registry module is not installed
    if _e.name != "determined.common.experimental.model":
        raise
