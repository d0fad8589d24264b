"""Experiments in the client SDK: state, control, trials and checkpoints."""

import base64
import enum
import pathlib
import sys
import time
import warnings
from typing import Any, Dict, Iterator, List, Optional, Set, Union

import urllib.parse

from determined.common import api
from determined.common.experimental import _util, checkpoint, trial
from determined.common.experimental._util import OrderBy


class ExperimentState(enum.Enum):
    ACTIVE = "STATE_ACTIVE"
    PAUSED = "STATE_PAUSED"
    STOPPING_COMPLETED = "STATE_STOPPING_COMPLETED"
    STOPPING_CANCELED = "STATE_STOPPING_CANCELED"
    STOPPING_ERROR = "STATE_STOPPING_ERROR"
    COMPLETED = "STATE_COMPLETED"
    CANCELED = "STATE_CANCELED"
    ERROR = "STATE_ERROR"
    DELETED = "STATE_DELETED"
    DELETING = "STATE_DELETING"
    DELETE_FAILED = "STATE_DELETE_FAILED"
    STOPPING_KILLED = "STATE_STOPPING_KILLED"
    QUEUED = "STATE_QUEUED"
    PULLING = "STATE_PULLING"
    STARTING = "STATE_STARTING"
    RUNNING = "STATE_RUNNING"

    def _to_bindings(self) -> str:
        return str(self.value)


TERMINAL_STATES = {
    ExperimentState.COMPLETED,
    ExperimentState.CANCELED,
    ExperimentState.DELETED,
    ExperimentState.ERROR,
}


class ExperimentSortBy(enum.Enum):
    ID = "SORT_BY_ID"
    DESCRIPTION = "SORT_BY_DESCRIPTION"
    START_TIME = "SORT_BY_START_TIME"
    END_TIME = "SORT_BY_END_TIME"
    STATE = "SORT_BY_STATE"
    NUM_TRIALS = "SORT_BY_NUM_TRIALS"
    PROGRESS = "SORT_BY_PROGRESS"
    USER = "SORT_BY_USER"
    NAME = "SORT_BY_NAME"
    FORKED_FROM = "SORT_BY_FORKED_FROM"
    RESOURCE_POOL = "SORT_BY_RESOURCE_POOL"
    PROJECT_ID = "SORT_BY_PROJECT_ID"
    CHECKPOINT_SIZE = "SORT_BY_CHECKPOINT_SIZE"
    CHECKPOINT_COUNT = "SORT_BY_CHECKPOINT_COUNT"
    SEARCHER_METRIC_VAL = "SORT_BY_SEARCHER_METRIC_VAL"

    def _to_bindings(self) -> str:
        return str(self.value)


# The JSON field each ExperimentSortBy sorts on (client-side; see Determined.list_experiments).
EXPERIMENT_SORT_FIELDS = {
    ExperimentSortBy.ID: "id", ExperimentSortBy.DESCRIPTION: "description",
    ExperimentSortBy.START_TIME: "startTime", ExperimentSortBy.END_TIME: "endTime",
    ExperimentSortBy.STATE: "state", ExperimentSortBy.NUM_TRIALS: "numTrials",
    ExperimentSortBy.PROGRESS: "progress", ExperimentSortBy.USER: "username",
    ExperimentSortBy.NAME: "name", ExperimentSortBy.FORKED_FROM: "forkedFrom",
    ExperimentSortBy.RESOURCE_POOL: "resourcePool", ExperimentSortBy.PROJECT_ID: "projectId",
    ExperimentSortBy.CHECKPOINT_SIZE: "checkpointSize",
    ExperimentSortBy.CHECKPOINT_COUNT: "checkpointCount",
    ExperimentSortBy.SEARCHER_METRIC_VAL: "searcherMetricValue",
}




class ExperimentOrderBy(enum.Enum, metaclass=_util.DeprecatedOrderByEnum):
    """Deprecated: use :class:`OrderBy`."""

    ASCENDING = "ORDER_BY_ASC"
    DESCENDING = "ORDER_BY_DESC"

    def _to_bindings(self) -> str:
        return str(self.value)


