"""The common part of storage backends that keep checkpoints as keys in a bucket.

A checkpoint's files are the keys ``<prefix>/<storage_id>/<relative path>``; directories are
stored as empty marker keys ending with '/', so empty directories survive a round trip and
every backend reports the same ``resources``. Subclasses provide five primitives.
"""

import abc
import concurrent.futures
import os
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set

from determined.common.storage.base import (
    PathLike,
    Resources,
    Selector,
    StorageManager,
    check_storage_id,
    select,
    with_parent_dirs,
)

TRANSFER_THREADS = 8


def normalize_prefix(prefix: Optional[str]) -> str:
    """``"/a//b/"`` -> ``"a/b"``; rejects ``.`` and ``..`` components."""
    if not prefix:
        return ""
    parts = [p for p in prefix.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise ValueError(f"storage prefix {prefix!r} must not contain '.' or '..' components")
    return "/".join(parts)


class ObjectStoreStorageManager(StorageManager):
    def __init__(self, prefix: Optional[str] = None) -> None:
        self._prefix = normalize_prefix(prefix)

    @property
    def prefix(self) -> str:
        return self._prefix

    # -- primitives a backend provides ----------------------------------------------------
    @abc.abstractmethod
    def _put_file(self, local_path: str, key: str) -> None: ...

    @abc.abstractmethod
    def _put_empty(self, key: str) -> None: ...

    @abc.abstractmethod
    def _get_file(self, key: str, local_path: str) -> None: ...

    @abc.abstractmethod
    def _list_keys(self, key_prefix: str) -> Dict[str, int]:
        """Every key starting with ``key_prefix`` (which ends with '/') and its size."""

    @abc.abstractmethod
    def _delete_keys(self, keys: Sequence[str]) -> None:
        """Delete keys; keys that do not exist are not an error."""

    # -- shared behaviour -----------------------------------------------------------------
    def _root(self, storage_id: str) -> str:
        check_storage_id(storage_id)
        return f"{self._prefix}/{storage_id}/" if self._prefix else f"{storage_id}/"

    def _parallel(self, fn: Callable[[str], None], items: Iterable[str]) -> None:
        items = list(items)
        if len(items) <= 1:
            for it in items:
                fn(it)
            return
        with concurrent.futures.ThreadPoolExecutor(min(TRANSFER_THREADS, len(items))) as pool:
            for fut in [pool.submit(fn, it) for it in items]:
                fut.result()

    def upload(
        self,
        src: PathLike,
        dst: str,
        selector: Selector = None,
        *,
        paths: Optional[Set[str]] = None,
    ) -> None:
        src = os.fspath(src)
        root = self._root(dst)
        entries = self._local_entries(src, selector, paths)
        for rel in sorted(p for p in entries if p.endswith("/")):
            self._put_empty(root + rel)
        files = sorted(p for p in entries if not p.endswith("/"))
        self._parallel(lambda rel: self._put_file(os.path.join(src, rel), root + rel), files)

    def download(self, src: str, dst: PathLike, selector: Selector = None) -> None:
        listing = self.list_files(src)
        if not listing:
            raise FileNotFoundError(f"checkpoint {src} not found in storage at {self._location(src)}")
        dst = os.fspath(dst)
        root = self._root(src)
        wanted = select(listing, selector)
        os.makedirs(dst, exist_ok=True)
        for rel in sorted(p for p in wanted if p.endswith("/")):
            os.makedirs(os.path.join(dst, rel), exist_ok=True)

        def get(rel: str) -> None:
            local = os.path.join(dst, rel)
            os.makedirs(os.path.dirname(local), exist_ok=True)
            self._get_file(root + rel, local)

        self._parallel(get, sorted(p for p in wanted if not p.endswith("/")))

    def list_files(self, storage_id: str) -> Resources:
        root = self._root(storage_id)
        out: Dict[str, int] = {}
        for key, size in self._list_keys(root).items():
            rel = key[len(root):]
            if rel:
                out[rel] = 0 if rel.endswith("/") else int(size)
        return with_parent_dirs(out)

    def _delete_paths(self, storage_id: str, paths: Sequence[str]) -> None:
        root = self._root(storage_id)
        keys: List[str] = [root + p for p in paths]
        self._delete_keys(keys)
