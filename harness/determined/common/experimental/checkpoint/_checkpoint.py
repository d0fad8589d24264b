"""Checkpoints in the client SDK: reading them, downloading their files, editing metadata."""

import dataclasses
import enum
import json
import logging
import os
import pathlib
import shutil
import tarfile
from typing import Any, Dict, Iterable, List, Optional

from determined import errors
from determined.common import api, storage
from determined.common.experimental import _util, metrics

logger = logging.getLogger("determined.client")



def _unsafe_member_reason(member: tarfile.TarInfo) -> Optional[str]:
    """Why a downloaded archive entry must not be extracted (None when it is safe): only
    regular files and directories at relative paths without '..' are."""
    name = pathlib.PurePosixPath(member.name)
    if name.is_absolute():
        return "has an absolute path (it would land outside the target directory)"
    if ".." in name.parts:
        return "has a '..' component (it would land outside the target directory)"
    if member.issym():
        return (f"is a symbolic link (to '{member.linkname}'): only regular files and "
                "directories are allowed")
    if member.islnk():
        return (f"is a hard link (to '{member.linkname}'): only regular files and directories "
                "are allowed")
    if not (member.isfile() or member.isdir()):
        return "is a device, fifo or other special file: only regular files and directories are allowed"
    return None


def _extract_member(tf: tarfile.TarFile, member: tarfile.TarInfo, target: pathlib.Path) -> None:
    """Extracts one checked entry under ``target`` without setuid/setgid bits and without
    writing through a symbolic link already there."""
    dest = target.joinpath(*pathlib.PurePosixPath(member.name).parts)
    cur = target
    for part in pathlib.PurePosixPath(member.name).parts:
        cur = cur / part
        if cur.is_symlink():
            raise errors.ProxiedDownloadFailed(
                f"archive entry '{member.name}': {cur} is a symbolic link; refusing to write "
                "through it")
    if member.isdir():
        dest.mkdir(parents=True, exist_ok=True)
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    src = tf.extractfile(member)
    assert src is not None
    fd = os.open(str(dest), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0),
                 0o600)
    with os.fdopen(fd, "wb") as out, src:
        shutil.copyfileobj(src, out)
    os.chmod(str(dest), member.mode & 0o777)

class DownloadMode(enum.Enum):
    """How :meth:`Checkpoint.download` fetches files.

    DIRECT: straight from the checkpoint storage (needs access to it from this machine).
    MASTER: through the master (``GET /checkpoints/{uuid}``, a gzipped tar).
    AUTO: DIRECT, and MASTER when the storage cannot be reached from here.
    """

    DIRECT = "direct"
    MASTER = "master"
    AUTO = "auto"

    def __str__(self) -> str:
        return self.value


class ModelFramework(enum.Enum):
    PYTORCH = 1
    TENSORFLOW = 2


class CheckpointState(enum.Enum):
    ACTIVE = "STATE_ACTIVE"
    COMPLETED = "STATE_COMPLETED"
    ERROR = "STATE_ERROR"
    DELETED = "STATE_DELETED"
    PARTIALLY_DELETED = "STATE_PARTIALLY_DELETED"




class CheckpointOrderBy(enum.Enum, metaclass=_util.DeprecatedOrderByEnum):
    """Deprecated: use :class:`OrderBy`."""

    ASC = "ORDER_BY_ASC"
    DESC = "ORDER_BY_DESC"

    def _to_bindings(self) -> str:
        return str(self.value)


class CheckpointSortBy(enum.Enum):
    """The attribute checkpoints are sorted by (a metric name, as a string, sorts by it)."""

    UUID = "SORT_BY_UUID"
    TRIAL_ID = "SORT_BY_TRIAL_ID"
    BATCH_NUMBER = "SORT_BY_BATCH_NUMBER"
    END_TIME = "SORT_BY_END_TIME"
    STATE = "SORT_BY_STATE"
    SEARCHER_METRIC = "SORT_BY_SEARCHER_METRIC"

    def _to_bindings(self) -> str:
        return str(self.value)


@dataclasses.dataclass
class CheckpointTrainingMetadata:
    """Where a checkpoint of a trial came from."""

    experiment_config: Dict[str, Any]
    experiment_id: int
    trial_id: int
    hparams: Dict[str, Any]
    validation_metrics: Dict[str, Any]

    @classmethod
    def _from_json(cls, tm: Optional[Dict[str, Any]]) -> "Optional[CheckpointTrainingMetadata]":
        if not tm or not tm.get("trialId"):
            return None
        return cls(
            experiment_config=tm.get("experimentConfig") or {},
            experiment_id=int(tm.get("experimentId") or 0),
            trial_id=int(tm["trialId"]),
            hparams=tm.get("hparams") or {},
            validation_metrics=tm.get("validationMetrics") or {},
        )


