"""CheckpointContext: save checkpoints to storage and register them with the master."""

import contextlib
import datetime
import enum
import json
import logging
import os
import pathlib
import uuid
from typing import Any, Callable, Dict, Iterator, Optional, Tuple, Union

from determined.common import api, storage
from determined.core._distributed import DistributedContext
from determined.core._tensorboard_mode import TensorboardMode

logger = logging.getLogger("determined.core")

METADATA_FILE = "metadata.json"


class DownloadMode(enum.Enum):
    """How workers share a checkpoint download (only relevant with several workers per node)."""

    LocalWorkersShareDownload = "LOCAL_WORKERS_SHARE_DOWNLOAD"
    NoSharedDownload = "NO_SHARED_DOWNLOAD"


def _check_metadata(metadata: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    metadata = dict(metadata or {})
    if "steps_completed" not in metadata:
        raise ValueError(
            "checkpoint metadata must include 'steps_completed' "
            "(for example {'steps_completed': batches_trained})"
        )
    return metadata


def _write_metadata(ckpt_dir: Union[str, os.PathLike], metadata: Dict[str, Any]) -> None:
    path = os.path.join(os.fspath(ckpt_dir), METADATA_FILE)
    with open(path, "w") as f:
        json.dump(api.json_compatible(metadata), f, indent=2)


class CheckpointContext:
    """Gives access to checkpoint-related features of a Determined cluster."""

    def __init__(
        self,
        dist: DistributedContext,
        storage_manager: storage.StorageManager,
        session: Optional[api.Session],
        task_id: Optional[str],
        allocation_id: Optional[str],
        tbd_sync_mode: TensorboardMode = TensorboardMode.AUTO,
        tensorboard_manager: Any = None,
        storage_backend_id: Optional[int] = None,
        *,
        flush: Optional[Callable[[], None]] = None,
    ) -> None:
        self._dist = dist
        self._storage_manager = storage_manager
        self._session = session
        self._task_id = task_id
        self._allocation_id = allocation_id
        self._tbd_sync_mode = tbd_sync_mode
        self._storage_backend_id = storage_backend_id
        self._flush = flush or (lambda: None)

    # -- saving ---------------------------------------------------------------------------
    def upload(
        self,
        ckpt_dir: Optional[Union[str, os.PathLike]],
        metadata: Optional[Dict[str, Any]] = None,
        *,
        shard: bool = False,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> str:
        """Upload the contents of ``ckpt_dir`` as a new checkpoint; returns its storage id."""
        self._check_caller("upload", shard)
        if ckpt_dir is None:
            if not shard:
                raise ValueError("ckpt_dir may only be None when shard=True")
        metadata = _check_metadata(metadata)
        storage_id = str(uuid.uuid4())
        if ckpt_dir is not None:
            _write_metadata(ckpt_dir, metadata)

            def sel(path: str) -> bool:
                return path == METADATA_FILE or selector is None or selector(path)

            self._storage_manager.upload(ckpt_dir, storage_id, selector=sel)
        else:
            with self._storage_manager.store_path(storage_id) as path:
                _write_metadata(path, metadata)
        self._report(storage_id, metadata)
        return storage_id

    @contextlib.contextmanager
    def store_path(
        self, metadata: Optional[Dict[str, Any]] = None, *, shard: bool = False
    ) -> Iterator[Tuple[pathlib.Path, str]]:
        """Context manager yielding ``(path, storage_id)``: save your model into ``path``.

        For filesystem storage the files are written in place; when the block exits,
        metadata.json is written and the checkpoint is reported to the master.
        """
        self._check_caller("store_path", shard)
        metadata = _check_metadata(metadata)
        storage_id = str(uuid.uuid4())
        with self._storage_manager.store_path(storage_id) as path:
            yield pathlib.Path(path), storage_id
            _write_metadata(path, metadata)
        self._report(storage_id, metadata)

    # -- loading --------------------------------------------------------------------------
    def download(
        self,
        storage_id: str,
        ckpt_dir: Union[str, os.PathLike],
        download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
        *,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> None:
        """Copy checkpoint ``storage_id`` into ``ckpt_dir`` (created if needed)."""
        DownloadMode(download_mode)
        self._storage_manager.download(storage_id, ckpt_dir, selector=selector)

    @contextlib.contextmanager
    def restore_path(
        self,
        storage_id: str,
        download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
        *,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> Iterator[pathlib.Path]:
        """Context manager yielding a local directory holding checkpoint ``storage_id``."""
        DownloadMode(download_mode)
        with self._storage_manager.restore_path(storage_id, selector=selector) as path:
            yield pathlib.Path(path)

    def get_metadata(self, storage_id: str) -> Dict[str, Any]:
        """The metadata of a checkpoint (from the master when on-cluster)."""
        if self._session is not None:
            try:
                resp = self._session.get(f"/api/v1/checkpoints/{storage_id}")
                ckpt = (resp or {}).get("checkpoint") or {}
                if isinstance(ckpt.get("metadata"), dict):
                    return ckpt["metadata"]
            except api.NotFoundError:
                pass
        path = self._storage_manager.path_of(storage_id) / METADATA_FILE
        try:
            with open(path) as f:
                return json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"checkpoint {storage_id} has no metadata ({path} is missing)") from None

    def delete(self, storage_id: str) -> None:
        """Delete a checkpoint from storage and tell the master its files are gone."""
        self._storage_manager.delete(storage_id)
        if self._session is None:
            return
        try:
            self._session.patch(
                "/api/v1/checkpoints",
                json_body={"checkpoints": [{"uuid": storage_id, "resources": {"resources": {}}}]},
            )
        except api.APIException as e:
            logger.warning("checkpoint %s deleted from storage, but the master was not told: %s", storage_id, e)

    # -- internals ------------------------------------------------------------------------
    def _check_caller(self, what: str, shard: bool) -> None:
        if shard:
            if self._dist.size > 1:
                raise NotImplementedError(
                    f"{what}(shard=True) with {self._dist.size} workers needs the multi-process "
                    "DistributedContext transport, which is not implemented yet"
                )
        elif self._dist.rank != 0:
            raise RuntimeError(f"{what}(shard=False) may only be called by the chief (rank 0)")

    def _report(self, storage_id: str, metadata: Dict[str, Any]) -> None:
        resources = storage.list_directory(self._storage_manager.path_of(storage_id))
        if self._session is None:
            logger.info("saved checkpoint %s to %s", storage_id, self._storage_manager.path_of(storage_id))
            return
        body: Dict[str, Any] = {
            "taskId": self._task_id,
            "allocationId": self._allocation_id,
            "uuid": storage_id,
            "reportTime": datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z"),
            "resources": {k: str(v) for k, v in resources.items()},
            "metadata": metadata,
            "state": "STATE_COMPLETED",
            "training": {},
        }
        if self._storage_backend_id is not None:
            body["storageId"] = self._storage_backend_id
        # Metrics reported before this checkpoint reach the master first.
        self._flush()
        self._session.post("/api/v1/checkpoints", json_body=body)
        logger.info("reported checkpoint %s (steps_completed=%s)", storage_id, metadata.get("steps_completed"))