class Experiment:
    """An experiment on the master.

    Attributes (as of the last :meth:`reload`): config, state (:class:`ExperimentState`),
    labels, archived, name, progress, description, notes, project_id, workspace_id.
    """

    def __init__(self, experiment_id: int, session: api.Session) -> None:
        self._id = experiment_id
        self._session = session
        self.config: Optional[Dict[str, Any]] = None
        self.state: Optional[ExperimentState] = None
        self.labels: Optional[Set[str]] = None
        self.archived: Optional[bool] = None
        self.name: Optional[str] = None
        self.progress: Optional[float] = None
        self.description: Optional[str] = None
        self.notes: Optional[str] = None
        self.project_id: Optional[int] = None
        self.workspace_id: Optional[int] = None

    @property
    def id(self) -> int:
        return self._id

    def _hydrate(self, exp: Dict[str, Any]) -> None:
        self.config = exp.get("config")
        self.state = _util.parse_enum(ExperimentState, exp.get("state"))
        self.archived = exp.get("archived")
        self.name = exp.get("name")
        self.progress = exp.get("progress")
        self.description = exp.get("description")
        self.notes = exp.get("notes")
        self.labels = set(exp["labels"]) if exp.get("labels") else None
        self.project_id = exp.get("projectId")
        self.workspace_id = exp.get("workspaceId")

    @classmethod
    def _from_json(cls, exp: Dict[str, Any], session: api.Session) -> "Experiment":
        e = cls(int(exp["id"]), session)
        e._hydrate(exp)
        return e

    def reload(self) -> None:
        """Reads the experiment again from the master."""
        self._hydrate(self._session.get(f"/api/v1/experiments/{self._id}")["experiment"])

    def __repr__(self) -> str:
        return f"Experiment(id={self.id})"

    # -- editing -------------------------------------------------------------------------
    def _patch(self, **fields: Any) -> Dict[str, Any]:
        resp = self._session.patch(f"/api/v1/experiments/{self._id}",
                                   json_body=dict(fields, id=self._id))
        exp = (resp or {}).get("experiment")
        if isinstance(exp, dict):
            return exp
        return self._session.get(f"/api/v1/experiments/{self._id}")["experiment"]

    def set_name(self, name: str) -> None:
        self.name = self._patch(name=name).get("name")

    def set_description(self, description: str) -> None:
        self.description = self._patch(description=description).get("description")

    def set_notes(self, notes: str) -> None:
        self.notes = self._patch(notes=notes).get("notes")

    def set_labels(self, labels: Set[str]) -> None:
        got = self._patch(labels=sorted(labels)).get("labels")
        self.labels = set(got) if got else None

    def add_label(self, label: str) -> None:
        resp = self._session.put(f"/api/v1/experiments/{self._id}/labels/"
                                 f"{urllib.parse.quote(label, safe='')}")
        self.labels = set((resp or {}).get("labels") or [])

    def remove_label(self, label: str) -> None:
        resp = self._session.delete(f"/api/v1/experiments/{self._id}/labels/"
                                    f"{urllib.parse.quote(label, safe='')}")
        self.labels = set((resp or {}).get("labels") or [])

    # -- control -------------------------------------------------------------------------
    def activate(self) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/activate")

    def pause(self) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/pause")

    def cancel(self) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/cancel")

    def kill(self) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/kill")

    def archive(self) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/archive")
        self.archived = True

    def unarchive(self) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/unarchive")
        self.archived = False

    def delete(self) -> None:
        """Deletes the experiment, its trials and checkpoints (asynchronously, on the master).
        Only an experiment that has ended can be deleted."""
        self._session.delete(f"/api/v1/experiments/{self._id}")

    def move_to_project(self, workspace_name: str, project_name: str) -> None:
        """Moves the experiment into a project of a workspace."""
        from determined.common.experimental import workspace

        proj = workspace.Workspace(session=self._session,
                                   workspace_name=workspace_name).get_project(project_name)
        self._session.post(f"/api/v1/experiments/{self._id}/move",
                           json_body={"experimentId": self._id, "destinationProjectId": proj.id})
        self.project_id = proj.id
        self.workspace_id = proj.workspace_id

    def wait(self, interval: float = 5.0) -> ExperimentState:
        """Waits until the experiment ends and returns its state; raises ValueError when it is
        paused (it would never end)."""
        start = time.monotonic()
        next_note = 60.0
        while True:
            self.reload()
            if self.state in TERMINAL_STATES:
                return self.state  # type: ignore[return-value]
            if self.state == ExperimentState.PAUSED:
                raise ValueError(f"Experiment {self.id} is in paused state. Make sure the "
                                 "experiment is active.")
            time.sleep(interval)
            elapsed = time.monotonic() - start
            if elapsed >= next_note:
                print(f"Waiting for Experiment {self.id} to complete. Elapsed "
                      f"{elapsed / 60:.1f} minutes", file=sys.stderr)
                next_note += 60.0

    def download_code(self, output_dir: Optional[str] = None) -> str:
        """Writes the experiment's model definition as ``exp-<id>_model_def.tar.gz`` into
        ``output_dir`` (default: the current directory); returns its path."""
        resp = self._session.get(f"/api/v1/experiments/{self._id}/model_def")
        name = f"exp-{self.id}_model_def.tar.gz"
        if output_dir:
            out = pathlib.Path(output_dir).expanduser()
            out.mkdir(parents=True, exist_ok=True)
            out = out / name
        else:
            out = pathlib.Path(name)
        out.write_bytes(base64.b64decode(resp["b64Tgz"]))
        return str(out)

    def delete_tensorboard_files(self) -> None:
        """Deletes the TensorBoard files the experiment's trials wrote."""
        self._session.delete(f"/api/v1/experiments/{self._id}/tensorboard-files")

    def get_pachyderm_config(self) -> Dict[str, Any]:
        if not self.config:
            self.reload()
        try:
            return dict(self.config["integrations"]["pachyderm"])  # type: ignore[index]
        except (KeyError, TypeError):
            raise ValueError(f"No Pachyderm configuration found for experiment {self.id}.")

    # -- trials --------------------------------------------------------------------------
    def _trials_json(self) -> List[Dict[str, Any]]:
        return _util.read_all(self._session, f"/api/v1/experiments/{self._id}/trials", "trials")

    def iter_trials(self, sort_by: trial.TrialSortBy = trial.TrialSortBy.ID,
                    order_by: OrderBy = OrderBy.ASCENDING, limit: Optional[int] = None,
                    states: Optional[List[trial.TrialState]] = None) -> Iterator[trial.Trial]:
        """The experiment's trials, sorted; ``states`` keeps only trials in those states."""
        found = self._trials_json()
        if states:
            wanted = {getattr(s, "value", s) for s in states}
            found = [t for t in found if t.get("state") in wanted]
        found = trial.sort_trials(found, trial.TrialSortBy(sort_by), order_by)
        if limit is not None:
            found = found[:limit]
        for t in found:
            yield trial.Trial._from_json(t, self._session)

    def list_trials(self, sort_by: trial.TrialSortBy = trial.TrialSortBy.ID,
                    order_by: OrderBy = OrderBy.ASCENDING,
                    states: Optional[List[trial.TrialState]] = None) -> List[trial.Trial]:
        return list(self.iter_trials(sort_by, order_by, states=states))

    def get_trials(self, sort_by: trial.TrialSortBy = trial.TrialSortBy.ID,
                   order_by: OrderBy = OrderBy.ASCENDING) -> List[trial.Trial]:
        """Deprecated: use :meth:`list_trials`."""
        warnings.warn("Experiment.get_trials() is deprecated; use Experiment.list_trials() "
                      "instead.", FutureWarning, stacklevel=2)
        return self.list_trials(sort_by, order_by)

    def await_first_trial(self, interval: float = 0.1) -> trial.Trial:
        """Waits until the experiment has a trial and returns the first one."""
        while True:
            self.reload()
            found = trial.sort_trials(self._trials_json(), trial.TrialSortBy.START_TIME,
                                      OrderBy.ASC)
            if found:
                return trial.Trial._from_json(found[0], self._session)
            if self.state in TERMINAL_STATES:
                raise RuntimeError("This experiment has terminated before a trial was started. "
                                   f"Experiment is in state {self.state}.")
            time.sleep(interval)

    # -- checkpoints ---------------------------------------------------------------------
    def list_checkpoints(
        self,
        sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]] = None,
        order_by: Optional[OrderBy] = None,
        max_results: Optional[int] = None,
    ) -> List[checkpoint.Checkpoint]:
        """The experiment's completed checkpoints, sorted by an attribute or a validation
        metric name (both or neither of ``sort_by`` and ``order_by``; neither: best searcher
        metric first); at most ``max_results``."""
        return trial._list_checkpoints(self._session, f"/api/v1/experiments/{self._id}/checkpoints",
                                       sort_by, order_by, max_results, completed_only=True)

    def top_checkpoint(self, sort_by: Optional[str] = None,
                       smaller_is_better: Optional[bool] = None) -> checkpoint.Checkpoint:
        """Deprecated: the best checkpoint, by ``sort_by`` (a validation metric) or, without
        it, the searcher metric."""
        warnings.warn("Experiment.top_checkpoint() is deprecated; use "
                      "Experiment.list_checkpoints(..., max_results=1) instead.",
                      FutureWarning, stacklevel=2)
        order_by = None
        if sort_by:
            order_by = OrderBy.ASC if smaller_is_better else OrderBy.DESC
        found = self.list_checkpoints(sort_by=sort_by, order_by=order_by, max_results=1)
        if not found:
            raise AssertionError(f"No checkpoints found for experiment {self.id}")
        return found[0]

    def top_n_checkpoints(self, limit: int, sort_by: Optional[str] = None,
                          smaller_is_better: Optional[bool] = None) -> List[checkpoint.Checkpoint]:
        """Deprecated: the best checkpoint of each of the ``limit`` best trials."""
        warnings.warn("Experiment.top_n_checkpoints() is deprecated; use "
                      "Experiment.list_checkpoints(..., max_results=n) instead.",
                      FutureWarning, stacklevel=2)
        found = self.list_checkpoints()
        if not found:
            raise AssertionError(f"No checkpoint found for experiment {self.id}")
        if not sort_by:
            searcher = (found[0].training.experiment_config if found[0].training else {}).get(
                "searcher", {})
            if not isinstance(searcher.get("metric"), str):
                raise ValueError("no searcher.metric found in experiment config; please provide "
                                 "a sort_by metric")
            sort_by = searcher["metric"]
            smaller_is_better = searcher.get("smaller_is_better", True)
        reverse = not smaller_is_better

        def key(c: checkpoint.Checkpoint) -> Any:
            vm = (c.training.validation_metrics if c.training else {}) or {}
            v = (vm.get("avgMetrics") or {}).get(sort_by)
            return (v is not None, v) if reverse else (v is None, v)

        found.sort(key=key, reverse=reverse)
        seen, out = set(), []
        for c in found:
            tid = c.training.trial_id if c.training else None
            if tid not in seen:
                seen.add(tid)
                out.append(c)
        return out[:limit]


class ExperimentReference(Experiment):
    """Deprecated name of :class:`Experiment`."""

    def __init__(self, experiment_id: int, session: api.Session) -> None:
        warnings.warn("'ExperimentReference' was renamed to 'Experiment'.", FutureWarning,
                      stacklevel=2)
        Experiment.__init__(self, experiment_id=experiment_id, session=session)
