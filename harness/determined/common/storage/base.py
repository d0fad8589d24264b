"""The StorageManager interface and the helpers every backend shares.

A checkpoint is stored as one directory (or key prefix) named by its storage id (a uuid4):
``<base>/<storage_id>/<relative path>``. Its ``resources`` map every relative path to its size
in bytes; directories end with ``/`` and have size 0. Standard library only.
"""

import abc
import concurrent.futures
import contextlib
import os
import pathlib
import shutil
import tempfile
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Sequence, Set, Union

from determined.common.storage import globs as _globs

Selector = Optional[Callable[[str], bool]]
Resources = Dict[str, int]
PathLike = Union[str, os.PathLike]

# delete() with these globs removes the whole checkpoint.
ALL_FILES = ("**/*",)


def list_directory(root: PathLike) -> Resources:
    """Map every entry under ``root`` to its size: ``{"rel/file": size, "rel/dir/": 0}``."""
    root = os.fspath(root)
    result: Resources = {}
    for cur_dir, sub_dirs, files in os.walk(root):
        sub_dirs.sort()
        for d in sub_dirs:
            rel = os.path.relpath(os.path.join(cur_dir, d), root)
            result[rel.replace(os.sep, "/") + "/"] = 0
        for f in sorted(files):
            abs_path = os.path.join(cur_dir, f)
            rel = os.path.relpath(abs_path, root)
            result[rel.replace(os.sep, "/")] = os.path.getsize(abs_path)
    return dict(sorted(result.items()))


def parent_dirs(path: str) -> Iterator[str]:
    """``"a/b/c.txt"`` -> ``"a/"``, ``"a/b/"`` (the directories leading to a path)."""
    parts = path.rstrip("/").split("/")[:-1]
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i]) + "/"


def with_parent_dirs(resources: Resources) -> Resources:
    """Add the directory entries (size 0) that lead to every path of ``resources``."""
    out = dict(resources)
    for path in resources:
        for d in parent_dirs(path):
            out.setdefault(d, 0)
    return dict(sorted(out.items()))


def select(resources: Resources, selector: Selector) -> Resources:
    """Keep the files a selector accepts, plus the directories that lead to them."""
    if selector is None:
        return dict(sorted(resources.items()))
    kept = {k: v for k, v in resources.items() if not k.endswith("/") and selector(k)}
    return with_parent_dirs(kept)


COPY_THREADS = 8


def _copy_file(s: str, d: str) -> None:
    shutil.copyfile(s, d)
    shutil.copystat(s, d)


def copy_tree(src: str, dst: str, paths: Iterable[str]) -> None:
    """Copy the entries ``paths`` (relative; directories end with '/') of ``src`` into ``dst``."""
    os.makedirs(dst, exist_ok=True)
    files = []
    for rel in sorted(paths):
        d = os.path.join(dst, rel)
        if rel.endswith("/"):
            os.makedirs(d, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(d), exist_ok=True)
            files.append((os.path.join(src, rel), d))
    if len(files) < 4:
        for s, d in files:
            _copy_file(s, d)
        return
    with concurrent.futures.ThreadPoolExecutor(min(COPY_THREADS, len(files))) as pool:
        for fut in [pool.submit(_copy_file, s, d) for s, d in files]:
            fut.result()


def check_storage_id(storage_id: str) -> str:
    if (
        not isinstance(storage_id, str)
        or not storage_id
        or "/" in storage_id
        or "\\" in storage_id
        or storage_id in (".", "..")
    ):
        raise ValueError(f"invalid checkpoint storage id {storage_id!r}")
    return storage_id


