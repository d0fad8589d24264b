"""The entry point of the client SDK: a logged-in connection to one master."""

import logging
import urllib.parse
import pathlib
import re
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from determined.common import api, util
from determined.common.api import errors
from determined.common.experimental import (
    _context,
    _login,
    _util,
    checkpoint,
    experiment,
    metrics,
    resource_pool,
    trial,
    user,
    workspace,
)
from determined.common.experimental._util import OrderBy

logger = logging.getLogger("determined.client")


def check_password_complexity(password: Optional[str]) -> None:
    """Raises ValueError unless the password has 8+ characters with an upper-case letter, a
    lower-case letter and a digit (Determined's rules for new passwords)."""
    problems = []
    if password is None or len(password) < 8:
        problems.append("be at least 8 characters long")
    if not password or not re.search(r"[A-Z]", password):
        problems.append("contain at least one upper-case letter")
    if not password or not re.search(r"[a-z]", password):
        problems.append("contain at least one lower-case letter")
    if not password or not re.search(r"[0-9]", password):
        problems.append("contain at least one number")
    if problems:
        raise ValueError("password must " + ", ".join(problems))


class Determined:
    """A connection to one master, logged in as one user.

    Credentials: an explicit ``password`` logs in as ``user``; without one, ``$DET_USER_TOKEN``,
    then a token ``det user login`` cached for the user, then ``$DET_PASS``, then a blank
    password. The master comes from ``master``, else ``$DET_MASTER``, else localhost:8080.
    ``cert_path``, ``cert_name`` and ``noverify`` are accepted for compatibility (TLS is
    handled by the standard library's defaults).
    """

    def __init__(
        self,
        master: Optional[str] = None,
        user: Optional[str] = None,
        password: Optional[str] = None,
        cert_path: Optional[str] = None,
        cert_name: Optional[str] = None,
        noverify: bool = False,
    ) -> None:
        self._master = api.canonicalize_master_url(master or api.get_default_master_url())
        self._username, token = _login.login(self._master, user, password)
        self._session = api.Session(self._master, user_token=token)

    @classmethod
    def _from_session(cls, session: api.Session, username: Optional[str] = None) -> "Determined":
        new = cls.__new__(cls)
        new._session = session
        new._master = session.master_url
        new._username = username or ""
        return new

    # -- users ---------------------------------------------------------------------------
    def create_user(self, username: str, admin: bool, password: Optional[str] = None,
                    remote: bool = False) -> user.User:
        hashed = None
        if not remote:
            check_password_complexity(password)
            hashed = api.salt_and_hash(password or "")
        resp = self._session.post("/api/v1/users", json_body={
            "user": {"username": username, "admin": admin, "active": True, "remote": remote},
            "password": hashed, "isHashed": True})
        return user.User._from_json(resp["user"], self._session)

    def get_user_by_id(self, user_id: int) -> user.User:
        return user.User._from_json(self._session.get(f"/api/v1/users/{user_id}")["user"],
                                    self._session)

    def get_user_by_name(self, user_name: str) -> user.User:
        name = urllib.parse.quote(user_name, safe="")
        body = self._session.get(f"/api/v1/users/{name}/by-username")
        return user.User._from_json(body["user"], self._session)

    def whoami(self) -> user.User:
        return user.User._from_json(self._session.get("/api/v1/me")["user"], self._session)

    def get_session_username(self) -> str:
        return self._username

    def logout(self) -> None:
        """Ends the session on the master and drops its token from the cache."""
        _login.logout(self._master, self._username, getattr(self._session, "_user_token", ""))

    def list_users(self, active: Optional[bool] = None) -> List[user.User]:
        found = _util.read_all(self._session, "/api/v1/users", "users", {"active": active})
        if active is not None:  # a master that ignores the filter still gets the answer right
            found = [u for u in found if bool(u.get("active", True)) == active]
        return [user.User._from_json(u, self._session) for u in found]

    # -- experiments ---------------------------------------------------------------------
    def create_experiment(
        self,
        config: Union[str, pathlib.Path, Dict],
        model_dir: Optional[Union[str, pathlib.Path]] = None,
        includes: Optional[Iterable[Union[str, pathlib.Path]]] = None,
        project_id: Optional[int] = None,
        template: Optional[str] = None,
        parent_id: Optional[int] = None,
    ) -> experiment.Experiment:
        """Creates (and activates) an experiment from a config file path or dict, with the
        files of ``model_dir`` and ``includes`` as its model definition."""
        if isinstance(config, (str, pathlib.Path)):
            config_text = pathlib.Path(config).read_text()
            try:  # a clear error here rather than the master's
                util.yaml_safe_load(config_text)
            except Exception as e:  # yaml's errors, without importing yaml here
                raise ValueError(f"config: {config} is not valid YAML: {e}") from None
        elif isinstance(config, dict):
            config_text = util.yaml_safe_dump(config)
        else:
            raise ValueError("config parameter must be dictionary or path")
        files = _context.pack(model_dir, includes or [])
        body: Dict[str, Any] = {"activate": True, "config": config_text, "modelDefinition": files}
        if project_id is not None:
            body["projectId"] = project_id
        if template is not None:
            body["template"] = template
        if parent_id is not None:
            body["parentId"] = parent_id
        resp = self._session.post("/api/v1/experiments", json_body=body)
        for w in resp.get("warnings") or []:
            logger.warning("%s", w)
        return experiment.Experiment._from_json(resp["experiment"], self._session)

    def get_experiment(self, experiment_id: int) -> experiment.Experiment:
        body = self._session.get(f"/api/v1/experiments/{experiment_id}")
        return experiment.Experiment._from_json(body["experiment"], self._session)

    def list_experiments(
        self,
        sort_by: Optional[experiment.ExperimentSortBy] = None,
        order_by: Optional[OrderBy] = None,
        experiment_ids: Optional[List[int]] = None,
        labels: Optional[List[str]] = None,
        users: Optional[List[str]] = None,
        states: Optional[List[experiment.ExperimentState]] = None,
        name: Optional[str] = None,
        project_id: Optional[int] = None,
    ) -> List[experiment.Experiment]:
        """Experiments, filtered and sorted. The filters are sent to the master and applied
        here as well, so the answer is right whichever of them the master honours."""
        state_values = [getattr(s, "value", s) for s in states] if states else None
        params = {
            "sortBy": sort_by.value if sort_by else None,
            "orderBy": _util.order_value(order_by),
            "experimentIdFilter.incl": experiment_ids,
            "labels": labels, "users": users, "states": state_values, "name": name,
            "projectId": project_id,
        }
        found = _util.read_all(self._session, "/api/v1/experiments", "experiments", params)
        if experiment_ids:
            found = [e for e in found if e.get("id") in set(experiment_ids)]
        if labels:
            found = [e for e in found if set(e.get("labels") or []) & set(labels)]
        if users:
            found = [e for e in found if e.get("username") in set(users)]
        if state_values:
            found = [e for e in found if e.get("state") in set(state_values)]
        if name:
            found = [e for e in found if name in (e.get("name") or "")]
        if project_id is not None:
            found = [e for e in found if e.get("projectId") == project_id]
        if sort_by is not None:
            field = experiment.EXPERIMENT_SORT_FIELDS[experiment.ExperimentSortBy(sort_by)]
            found.sort(key=lambda e: (e.get(field) is None, e.get(field) or 0, e.get("id")),
                       reverse=_util.is_descending(order_by))
        return [experiment.Experiment._from_json(e, self._session) for e in found]

    # -- trials, checkpoints, metrics ----------------------------------------------------
    def get_trial(self, trial_id: int) -> trial.Trial:
        return trial.Trial._from_json(self._session.get(f"/api/v1/trials/{trial_id}")["trial"],
                                      self._session)

    def get_checkpoint(self, uuid: str) -> checkpoint.Checkpoint:
        body = self._session.get(f"/api/v1/checkpoints/{uuid}")
        return checkpoint.Checkpoint._from_json(self._session, body["checkpoint"])

    def iter_trials_metrics(self, trial_ids: List[int],
                            group: str) -> Iterable[metrics.TrialMetrics]:
        """Metric reports of ``group`` of the trials; follows them until they all end."""
        return trial._iter_trials_metrics(self._session, list(trial_ids), group)

    def stream_trials_metrics(self, trial_ids: List[int],
                              group: str) -> Iterable[metrics.TrialMetrics]:
        warnings.warn("Determined.stream_trials_metrics is deprecated; use "
                      "Determined.iter_trials_metrics instead.", FutureWarning, stacklevel=2)
        return self.iter_trials_metrics(trial_ids, group=group)

    def stream_trials_training_metrics(
            self, trial_ids: List[int]) -> Iterable[metrics.TrainingMetrics]:
        warnings.warn("Determined.stream_trials_training_metrics is deprecated; use "
                      "Determined.iter_trials_metrics(group='training') instead.",
                      FutureWarning, stacklevel=2)
        return trial._iter_trials_metrics(  # type: ignore[return-value]
            self._session, list(trial_ids), util._LEGACY_TRAINING, metrics.TrainingMetrics)

    def stream_trials_validation_metrics(
            self, trial_ids: List[int]) -> Iterable[metrics.ValidationMetrics]:
        warnings.warn("Determined.stream_trials_validation_metrics is deprecated; use "
                      "Determined.iter_trials_metrics(group='validation') instead.",
                      FutureWarning, stacklevel=2)
        return trial._iter_trials_metrics(  # type: ignore[return-value]
            self._session, list(trial_ids), util._LEGACY_VALIDATION, metrics.ValidationMetrics)

    # -- workspaces, resource pools ------------------------------------------------------
    def get_workspace(self, name: str) -> workspace.Workspace:
        return workspace.Workspace._from_json(workspace._by_name(self._session, name),
                                              self._session)

    def list_workspaces(self) -> List[workspace.Workspace]:
        found = _util.read_all(self._session, "/api/v1/workspaces", "workspaces")
        return [workspace.Workspace._from_json(w, self._session) for w in found]

    def create_workspace(self, name: str) -> workspace.Workspace:
        resp = self._session.post("/api/v1/workspaces", json_body={"name": name})
        return workspace.Workspace._from_json(resp["workspace"], self._session)

    def delete_workspace(self, name: str) -> None:
        self._session.delete(f"/api/v1/workspaces/{self.get_workspace(name).id}")

    def list_resource_pools(self) -> List[resource_pool.ResourcePool]:
        found = _util.read_all(self._session, "/api/v1/resource-pools", "resourcePools")
        return [resource_pool.ResourcePool._from_json(rp, self._session) for rp in found]

    def get_resource_pool(self, name: str) -> resource_pool.ResourcePool:
        for rp in self.list_resource_pools():
            if rp.name == name:
                return rp
        raise errors.NotFoundException("GET", "/api/v1/resource-pools", 404,
                                       f"resource pool {name} not found")

    # -- model registry (determined.common.experimental.model) ---------------------------
    def create_model(self, name: str, description: Optional[str] = "",
                     metadata: Optional[Dict[str, Any]] = None,
                     labels: Optional[List[str]] = None,
                     workspace_name: Optional[str] = None) -> Any:
        from determined.common.experimental import model

        return model.create_model(self._session, name, description=description,
                                  metadata=metadata, labels=labels,
                                  workspace_name=workspace_name)

    def get_model(self, identifier: Union[str, int]) -> Any:
        from determined.common.experimental import model

        return model.get_model(self._session, identifier)

    def get_model_by_id(self, model_id: int) -> Any:
        warnings.warn("Determined.get_model_by_id() is deprecated; call Determined.get_model() "
                      "with a name or an integer id.", FutureWarning, stacklevel=2)
        return self.get_model(model_id)

    def list_models(self, sort_by: Any = None, order_by: Any = None, name: Optional[str] = None,
                    description: Optional[str] = None, model_id: Optional[int] = None,
                    workspace_names: Optional[List[str]] = None,
                    workspace_ids: Optional[List[int]] = None) -> List[Any]:
        from determined.common.experimental import model

        kwargs: Dict[str, Any] = {k: v for k, v in {
            "sort_by": sort_by, "order_by": order_by, "name": name, "description": description,
            "model_id": model_id, "workspace_names": workspace_names,
            "workspace_ids": workspace_ids}.items() if v is not None}
        return list(model.get_models(self._session, **kwargs))

    def get_models(self, sort_by: Any = None, order_by: Any = None, name: Optional[str] = None,
                   description: Optional[str] = None, model_id: Optional[int] = None,
                   workspace_names: Optional[List[str]] = None,
                   workspace_ids: Optional[List[int]] = None) -> List[Any]:
        warnings.warn("Determined.get_models() is deprecated; use Determined.list_models().",
                      FutureWarning, stacklevel=2)
        return self.list_models(sort_by, order_by, name, description, model_id, workspace_names,
                                workspace_ids)

    def get_model_labels(self) -> List[str]:
        from determined.common.experimental import model

        return list(model.get_model_labels(self._session))

    # -- OAuth (Enterprise-only in Determined; not served here) --------------------------
    def list_oauth_clients(self) -> Sequence[Any]:
        raise _enterprise_only("oauth2/clients")

    def add_oauth_client(self, domain: str, name: str) -> Any:
        raise _enterprise_only("oauth2/clients")

    def remove_oauth_client(self, client_id: str) -> None:
        raise _enterprise_only("oauth2/clients")


def _enterprise_only(what: str) -> Exception:
    from determined import errors as det_errors

    return det_errors.EnterpriseOnlyError(f"API not found: {what}")
