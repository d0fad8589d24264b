"""The model registry in the Python SDK: :class:`Model`, :class:`ModelVersion` and the functions
the client module delegates to (:func:`create_model`, :func:`get_model`, :func:`get_models`,
:func:`get_model_labels`).

Names, signatures and behaviour follow Determined 0.38's ``determined.common.experimental.model``;
the requests go straight to the master's ``/api/v1/models`` routes (there are no generated
bindings here). Attributes are cached: methods that change the model update them, and
``reload()`` reads them again from the master.
"""

import datetime
import enum
import re
import types
import urllib.parse
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from determined.common import api

try:  # OrderBy is shared with the rest of the SDK when that module is present.
    from determined.common.experimental._util import OrderBy  # type: ignore
except ImportError:  # pragma: no cover - depends on which SDK modules are installed

    class OrderBy(enum.Enum):  # type: ignore[no-redef]
        """Ascending or descending order of a sorted list."""

        ASCENDING = "ORDER_BY_ASC"
        ASC = "ORDER_BY_ASC"
        DESCENDING = "ORDER_BY_DESC"
        DESC = "ORDER_BY_DESC"


def _model_path(name: Union[str, int]) -> str:
    return "/api/v1/models/" + urllib.parse.quote(str(name), safe="")


def _parse_time(value: Optional[str]) -> Optional[datetime.datetime]:
    """An RFC 3339 time from the master as an aware datetime (None when missing)."""
    if not value:
        return None
    # As Determined's SDK: the sub-second part is dropped (fromisoformat before Python 3.11
    # reads only 3 or 6 fractional digits).
    text = re.sub(r"\.[0-9]*", "", value.replace("Z", "+00:00"))
    return datetime.datetime.fromisoformat(text)


def _order_value(order_by: Any) -> str:
    """ORDER_BY_ASC / ORDER_BY_DESC from an OrderBy-like enum, a string or a number."""
    value = getattr(order_by, "value", order_by)
    if hasattr(value, "value"):  # an enum wrapping a bindings enum
        value = value.value
    text = str(value).upper()
    if text in ("1", "ASC", "ASCENDING", "ORDER_BY_ASC"):
        return "ORDER_BY_ASC"
    if text in ("2", "DESC", "DESCENDING", "ORDER_BY_DESC"):
        return "ORDER_BY_DESC"
    if text in ("0", "ORDER_BY_UNSPECIFIED"):
        return "ORDER_BY_UNSPECIFIED"
    raise ValueError(f"order_by: unknown order {order_by!r} (want OrderBy.ASC or OrderBy.DESC)")


def _query(params: Dict[str, Any]) -> str:
    """A query string with repeated keys for lists (as the gRPC gateway reads them)."""
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            pairs.extend((key, str(v)) for v in value)
        elif isinstance(value, bool):
            pairs.append((key, str(value).lower()))
        else:
            pairs.append((key, str(value)))
    return ("?" + urllib.parse.urlencode(pairs)) if pairs else ""


def _trial_metrics(d: Dict[str, Any], group: Optional[str]) -> Any:
    """One MetricsReport as the SDK's TrialMetrics (a plain namespace with the same fields when
    that class is not installed)."""
    stored = d.get("metrics") or {}
    key = "validation_metrics" if group == "validation" and "validation_metrics" in stored else (
        "avg_metrics")
    fields = dict(
        trial_id=d.get("trialId"),
        trial_run_id=d.get("trialRunId"),
        steps_completed=d.get("totalBatches"),
        end_time=_parse_time(d.get("endTime")),
        metrics=stored.get(key, stored.get("validation_metrics", {})),
        batch_metrics=stored.get("batch_metrics"),
        group=d.get("group"),
    )
    try:
        from determined.common.experimental import metrics as metrics_module
    except ImportError:
        return types.SimpleNamespace(**fields)
    return metrics_module.TrialMetrics._from_json(d, group)


class _CheckpointFields:
    """The registered checkpoint's JSON as attributes (uuid, state, metadata, resources,
    training), used only when the SDK's Checkpoint class is not installed."""

    def __init__(self, d: Dict[str, Any]) -> None:
        self.uuid: str = d.get("uuid", "")
        self.state: str = d.get("state", "")
        self.metadata: Dict[str, Any] = d.get("metadata") or {}
        self.resources: Dict[str, Any] = d.get("resources") or {}
        self.training: Dict[str, Any] = d.get("training") or {}

    def __repr__(self) -> str:
        return f"Checkpoint(uuid={self.uuid})"