class StorageManager(abc.ABC):
    """Where checkpoints live. Subclasses implement the abstract methods.

    ``in_place`` backends (shared_fs, directory) let ``store_path`` write straight into storage
    and ``restore_path`` read straight from it; the others stage files in a local directory.
    """

    in_place = False

    @classmethod
    def from_config(cls, config: Dict[str, Any], container_path: Optional[str] = None) -> "StorageManager":
        """Build this backend from its ``checkpoint_storage`` config (without ``type``)."""
        raise NotImplementedError(f"{cls.__name__} cannot be built from a config; use storage.build()")

    def store_path_is_direct_access(self) -> bool:
        """True when ``store_path`` writes straight into storage (then sharded uploads cannot
        detect conflicting files)."""
        return self.in_place

    # -- the backend's primitives ---------------------------------------------------------
    @abc.abstractmethod
    def upload(
        self,
        src: PathLike,
        dst: str,
        selector: Selector = None,
        *,
        paths: Optional[Set[str]] = None,
    ) -> None:
        """Upload local directory ``src`` as checkpoint ``dst`` (merging into what is there).

        ``paths`` (relative, dirs end with '/') limits the upload to exactly those entries;
        otherwise ``selector`` filters the files of ``src``.
        """

    @abc.abstractmethod
    def download(self, src: str, dst: PathLike, selector: Selector = None) -> None:
        """Download checkpoint ``src`` into local directory ``dst`` (created if needed).

        Raises FileNotFoundError if the checkpoint does not exist.
        """

    @abc.abstractmethod
    def list_files(self, storage_id: str) -> Resources:
        """The checkpoint's resources (``{}`` if it does not exist)."""

    @abc.abstractmethod
    def _delete_paths(self, storage_id: str, paths: Sequence[str]) -> None:
        """Delete exactly these entries; entries that are already gone are not an error."""

    @abc.abstractmethod
    def _location(self, storage_id: str) -> str:
        """Human-readable location of a checkpoint, for messages."""

    # -- shared behaviour -----------------------------------------------------------------
    def delete(self, storage_id: str, globs: Sequence[str] = ALL_FILES) -> Resources:
        """Delete the checkpoint's files matching any of ``globs`` (relative to the checkpoint;
        ``**/*`` is everything); returns the resources that remain. Idempotent: files that are
        already gone, or a checkpoint that no longer exists, are fine."""
        check_storage_id(storage_id)
        globs = [g for g in globs if g]
        resources = self.list_files(storage_id)
        if not globs or not resources:
            return resources
        doomed = _globs.expand_matches(resources, globs)
        if doomed:
            # Files before their directories, deepest first.
            order = sorted(doomed, key=lambda p: (p.endswith("/"), -p.count("/"), p))
            self._delete_paths(storage_id, order)
        return self.list_files(storage_id)

    def pre_store_path(self, storage_id: str, tag: str = "") -> pathlib.Path:
        """The local directory that ``store_path`` hands to the user (``tag`` tells apart
        staging directories of one checkpoint, e.g. per node of a sharded save)."""
        check_storage_id(storage_id)
        path = self._staging_dir("store") / (f"{storage_id}.{tag}" if tag else storage_id)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def post_store_path(
        self, storage_id: str, path: PathLike, *, paths: Optional[Set[str]] = None
    ) -> None:
        """Upload what was written into ``path`` (skipped by in-place backends)."""
        self.upload(path, storage_id, paths=paths)

    def cleanup_store_path(self, path: PathLike) -> None:
        shutil.rmtree(os.fspath(path), ignore_errors=True)

    @contextlib.contextmanager
    def store_path(self, storage_id: str) -> Iterator[pathlib.Path]:
        """Yield a directory to write checkpoint ``storage_id`` into; upload it on success."""
        path = self.pre_store_path(storage_id)
        try:
            yield path
            self.post_store_path(storage_id, path)
        finally:
            if not self.in_place:
                self.cleanup_store_path(path)

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, selector: Selector = None) -> Iterator[pathlib.Path]:
        """Yield a local directory holding checkpoint ``storage_id`` (removed afterwards)."""
        check_storage_id(storage_id)
        base = self._staging_dir("restore")
        base.mkdir(parents=True, exist_ok=True)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"{storage_id}-", dir=os.fspath(base)))
        try:
            self.download(storage_id, tmp, selector=selector)
            yield tmp
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _staging_dir(self, what: str) -> pathlib.Path:
        return pathlib.Path(tempfile.gettempdir()) / f"determined-{what}"

    def _local_entries(self, src: PathLike, selector: Selector, paths: Optional[Set[str]]) -> Resources:
        listing = list_directory(src)
        if paths is not None:
            unknown = sorted(p for p in paths if p not in listing)
            if unknown:
                raise FileNotFoundError(f"cannot upload {unknown[:5]}: not in {os.fspath(src)}")
            return with_parent_dirs({p: listing[p] for p in paths})
        return select(listing, selector)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._location('')!r})"
