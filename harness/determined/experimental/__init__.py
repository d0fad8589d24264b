"""Determined's Python client SDK: drive experiments, trials and checkpoints from Python.

    from determined.experimental import client
    client.login(master="http://127.0.0.1:8080", user="determined", password="")
    exp = client.create_experiment(config="const.yaml", model_dir=".")
    exp.wait()

:class:`Determined` is an explicit connection to one master; the :mod:`client` module offers
the same functions on a default connection.
"""

from determined.common.experimental import checkpoint, metrics
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
    Trial,
    TrialOrderBy,
    TrialReference,
    TrialSortBy,
    TrialState,
)
from determined.common.experimental.user import User
from determined.common.experimental.workspace import Workspace
from determined.experimental._native import test_one_batch

try:
    from determined.common.experimental.model import Model, ModelOrderBy, ModelSortBy, ModelVersion
except ModuleNotFoundError as _e:  # the model registry module is not installed
    if _e.name != "determined.common.experimental.model":
        raise
else:
    from determined.common.experimental import model

from determined.experimental import client  # noqa: E402  (client imports the names above)
