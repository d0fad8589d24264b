"""The client SDK's module-level functions, on one default :class:`Determined` connection.

    from determined.experimental import client
    client.login(master=..., user=..., password=...)   # optional: see login()
    exp = client.create_experiment(config="my_config.yaml", model_dir=".")
    exp.wait()
    best = exp.list_checkpoints(max_results=1)[0]

The first call of any function (other than login/logout) connects with the credentials
:class:`Determined` finds by itself when login() was not called.
"""

import functools
import logging
import pathlib
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, TypeVar, Union

from determined.common.experimental._util import OrderBy
from determined.common.experimental.checkpoint import (  # noqa: F401
    Checkpoint,
    CheckpointOrderBy,
    CheckpointSortBy,
    CheckpointState,
    DownloadMode,
)
from determined.common.experimental.determined import Determined
from determined.common.experimental.experiment import (  # noqa: F401
    Experiment,
    ExperimentOrderBy,
    ExperimentReference,
    ExperimentSortBy,
    ExperimentState,
)
from determined.common.experimental.metrics import TrainingMetrics, TrialMetrics, ValidationMetrics
from determined.common.experimental.oauth2_scim_client import Oauth2ScimClient  # noqa: F401
from determined.common.experimental.project import Project  # noqa: F401
from determined.common.experimental.resource_pool import ResourcePool
from determined.common.experimental.trial import (  # noqa: F401
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
    from determined.common.experimental.model import (  # noqa: F401
        Model,
        ModelOrderBy,
        ModelSortBy,
        ModelVersion,
    )
except ModuleNotFoundError as _e:  # the model registry module is not installed
    if _e.name != "determined.common.experimental.model":
        raise

logger = logging.getLogger("determined.client")

_determined = None  # type: Optional[Determined]

C = TypeVar("C", bound=Callable[..., Any])


def _require_singleton(fn: C) -> C:
    @functools.wraps(fn)
    def _fn(*args: Any, **kwargs: Any) -> Any:
        global _determined
        if _determined is None:
            _determined = Determined()
        return fn(*args, **kwargs)

    return _fn  # type: ignore[return-value]


def _det() -> Determined:
    assert _determined is not None
    return _determined


def login(
    master: Optional[str] = None,
    user: Optional[str] = None,
    password: Optional[str] = None,
    cert_path: Optional[str] = None,
    cert_name: Optional[str] = None,
    noverify: bool = False,
) -> None:
    """Connects the module's default :class:`Determined` (once, before any other call).

    Often unneeded: without it the first call connects to ``$DET_MASTER`` with the token
    ``det user login`` cached (or as ``determined`` with a blank password). To talk to several
    masters, use explicit :class:`Determined` objects instead.
    """
    global _determined
    if _determined is not None:
        raise ValueError(
            "You can only call login() once, before any other calls to any functions in the "
            "client module. If you have reason to connect to multiple masters, you should use "
            "explicit client.Determined() objects, which each expose the same functions as this "
            "module.")
    _determined = Determined(master, user, password, cert_path, cert_name, noverify)


def logout() -> None:
    """Logs the default connection out (and forgets it)."""
    global _determined
    if _determined is None:
        logger.warning("client has not been logged in, so client.logout() has no session to "
                       "log out of and does nothing; to log out of the cached session, try "
                       "client.Determined().logout() instead.")
        return
    _determined.logout()
    _determined = None


@_require_singleton
def create_experiment(
    config: Union[str, pathlib.Path, Dict],
    model_dir: Optional[str] = None,
    includes: Optional[Iterable[Union[str, pathlib.Path]]] = None,
    project_id: Optional[int] = None,
    template: Optional[str] = None,
    parent_id: Optional[int] = None,
) -> Experiment:
    """Creates an experiment from a config (a YAML file path or a dict) and the model
    definition in ``model_dir`` (plus ``includes``)."""
    return _det().create_experiment(config, model_dir, includes, project_id, template, parent_id)


@_require_singleton
def get_experiment(experiment_id: int) -> Experiment:
    return _det().get_experiment(experiment_id)


@_require_singleton
def list_experiments(
    sort_by: Optional[ExperimentSortBy] = None,
    order_by: Optional[OrderBy] = None,
    experiment_ids: Optional[List[int]] = None,
    labels: Optional[List[str]] = None,
    users: Optional[List[str]] = None,
    states: Optional[List[ExperimentState]] = None,
    name: Optional[str] = None,
    project_id: Optional[int] = None,
) -> List[Experiment]:
    return _det().list_experiments(sort_by=sort_by, order_by=order_by,
                                   experiment_ids=experiment_ids, labels=labels, users=users,
                                   states=states, name=name, project_id=project_id)


@_require_singleton
def create_user(username: str, admin: bool, password: Optional[str] = None,
                remote: bool = False) -> User:
    return _det().create_user(username, admin, password, remote)


@_require_singleton
def get_user_by_id(user_id: int) -> User:
    return _det().get_user_by_id(user_id)


@_require_singleton
def get_user_by_name(user_name: str) -> User:
    return _det().get_user_by_name(user_name)


@_require_singleton
def get_session_username() -> str:
    return _det().get_session_username()


@_require_singleton
def whoami() -> User:
    return _det().whoami()


@_require_singleton
def list_users(active: Optional[bool] = None) -> List[User]:
    return _det().list_users(active=active)


@_require_singleton
def get_trial(trial_id: int) -> Trial:
    return _det().get_trial(trial_id)


@_require_singleton
def get_checkpoint(uuid: str) -> Checkpoint:
    return _det().get_checkpoint(uuid)


@_require_singleton
def get_workspace(name: str) -> Workspace:
    return _det().get_workspace(name)


@_require_singleton
def list_workspaces() -> List[Workspace]:
    return _det().list_workspaces()


@_require_singleton
def create_workspace(name: str) -> Workspace:
    return _det().create_workspace(name)


@_require_singleton
def delete_workspace(name: str) -> None:
    return _det().delete_workspace(name)


@_require_singleton
def get_resource_pool(name: str) -> ResourcePool:
    return _det().get_resource_pool(name)


@_require_singleton
def list_resource_pools() -> List[ResourcePool]:
    return _det().list_resource_pools()


get_resource_pools = list_resource_pools


@_require_singleton
def create_model(name: str, description: Optional[str] = "",
                 metadata: Optional[Dict[str, Any]] = None) -> Any:
    return _det().create_model(name, description, metadata)


@_require_singleton
def get_model(identifier: Union[str, int]) -> Any:
    return _det().get_model(identifier)


@_require_singleton
def get_model_by_id(model_id: int) -> Any:
    warnings.warn("client.get_model_by_id() is deprecated; call client.get_model() with a name "
                  "or an integer id.", FutureWarning, stacklevel=2)
    return _det().get_model(model_id)


@_require_singleton
def get_models(sort_by: Any = None, order_by: Any = None, name: Optional[str] = None,
               description: Optional[str] = None) -> List[Any]:
    return _det().list_models(sort_by=sort_by, order_by=order_by, name=name,
                              description=description)


@_require_singleton
def list_models(sort_by: Any = None, order_by: Any = None, name: Optional[str] = None,
                description: Optional[str] = None, model_id: Optional[int] = None,
                workspace_names: Optional[List[str]] = None,
                workspace_ids: Optional[List[int]] = None) -> List[Any]:
    return _det().list_models(sort_by=sort_by, order_by=order_by, name=name,
                              description=description, model_id=model_id,
                              workspace_names=workspace_names, workspace_ids=workspace_ids)


@_require_singleton
def get_model_labels() -> List[str]:
    return _det().get_model_labels()


@_require_singleton
def list_oauth_clients() -> Sequence[Any]:
    return _det().list_oauth_clients()


@_require_singleton
def add_oauth_client(domain: str, name: str) -> Any:
    return _det().add_oauth_client(domain, name)


@_require_singleton
def remove_oauth_client(client_id: str) -> None:
    return _det().remove_oauth_client(client_id)


@_require_singleton
def iter_trials_metrics(trial_ids: List[int], group: str) -> Iterable[TrialMetrics]:
    """Metric reports of ``group`` of the trials; follows them until they all end."""
    return _det().iter_trials_metrics(trial_ids, group=group)


def stream_trials_metrics(trial_ids: List[int], group: str) -> Iterable[TrialMetrics]:
    warnings.warn("client.stream_trials_metrics is deprecated. Use client.iter_trials_metrics "
                  "instead", FutureWarning, stacklevel=2)
    return iter_trials_metrics(trial_ids, group=group)


@_require_singleton
def stream_trials_training_metrics(trial_ids: List[int]) -> Iterable[TrainingMetrics]:
    return _det().stream_trials_training_metrics(trial_ids)


@_require_singleton
def stream_trials_validation_metrics(trial_ids: List[int]) -> Iterable[ValidationMetrics]:
    return _det().stream_trials_validation_metrics(trial_ids)


def _get_singleton_session() -> Any:
    global _determined
    if _determined is None:
        _determined = Determined()
    return _determined._session
