"""Checkpoints on a locally mounted filesystem: ``<base_path>/<storage_id>/``, read and
written in place (the base of ``shared_fs`` and ``directory`` storage)."""

import contextlib
import os
import pathlib
import shutil
from typing import Iterator, Optional, Sequence, Set

from determined.common.storage.base import (
    PathLike,
    Resources,
    Selector,
    StorageManager,
    check_storage_id,
    copy_tree,
    list_directory,
    select,
)


class FilesystemStorageManager(StorageManager):
    """Stores checkpoints as ``<base_path>/<storage_id>/`` on a mounted filesystem."""

    in_place = True

    def __init__(self, base_path: PathLike) -> None:
        self._base_path = pathlib.Path(base_path)

    @property
    def base_path(self) -> pathlib.Path:
        return self._base_path

    def path_of(self, storage_id: str) -> pathlib.Path:
        return self._base_path / check_storage_id(storage_id)

    def _location(self, storage_id: str) -> str:
        return os.fspath(self._base_path / storage_id) if storage_id else os.fspath(self._base_path)

    # -- store / restore in place ---------------------------------------------------------
    def pre_store_path(self, storage_id: str, tag: str = "") -> pathlib.Path:
        path = self.path_of(storage_id)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def post_store_path(
        self, storage_id: str, path: PathLike, *, paths: Optional[Set[str]] = None
    ) -> None:
        if os.path.abspath(os.fspath(path)) != os.path.abspath(os.fspath(self.path_of(storage_id))):
            self.upload(path, storage_id, paths=paths)

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, selector: Selector = None) -> Iterator[pathlib.Path]:
        """Yield the directory holding checkpoint ``storage_id`` (read in place; ``selector``
        does not apply: nothing is copied)."""
        path = self.path_of(storage_id)
        if not path.is_dir():
            raise FileNotFoundError(f"checkpoint {storage_id} not found in storage at {path}")
        yield path

    # -- primitives -----------------------------------------------------------------------
    def upload(
        self,
        src: PathLike,
        dst: str,
        selector: Selector = None,
        *,
        paths: Optional[Set[str]] = None,
    ) -> None:
        src = os.fspath(src)
        target = os.fspath(self.path_of(dst))
        if os.path.abspath(src) == os.path.abspath(target):
            return
        entries = self._local_entries(src, selector, paths)
        copy_tree(src, target, entries)

    def download(self, src: str, dst: PathLike, selector: Selector = None) -> None:
        path = self.path_of(src)
        if not path.is_dir():
            raise FileNotFoundError(f"checkpoint {src} not found in storage at {path}")
        copy_tree(os.fspath(path), os.fspath(dst), select(list_directory(path), selector))

    def list_files(self, storage_id: str) -> Resources:
        path = self.path_of(storage_id)
        if not path.is_dir():
            return {}
        return list_directory(path)

    def _delete_paths(self, storage_id: str, paths: Sequence[str]) -> None:
        root = self.path_of(storage_id)
        for rel in paths:
            target = root / rel
            if rel.endswith("/"):
                shutil.rmtree(target, ignore_errors=True)
                continue
            try:
                target.unlink()
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                shutil.rmtree(target, ignore_errors=True)
        # A checkpoint with nothing left is removed altogether.
        try:
            root.rmdir()
        except OSError:
            pass
