"""CheckpointContext: save checkpoints to storage and register them with the master."""

import contextlib
import datetime
import enum
import json
import logging
import os
import pathlib
import shutil
import tempfile
import uuid
from typing import Any, Callable, Dict, Iterator, Optional, Tuple, Union

from determined.common import api, storage
from determined.common.storage import sharding
from determined.common.storage.base import select as _select
from determined.core._distributed import DistributedContext
from determined.core._tensorboard_mode import TensorboardMode

logger = logging.getLogger("determined.core")

METADATA_FILE = "metadata.json"


class DownloadMode(enum.Enum):
    """How the workers of one node share a checkpoint download.

    ``LocalWorkersShareDownload``: all workers call; the local chief (local_rank 0) downloads
    the union of what the workers' selectors accept, the others wait for it.
    ``NoSharedDownload``: every worker downloads on its own.
    """

    LocalWorkersShareDownload = "LocalWorkersShareDownload"
    NoSharedDownload = "NoSharedDownload"


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
        if shard:
            return self._upload_sharded(ckpt_dir, metadata, selector)
        self._check_chief("upload")
        if ckpt_dir is None:
            raise ValueError("ckpt_dir may only be None when shard=True")
        metadata = _check_metadata(metadata)
        storage_id = str(uuid.uuid4())
        _write_metadata(ckpt_dir, metadata)

        def sel(path: str) -> bool:
            return path == METADATA_FILE or selector is None or selector(path)

        self._storage_manager.upload(ckpt_dir, storage_id, selector=sel)
        self._report(storage_id, metadata)
        return storage_id

    @contextlib.contextmanager
    def store_path(
        self, metadata: Optional[Dict[str, Any]] = None, *, shard: bool = False
    ) -> Iterator[Tuple[pathlib.Path, str]]:
        """Context manager yielding ``(path, storage_id)``: save your model into ``path``.

        For filesystem storage the files are written in place; otherwise they are staged
        locally and uploaded when the block exits. Then metadata.json is written and the
        checkpoint is reported to the master.
        """
        if shard:
            with self._store_path_sharded(metadata) as pair:
                yield pair
            return
        self._check_chief("store_path")
        metadata = _check_metadata(metadata)
        storage_id = str(uuid.uuid4())
        sm = self._storage_manager
        path = sm.pre_store_path(storage_id)
        try:
            yield pathlib.Path(path), storage_id
            _write_metadata(path, metadata)
            sm.post_store_path(storage_id, path)
        finally:
            if not sm.in_place:
                sm.cleanup_store_path(path)
        self._report(storage_id, metadata)

    # -- sharded saving ---------------------------------------------------------------------
    def _choose_storage_id(self, metadata: Optional[Dict[str, Any]]) -> Tuple[str, Dict[str, Any]]:
        """The chief checks the metadata and picks the storage id; every rank learns both."""
        proposal: Tuple[Optional[str], Optional[Dict[str, Any]], Optional[str]] = (None, None, None)
        if self._dist.rank == 0:
            try:
                proposal = (str(uuid.uuid4()), _check_metadata(metadata), None)
            except ValueError as e:
                proposal = (None, None, str(e))
        storage_id, meta, err = self._dist.broadcast(proposal)
        if err is not None:
            raise ValueError(err)
        return storage_id, meta

    def _all_ok(self, err: Optional[str], what: str, storage_id: str) -> None:
        errors = [e for e in self._dist.allgather(err) if e]
        if errors:
            raise RuntimeError(f"{what} of checkpoint {storage_id} failed: " + "; ".join(errors))

    def _upload_metadata(self, storage_id: str, metadata: Dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory(prefix="determined-metadata-") as tmp:
            _write_metadata(tmp, metadata)
            self._storage_manager.upload(tmp, storage_id, paths={METADATA_FILE})

    def _upload_sharded(
        self,
        ckpt_dir: Optional[Union[str, os.PathLike]],
        metadata: Optional[Dict[str, Any]],
        selector: Optional[Callable[[str], bool]],
    ) -> str:
        storage_id, metadata = self._choose_storage_id(metadata)
        mine: storage.Resources = {}
        if ckpt_dir is not None:
            mine = storage.select(storage.list_directory(ckpt_dir), selector)
            mine.pop(METADATA_FILE, None)  # the chief writes the checkpoint's metadata.json
        # Every rank sees the same lists, so every rank rejects a conflict the same way.
        sharding.merge_resources(self._dist.allgather(mine))
        err: Optional[str] = None
        try:
            if any(not p.endswith("/") for p in mine):
                self._storage_manager.upload(ckpt_dir, storage_id, paths=set(mine))  # type: ignore[arg-type]
            if self._dist.rank == 0:
                self._upload_metadata(storage_id, metadata)
        except Exception as e:
            logger.exception("rank %d: uploading its shard of checkpoint %s failed", self._dist.rank, storage_id)
            err = f"rank {self._dist.rank}: {e}"
        self._all_ok(err, "sharded upload", storage_id)
        if self._dist.rank == 0:
            self._report(storage_id, metadata)
        return storage_id

    @contextlib.contextmanager
    def _store_path_sharded(
        self, metadata: Optional[Dict[str, Any]]
    ) -> Iterator[Tuple[pathlib.Path, str]]:
        storage_id, metadata = self._choose_storage_id(metadata)
        sm = self._storage_manager
        # In-place storage: every worker writes into the checkpoint itself. Otherwise the
        # workers of one node share a staging directory that their local chief uploads.
        path = sm.pre_store_path(storage_id, tag=f"node{self._dist.cross_rank}")
        uploader = sm.in_place or self._dist.local_rank == 0
        try:
            err: Optional[str] = None
            try:
                yield pathlib.Path(path), storage_id
            except BaseException as e:
                err = f"rank {self._dist.rank}: {type(e).__name__}: {e}"
                self._dist.allgather(err)
                raise
            self._all_ok(err, "sharded store_path", storage_id)
            if sm.in_place:
                if self._dist.rank == 0:
                    _write_metadata(path, metadata)
            else:
                mine: storage.Resources = {}
                if uploader:
                    mine = storage.list_directory(path)
                    mine.pop(METADATA_FILE, None)
                sharding.merge_resources(self._dist.allgather(mine))
                try:
                    if mine:
                        sm.upload(path, storage_id, paths=set(mine))
                    if self._dist.rank == 0:
                        self._upload_metadata(storage_id, metadata)
                except Exception as e:
                    logger.exception("rank %d: uploading checkpoint %s failed", self._dist.rank, storage_id)
                    err = f"rank {self._dist.rank}: {e}"
                self._all_ok(err, "sharded store_path", storage_id)
        finally:
            if not sm.in_place and uploader:
                sm.cleanup_store_path(path)
        if self._dist.rank == 0:
            self._report(storage_id, metadata)

    # -- loading --------------------------------------------------------------------------
    def _shared_selection(
        self, storage_id: str, selector: Optional[Callable[[str], bool]]
    ) -> Callable[[str], bool]:
        """LocalWorkersShareDownload: the union of what the local workers' selectors accept."""
        listing: Optional[storage.Resources] = None
        err: Optional[str] = None
        if self._dist.local_rank == 0:
            listing = self._storage_manager.list_files(storage_id)
            if not listing:
                err = f"checkpoint {storage_id} not found in storage {self._storage_manager!r}"
        listing, err = self._dist.broadcast_local((listing, err))
        if err:
            raise FileNotFoundError(err)
        wanted = sorted(storage.select(listing, selector))
        union = set()
        for paths in self._dist.allgather_local(wanted):
            union.update(paths)
        return lambda p: p in union

    def download(
        self,
        storage_id: str,
        ckpt_dir: Union[str, os.PathLike],
        download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
        *,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> None:
        """Copy checkpoint ``storage_id`` into ``ckpt_dir`` (created if needed).

        With LocalWorkersShareDownload every worker of a node must call this with the same
        ``ckpt_dir``; the local chief downloads and the others wait until it is done.
        """
        download_mode = DownloadMode(download_mode)
        if download_mode == DownloadMode.NoSharedDownload or self._dist.local_size == 1:
            self._storage_manager.download(storage_id, ckpt_dir, selector=selector)
            return
        chosen = self._shared_selection(storage_id, selector)
        err: Optional[str] = None
        if self._dist.local_rank == 0:
            try:
                self._storage_manager.download(storage_id, ckpt_dir, selector=chosen)
            except Exception as e:
                err = f"{type(e).__name__}: {e}"
        err = self._dist.broadcast_local(err)
        if err:
            raise RuntimeError(f"downloading checkpoint {storage_id} failed on the local chief: {err}")

    @contextlib.contextmanager
    def restore_path(
        self,
        storage_id: str,
        download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
        *,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> Iterator[pathlib.Path]:
        """Context manager yielding a local directory holding checkpoint ``storage_id``.

        Filesystem storage is read in place. Otherwise the checkpoint is downloaded into a
        temporary directory (by the local chief alone, with LocalWorkersShareDownload) that
        is removed when the block exits.
        """
        download_mode = DownloadMode(download_mode)
        sm = self._storage_manager
        if (
            sm.in_place
            or download_mode == DownloadMode.NoSharedDownload
            or self._dist.local_size == 1
        ):
            with sm.restore_path(storage_id, selector=selector) as path:
                yield pathlib.Path(path)
            return
        chosen = self._shared_selection(storage_id, selector)
        tmp: Optional[str] = None
        err: Optional[str] = None
        if self._dist.local_rank == 0:
            try:
                tmp = tempfile.mkdtemp(prefix=f"determined-restore-{storage_id}-")
                sm.download(storage_id, tmp, selector=chosen)
            except Exception as e:
                err = f"{type(e).__name__}: {e}"
        tmp, err = self._dist.broadcast_local((tmp, err))
        try:
            if err:
                raise RuntimeError(f"downloading checkpoint {storage_id} failed on the local chief: {err}")
            yield pathlib.Path(tmp)  # type: ignore[arg-type]
        finally:
            self._dist.allgather_local(None)  # nobody still reads it
            if self._dist.local_rank == 0 and tmp:
                shutil.rmtree(tmp, ignore_errors=True)

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
        with tempfile.TemporaryDirectory(prefix="determined-metadata-") as tmp:
            try:
                self._storage_manager.download(storage_id, tmp, selector=lambda p: p == METADATA_FILE)
                with open(os.path.join(tmp, METADATA_FILE)) as f:
                    return json.load(f)
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"checkpoint {storage_id} has no metadata ({METADATA_FILE} is missing in "
                    f"{self._storage_manager!r})"
                ) from None

    def delete(self, storage_id: str) -> None:
        """Delete a checkpoint from storage and tell the master which files remain (none)."""
        remaining = self._storage_manager.delete(storage_id, storage.ALL_FILES)
        if self._session is None:
            return
        try:
            self._session.patch(
                "/api/v1/checkpoints",
                json_body={
                    "checkpoints": [
                        {"uuid": storage_id, "resources": {"resources": {k: str(v) for k, v in remaining.items()}}}
                    ]
                },
            )
        except api.APIException as e:
            logger.warning("checkpoint %s deleted from storage, but the master was not told: %s", storage_id, e)

    # -- internals ------------------------------------------------------------------------
    def _check_chief(self, what: str) -> None:
        if self._dist.rank != 0:
            raise RuntimeError(f"{what}(shard=False) may only be called by the chief (rank 0)")

    def _report(self, storage_id: str, metadata: Dict[str, Any]) -> None:
        resources = self._storage_manager.list_files(storage_id)
        if self._session is None:
            logger.info("saved checkpoint %s to %r", storage_id, self._storage_manager)
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


class DummyCheckpointContext(CheckpointContext):
    """Off-cluster CheckpointContext: checkpoints go to storage, and what would be reported
    to a master is logged instead."""

    def __init__(self, dist: DistributedContext, storage_manager: storage.StorageManager) -> None:
        super().__init__(dist, storage_manager, None, None, None, TensorboardMode.MANUAL)
