"""TensorboardManager: copies the files of a trial's TensorBoard directory to checkpoint
storage, at Determined's path: <storage>/<cluster id>/tensorboard/experiment/<experiment
id>/trial/<trial id>/<file>. Only files changed since the last sync are copied."""

import logging
import os
import pathlib
import shutil
import tempfile
import threading
import time
from typing import Callable, Dict, Optional

from determined.common import storage

logger = logging.getLogger("determined.tensorboard")

Selector = Callable[[pathlib.Path], bool]
Mangler = Callable[[pathlib.Path, int], pathlib.Path]


def sync_path(experiment_id: int, trial_id: int) -> pathlib.Path:
    """Where a trial's files go, below the cluster id, in checkpoint storage."""
    return pathlib.Path("tensorboard", "experiment", str(experiment_id), "trial", str(trial_id))


class TensorboardManager:
    def __init__(
        self,
        base_path: pathlib.Path,
        storage_manager: storage.StorageManager,
        cluster_id: str,
        experiment_id: int,
        trial_id: int,
        *,
        min_interval: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_path = base_path
        self._storage = storage_manager
        self._cluster_id = cluster_id or "cluster"
        self._sync_path = sync_path(experiment_id, trial_id)
        self._min_interval = min_interval
        self._clock = clock
        self._last_sync: Optional[float] = None
        self._synced: Dict[str, float] = {}  # relative path -> mtime copied
        self._upload: Optional[threading.Thread] = None

    def sync(
        self,
        selector: Selector = lambda _: True,
        mangler: Mangler = lambda p, __: p,
        rank: int = 0,
        *,
        force: bool = False,
    ) -> None:
        """Copy new and changed files. Unforced: at most once per ``min_interval``, in the
        background (training does not wait for slow storage), skipped while one is running.
        Forced: waits for a running one, then copies before returning (errors raise)."""
        now = self._clock()
        if force:
            self.wait()
            self._last_sync = now
            self._sync_now(selector, mangler, rank)
            return
        if self._last_sync is not None and now - self._last_sync < self._min_interval:
            return
        if self._upload is not None and self._upload.is_alive():
            return  # the next sync picks up what changed meanwhile
        self._last_sync = now
        self._upload = threading.Thread(
            target=self._sync_logged, args=(selector, mangler, rank), daemon=True,
            name="determined-tensorboard-upload",
        )
        self._upload.start()

    def wait(self) -> None:
        """Wait for a background upload to finish."""
        if self._upload is not None:
            self._upload.join()
            self._upload = None

    def _sync_logged(self, selector: Selector, mangler: Mangler, rank: int) -> None:
        try:
            self._sync_now(selector, mangler, rank)
        except Exception as e:  # noqa: BLE001 - retried by the next sync
            logger.warning("could not upload TensorBoard files: %s", e)

    def _sync_now(self, selector: Selector, mangler: Mangler, rank: int) -> None:
        if not self.base_path.is_dir():
            return
        changed = {}
        for f in sorted(self.base_path.rglob("*")):
            if not f.is_file() or not selector(f):
                continue
            rel = f.relative_to(self.base_path)
            mtime = f.stat().st_mtime_ns
            if self._synced.get(str(rel)) == mtime:
                continue
            changed[rel] = (f, mtime)
        if not changed:
            return
        # Stage the files at their storage layout, then upload the staged tree under the
        # cluster id (a storage id is one path component).
        with tempfile.TemporaryDirectory(prefix="determined-tensorboard-") as stage:
            paths = set()
            for rel, (f, _) in changed.items():
                dest_rel = self._sync_path / mangler(rel, rank)
                dest = pathlib.Path(stage, dest_rel)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
                paths.add(dest_rel.as_posix())
            self._storage.upload(stage, self._cluster_id, paths=paths)
        for rel, (_, mtime) in changed.items():
            self._synced[str(rel)] = mtime
        logger.debug("synced %d TensorBoard file(s) to %s/%s", len(changed), self._cluster_id,
                     self._sync_path)

    def storage_path(self) -> str:
        """The files' directory below the storage root: <cluster id>/tensorboard/..."""
        return os.path.join(self._cluster_id, self._sync_path.as_posix())