class ModelVersion:
    """A checkpoint registered under a model's name and a version number.

    Fetched with :meth:`Model.get_version` or :meth:`Model.list_versions`, or returned by
    :meth:`Model.register_version`.

    Attributes:
        model_version: (int) The version number, from 1 upwards.
        model_name: (str) The name of the model.
        model_id: (int) The id of the model.
        checkpoint_uuid: (str) The uuid of the registered checkpoint.
        checkpoint: The registered :class:`~determined.experimental.Checkpoint`.
        metadata, name, comment, notes, labels: as stored in the registry.
    """

    def __init__(self, session: api.Session, model_version: int, model_name: str):
        self._session = session
        self.model_name = model_name
        self.model_version = model_version
        self.model_id: Optional[int] = None
        self.checkpoint_uuid: Optional[str] = None
        self.metadata: Optional[Dict[str, Any]] = None
        self.name: Optional[str] = None
        self.comment: Optional[str] = None
        self.notes: Optional[str] = None
        self.labels: Optional[List[str]] = None
        self.username: Optional[str] = None
        self.creation_time: Optional[datetime.datetime] = None
        self.last_updated_time: Optional[datetime.datetime] = None
        self._checkpoint_json: Optional[Dict[str, Any]] = None
        self._checkpoint: Any = None

    # -- the checkpoint -----------------------------------------------------------------------
    @property
    def checkpoint(self) -> Any:
        """The registered checkpoint, built by the SDK's ``Checkpoint._from_json``."""
        if self._checkpoint is None and self._checkpoint_json is not None:
            try:
                from determined.common.experimental import checkpoint as checkpoint_module
            except ImportError:  # an SDK without the Checkpoint class: the fields as given
                self._checkpoint = _CheckpointFields(self._checkpoint_json)
            else:
                self._checkpoint = checkpoint_module.Checkpoint._from_json(
                    self._session, self._checkpoint_json
                )
        return self._checkpoint

    @checkpoint.setter
    def checkpoint(self, value: Any) -> None:
        self._checkpoint = value

    # -- changes -------------------------------------------------------------------------------
    def _path(self) -> str:
        # The model's id, once known, keeps working after the model is renamed.
        model = self.model_id if self.model_id is not None else self.model_name
        return f"{_model_path(model)}/versions/{self.model_version}"

    def _patch(self, body: Dict[str, Any]) -> None:
        resp = self._session.patch(self._path(), json_body=body)
        if isinstance(resp, dict) and isinstance(resp.get("modelVersion"), dict):
            self._hydrate(resp["modelVersion"])

    def set_name(self, name: str) -> None:
        """Sets the human-friendly name of this model version."""
        self._patch({"name": name})
        self.name = name

    def set_notes(self, notes: str) -> None:
        """Replaces the notes (readme) of this model version."""
        self._patch({"notes": notes})
        self.notes = notes

    def set_comment(self, comment: str) -> None:
        """Replaces the comment of this model version."""
        self._patch({"comment": comment})
        self.comment = comment

    def set_labels(self, labels: Iterable[str]) -> None:
        """Replaces the labels of this model version."""
        labels = list(labels)
        self._patch({"labels": labels})
        self.labels = labels

    def add_metadata(self, metadata: Dict[str, Any]) -> None:
        """Adds ``metadata``'s top-level keys to the version's metadata (replacing equal keys)."""
        if not isinstance(metadata, dict):
            raise ValueError(f"add_metadata() requires a dict but got: {metadata!r}")
        updated = dict(self.metadata or {}, **metadata)
        self._patch({"metadata": updated})
        self.metadata = updated

    def remove_metadata(self, keys: List[str]) -> None:
        """Removes these top-level keys from the version's metadata."""
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"remove_metadata() requires a list of strings but got: {keys!r}")
        updated = {k: v for k, v in (self.metadata or {}).items() if k not in keys}
        self._patch({"metadata": updated})
        self.metadata = updated

    def iter_metrics(self, group: Optional[str] = None) -> Iterator[Any]:
        """The metrics (of ``group``, or all) reported by the tasks that used this version
        (``core_context.experimental.report_task_using_model_version``), by trial then step."""
        resp = self._session.get(
            f"{self._path()}/metrics"
            + _query({"trialSourceInfoType": "TRIAL_SOURCE_INFO_TYPE_INFERENCE",
                      "metricGroup": group})
        )
        for d in resp.get("metrics") or []:
            yield _trial_metrics(d, group)

    def get_metrics(self, group: Optional[str] = None) -> Iterator[Any]:
        warnings.warn(
            "ModelVersion.get_metrics() is deprecated; call ModelVersion.iter_metrics() instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.iter_metrics(group=group)

    def delete(self) -> None:
        """Deletes this model version from the registry (the checkpoint stays)."""
        self._session.delete(self._path())

    def reload(self) -> None:
        """Reads every attribute again from the master."""
        resp = self._session.get(self._path())
        self._hydrate(resp["modelVersion"])

    # -- construction --------------------------------------------------------------------------
    def _hydrate(self, d: Dict[str, Any]) -> None:
        model = d.get("model") or {}
        self.model_version = d.get("version", self.model_version)
        self.model_name = model.get("name", self.model_name)
        self.model_id = model.get("id")
        ckpt = d.get("checkpoint") or None
        if ckpt is not None and ckpt != self._checkpoint_json:
            self._checkpoint_json = ckpt
            self._checkpoint = None
        self.checkpoint_uuid = (ckpt or {}).get("uuid", self.checkpoint_uuid)
        self.metadata = d.get("metadata") or {}
        self.name = d.get("name") or ""
        self.comment = d.get("comment") or ""
        self.notes = d.get("notes") or ""
        self.labels = list(d.get("labels") or [])
        self.username = d.get("username") or ""
        self.creation_time = _parse_time(d.get("creationTime"))
        self.last_updated_time = _parse_time(d.get("lastUpdatedTime"))

    @classmethod
    def _from_json(cls, session: api.Session, d: Dict[str, Any]) -> "ModelVersion":
        """A ModelVersion from the master's JSON (a ``modelVersion`` object)."""
        version = cls(session, model_version=d["version"], model_name=d["model"]["name"])
        version._hydrate(d)
        return version

    def __repr__(self) -> str:
        return (
            f"ModelVersion(model_name={self.model_name}, model_version={self.model_version}, "
            f"checkpoint_uuid={self.checkpoint_uuid})"
        )


class ModelSortBy(enum.Enum):
    """The field a list of models is sorted on."""

    NAME = "SORT_BY_NAME"
    DESCRIPTION = "SORT_BY_DESCRIPTION"
    CREATION_TIME = "SORT_BY_CREATION_TIME"
    LAST_UPDATED_TIME = "SORT_BY_LAST_UPDATED_TIME"
    NUM_VERSIONS = "SORT_BY_NUM_VERSIONS"
    WORKSPACE = "SORT_BY_WORKSPACE"


class ModelOrderBy(enum.Enum):
    """Ascending or descending order of a list of models.

    Deprecated in favour of ``OrderBy`` (as in Determined).
    """

    ASCENDING = "ORDER_BY_ASC"
    ASC = "ORDER_BY_ASC"
    DESCENDING = "ORDER_BY_DESC"
    DESC = "ORDER_BY_DESC"


class Model:
    """A model in the model registry, holding numbered versions of checkpoints.

    Obtained from :func:`create_model`, :func:`get_model` or :func:`get_models` (and the client
    functions of the same names).
    """

    def __init__(self, session: api.Session, name: str):
        self._session = session
        self.name = name
        self.model_id: Optional[int] = None
        self.description: Optional[str] = None
        self.creation_time: Optional[datetime.datetime] = None
        self.last_updated_time: Optional[datetime.datetime] = None
        self.metadata: Optional[Dict[str, Any]] = None
        self.labels: Optional[List[str]] = None
        self.username: Optional[str] = None
        self.workspace_id: Optional[int] = None
        self.archived: Optional[bool] = None
        self.notes: Optional[str] = None
        self.num_versions: Optional[int] = None

    # -- versions ------------------------------------------------------------------------------
    def _path(self) -> str:
        # The id, once known, keeps working after a rename by another client.
        return _model_path(self.model_id if self.model_id is not None else self.name)

    def get_version(self, version: int = -1) -> Optional[ModelVersion]:
        """The model version numbered ``version``; the newest one by default (None when the
        model has no versions). An unknown version number raises ``NotFoundException``."""
        if version == -1:
            resp = self._session.get(
                f"{self._path()}/versions"
                + _query({"limit": 1, "sortBy": "SORT_BY_VERSION", "orderBy": "ORDER_BY_DESC"})
            )
            versions = resp.get("modelVersions") or []
            return ModelVersion._from_json(self._session, versions[0]) if versions else None
        resp = self._session.get(f"{self._path()}/versions/{int(version)}")
        return ModelVersion._from_json(self._session, resp["modelVersion"])

    def list_versions(self, order_by: Any = OrderBy.DESC) -> List[ModelVersion]:
        """Every version of the model, by version number (newest first by default)."""
        order = _order_value(order_by)

        def page(offset: int) -> Dict[str, Any]:
            return self._session.get(
                f"{self._path()}/versions"
                + _query({"sortBy": "SORT_BY_VERSION", "orderBy": order, "offset": offset})
            )

        out: List[ModelVersion] = []
        for p in api.read_paginated(page):
            out.extend(ModelVersion._from_json(self._session, d) for d in p.get("modelVersions") or [])
        return out

    def get_versions(self, order_by: Any = OrderBy.DESC) -> List[ModelVersion]:
        warnings.warn(
            "Model.get_versions() is deprecated; call Model.list_versions() instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.list_versions(order_by=order_by)

    def register_version(self, checkpoint_uuid: Any) -> ModelVersion:
        """Registers the checkpoint (a uuid, or a Checkpoint) as the model's next version.

        The checkpoint must exist and be COMPLETED, and the model must not be archived.
        """
        uuid = getattr(checkpoint_uuid, "uuid", checkpoint_uuid)
        resp = self._session.post(
            f"{self._path()}/versions",
            json_body={"checkpointUuid": str(uuid), "modelName": self.name},
        )
        d = resp["modelVersion"]
        if d.get("model"):
            self._hydrate(d["model"])  # the version count changed
        return ModelVersion._from_json(self._session, d)

    # -- changes -------------------------------------------------------------------------------
    def _patch(self, body: Dict[str, Any]) -> None:
        resp = self._session.patch(self._path(), json_body=body)
        if isinstance(resp, dict) and isinstance(resp.get("model"), dict):
            self._hydrate(resp["model"])

    def add_metadata(self, metadata: Dict[str, Any]) -> None:
        """Adds ``metadata``'s top-level keys to the model's metadata, replacing equal keys."""
        if not isinstance(metadata, dict):
            raise ValueError(f"add_metadata() requires a dict but got: {metadata!r}")
        self._patch({"metadata": dict(self.metadata or {}, **metadata)})

    def remove_metadata(self, keys: List[str]) -> None:
        """Removes these top-level keys from the model's metadata."""
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"remove_metadata() requires a list of strings but got: {keys!r}")
        self._patch({"metadata": {k: v for k, v in (self.metadata or {}).items() if k not in keys}})

    def set_labels(self, labels: Iterable[str]) -> None:
        """Replaces the model's labels."""
        if isinstance(labels, str):
            raise ValueError(f"set_labels() requires a list of strings but got: {labels!r}")
        self._patch({"labels": list(labels)})

    def add_label(self, label: str) -> None:
        """Adds one label (no-op when the model has it)."""
        labels = list(self.labels or [])
        if label not in labels:
            self.set_labels(labels + [label])

    def remove_label(self, label: str) -> None:
        """Removes one label (no-op when the model does not have it)."""
        self.set_labels([x for x in (self.labels or []) if x != label])

    def set_description(self, description: str) -> None:
        self._patch({"description": description})

    def set_notes(self, notes: str) -> None:
        self._patch({"notes": notes})

    def set_name(self, name: str) -> None:
        """Renames the model (names are unique)."""
        self._patch({"name": name})
        self.name = name

    def move_to_workspace(self, workspace_name: str) -> None:
        """Moves the model to the workspace of that name."""
        self._patch({"workspaceName": workspace_name})

    def archive(self) -> None:
        """Archives the model: it keeps its versions but refuses changes and new versions."""
        self._session.post(f"{self._path()}/archive")
        self.archived = True

    def unarchive(self) -> None:
        self._session.post(f"{self._path()}/unarchive")
        self.archived = False

    def delete(self) -> None:
        """Deletes the model and its versions from the registry (checkpoints stay)."""
        self._session.delete(self._path())

    def reload(self) -> None:
        """Reads every attribute again from the master."""
        self._hydrate(self._session.get(self._path())["model"])

    # -- construction --------------------------------------------------------------------------
    def _hydrate(self, d: Dict[str, Any]) -> None:
        self.model_id = d.get("id")
        self.name = d.get("name", self.name)
        self.description = d.get("description") or ""
        self.creation_time = _parse_time(d.get("creationTime"))
        self.last_updated_time = _parse_time(d.get("lastUpdatedTime"))
        self.metadata = d.get("metadata") or {}
        self.labels = list(d.get("labels") or [])
        self.username = d.get("username") or ""
        self.workspace_id = d.get("workspaceId")
        self.archived = bool(d.get("archived", False))
        self.notes = d.get("notes") or ""
        self.num_versions = d.get("numVersions")

    @classmethod
    def _from_json(cls, session: api.Session, d: Dict[str, Any]) -> "Model":
        """A Model from the master's JSON (a ``model`` object)."""
        model = cls(session, name=d["name"])
        model._hydrate(d)
        return model

    def __repr__(self) -> str:
        return f"Model(id={self.model_id}, name={self.name}, metadata={self.metadata})"


# -- module-level functions (what the client SDK delegates to) ---------------------------------


def create_model(
    session: api.Session,
    name: str,
    description: Optional[str] = "",
    metadata: Optional[Dict[str, Any]] = None,
    labels: Optional[List[str]] = None,
    workspace_name: Optional[str] = None,
) -> Model:
    """Adds a model named ``name`` (unique) to the registry and returns it."""
    body: Dict[str, Any] = {
        "name": name,
        "description": description or "",
        "metadata": metadata or {},
        "labels": list(labels or []),
    }
    if workspace_name is not None:
        body["workspaceName"] = workspace_name
    resp = session.post("/api/v1/models", json_body=body)
    return Model._from_json(session, resp["model"])


def get_model(session: api.Session, identifier: Union[str, int]) -> Model:
    """The model with this name, or this id when ``identifier`` is an int (or all digits)."""
    resp = session.get(_model_path(identifier))
    return Model._from_json(session, resp["model"])


def get_models(
    session: api.Session,
    sort_by: Any = ModelSortBy.NAME,
    order_by: Any = OrderBy.ASCENDING,
    name: Optional[str] = None,
    description: Optional[str] = None,
    model_id: Optional[int] = None,
    workspace_names: Optional[List[str]] = None,
    workspace_ids: Optional[List[int]] = None,
) -> List[Model]:
    """Every model of the registry matching the filters (``name`` and ``description`` match
    case-insensitive substrings), sorted by ``sort_by`` in ``order_by`` order."""
    sort = getattr(sort_by, "value", sort_by)
    params = {
        "sortBy": sort,
        "orderBy": _order_value(order_by),
        "name": name,
        "description": description,
        "id": model_id,
        "workspaceNames": workspace_names,
        "workspaceIds": workspace_ids,
    }

    def page(offset: int) -> Dict[str, Any]:
        return session.get("/api/v1/models" + _query(dict(params, offset=offset)))

    out: List[Model] = []
    for p in api.read_paginated(page):
        out.extend(Model._from_json(session, d) for d in p.get("models") or [])
    return out


def list_models(session: api.Session, **kwargs: Any) -> List[Model]:
    """The same as :func:`get_models` (Determined's newer name)."""
    return get_models(session, **kwargs)


def get_model_labels(session: api.Session) -> List[str]:
    """Every label used on a model, the most used first."""
    return list(session.get("/api/v1/model/labels").get("labels") or [])


__all__ = [
    "Model",
    "ModelOrderBy",
    "ModelSortBy",
    "ModelVersion",
    "OrderBy",
    "create_model",
    "get_model",
    "get_model_labels",
    "get_models",
    "list_models",
]