class Checkpoint:
    """A checkpoint: its files (see :meth:`download`), metadata and state.

    Attributes:
        uuid, task_id, allocation_id, report_time, resources (file name -> size), metadata,
        state (:class:`CheckpointState`), training (:class:`CheckpointTrainingMetadata`, None
        for a checkpoint not written by a trial).
    """

    def __init__(self, session: api.Session, uuid: str) -> None:
        self._session = session
        self.uuid = uuid
        self.task_id: Optional[str] = None
        self.allocation_id: Optional[str] = None
        self.report_time: Optional[str] = None
        self.resources: Optional[Dict[str, Any]] = None
        self.metadata: Optional[Dict[str, Any]] = None
        self.state: Optional[CheckpointState] = None
        self.training: Optional[CheckpointTrainingMetadata] = None

    # -- reading -------------------------------------------------------------------------
    def _hydrate(self, ckpt: Dict[str, Any]) -> None:
        self.task_id = ckpt.get("taskId")
        self.allocation_id = ckpt.get("allocationId")
        self.report_time = ckpt.get("reportTime")
        self.resources = ckpt.get("resources")
        self.metadata = ckpt.get("metadata")
        self.state = _util.parse_enum(CheckpointState, ckpt.get("state"))
        self.training = CheckpointTrainingMetadata._from_json(ckpt.get("training"))

    @classmethod
    def _from_json(cls, session: api.Session, checkpoint_json: Dict[str, Any]) -> "Checkpoint":
        """A Checkpoint from the master's JSON (``GET /api/v1/checkpoints/{uuid}``'s
        ``checkpoint``, or an item of a checkpoint list)."""
        ckpt = cls(session, checkpoint_json["uuid"])
        ckpt._hydrate(checkpoint_json)
        return ckpt

    def reload(self) -> None:
        """Reads the checkpoint again from the master."""
        self._hydrate(self._session.get(f"/api/v1/checkpoints/{self.uuid}")["checkpoint"])

    def __repr__(self) -> str:
        if self.training is not None:
            return (f"Checkpoint(uuid={self.uuid}, task_id={self.task_id},"
                    f" trial_id={self.training.trial_id})")
        return f"Checkpoint(uuid={self.uuid}, task_id={self.task_id})"

    # -- downloading ---------------------------------------------------------------------
    def download(self, path: Optional[str] = None, mode: DownloadMode = DownloadMode.AUTO) -> str:
        """Downloads the checkpoint's files into ``path`` (default ``checkpoints/<uuid>``) and
        returns that directory. A directory that already holds ``metadata.json`` (or
        ``MLmodel``) is left as it is. ``metadata.json`` is written when the files lack it."""
        if isinstance(mode, str):
            mode = DownloadMode(mode)
        if self.state not in (CheckpointState.COMPLETED, CheckpointState.PARTIALLY_DELETED):
            if self.state is None:
                raise ValueError("Checkpoint state is unknown. Call Checkpoint.reload() first.")
            state = getattr(self.state, "value", self.state)
            raise errors.CheckpointStateException(
                "only COMPLETED or PARTIALLY_DELETED checkpoints can be downloaded; checkpoint "
                f"{self.uuid} is {state}")
        target = pathlib.Path(path) if path is not None else pathlib.Path("checkpoints", self.uuid)
        if not any(target.joinpath(m).exists() for m in ("metadata.json", "MLmodel")):
            if self.training is None:
                raise NotImplementedError("Non-training checkpoints cannot be downloaded")
            storage_config = self.training.experiment_config.get("checkpoint_storage")
            if mode == DownloadMode.DIRECT:
                self._download_direct(storage_config, target)
            elif mode == DownloadMode.MASTER:
                self._download_via_master(self._session, self.uuid, target)
            elif mode == DownloadMode.AUTO:
                self._download_auto(storage_config, target)
            else:
                raise ValueError(f"mode: unknown download mode {mode!r}")
        metadata_path = target / "metadata.json"
        if not metadata_path.exists():
            self.write_metadata_file(str(metadata_path))
        return str(target)

    def _download_auto(self, storage_config: Any, target: pathlib.Path) -> None:
        try:
            self._download_direct(storage_config, target)
            return
        except (errors.NoDirectStorageAccess, FileNotFoundError, PermissionError, ImportError) as e:
            if isinstance(storage_config, dict) and storage_config.get("type") == "azure":
                raise
            logger.info("cannot download checkpoint %s directly (%s); downloading through "
                        "the master", self.uuid, e)
        try:
            self._download_via_master(self._session, self.uuid, target)
        except Exception as e:
            raise errors.MultipleDownloadsFailed(
                f"checkpoint {self.uuid}: both the direct download and the download through the "
                f"master failed ({e})") from e

    def _download_direct(self, storage_config: Any, target: pathlib.Path) -> None:
        if not storage_config:
            raise errors.NoDirectStorageAccess(
                f"checkpoint {self.uuid}: its experiment config has no checkpoint_storage")
        manager = storage.build(storage_config)
        target.mkdir(parents=True, exist_ok=True)
        manager.download(self.uuid, str(target))

    @staticmethod
    def _download_via_master(session: api.Session, uuid: str, target: pathlib.Path) -> None:
        """Streams ``GET /checkpoints/{uuid}`` (a gzipped tar) into ``target``."""
        target.mkdir(parents=True, exist_ok=True)
        try:
            resp = _util.open_raw(session, f"/checkpoints/{uuid}", "application/gzip",
                                  timeout=max(session.default_timeout, 600))
        except api.errors.APIException as e:
            raise errors.ProxiedDownloadFailed(
                f"unable to download checkpoint {uuid} from the master: {e}") from None
        with resp, tarfile.open(fileobj=resp, mode="r|*") as tf:
            for member in tf:
                reason = _unsafe_member_reason(member)
                if reason:
                    raise errors.ProxiedDownloadFailed(
                        f"checkpoint {uuid}: archive entry '{member.name}' {reason}")
                _extract_member(tf, member, target)

    def write_metadata_file(self, path: str) -> None:
        """Writes the checkpoint's metadata as JSON to ``path``."""
        with open(path, "w") as f:
            json.dump(self.metadata, f, indent=2)

    # -- editing -------------------------------------------------------------------------
    def _post_metadata(self, metadata: Dict[str, Any]) -> None:
        self._session.post(f"/api/v1/checkpoints/{self.uuid}/metadata",
                           json_body={"checkpoint": {"uuid": self.uuid, "metadata": metadata}})

    def add_metadata(self, metadata: Dict[str, Any]) -> None:
        """Adds (or replaces) top-level keys of the checkpoint's metadata."""
        updated = dict(self.metadata or {}, **metadata)
        self._post_metadata(updated)
        self.metadata = updated

    def remove_metadata(self, keys: List[str]) -> None:
        """Removes top-level keys of the checkpoint's metadata."""
        updated = {k: v for k, v in (self.metadata or {}).items() if k not in set(keys)}
        self._post_metadata(updated)
        self.metadata = updated

    def delete(self) -> None:
        """Deletes the checkpoint's files from storage (asynchronously, on the master)."""
        self._session.delete("/api/v1/checkpoints", json_body={"checkpointUuids": [self.uuid]})
        logger.info("Deletion of checkpoint %s is in progress.", self.uuid)

    def remove_files(self, globs: List[str]) -> None:
        """Removes the checkpoint's files matching ``globs`` (all files for ["**/*"])."""
        self._session.post("/api/v1/checkpoints/rm",
                           json_body={"checkpointUuids": [self.uuid], "checkpointGlobs": globs})
        logger.info("Removal of files of checkpoint %s is in progress.", self.uuid)

    def get_metrics(self, group: Optional[str] = None) -> Iterable[metrics.TrialMetrics]:
        """Metrics reported by trials (inference tasks) that said they used this checkpoint."""
        path = _util.query(f"/api/v1/checkpoints/{self.uuid}/metrics", {
            "trialSourceInfoType": "TRIAL_SOURCE_INFO_TYPE_INFERENCE", "metricGroup": group})
        for m in self._session.get(path).get("metrics") or []:
            yield metrics.TrialMetrics._from_json(m, group)

    def get_pachyderm_commit(self) -> str:
        if not self.training:
            self.reload()
        try:
            exp_conf = self.training.experiment_config  # type: ignore[union-attr]
            return str(exp_conf["integrations"]["pachyderm"]["dataset"]["commit"])
        except (KeyError, TypeError, AttributeError):
            raise ValueError(f"Pachyderm configuration not found for checkpoint {self.uuid}")
