"""StorageManager: one directory per checkpoint (named by its storage id) under a base path."""

import contextlib
import os
import pathlib
import shutil
from typing import Callable, Dict, Iterator, Optional, Union

Selector = Optional[Callable[[str], bool]]


def list_directory(root: Union[str, os.PathLike]) -> Dict[str, int]:
    """Map every entry under ``root`` to its size: ``{"rel/file": size, "rel/dir/": 0}``."""
    root = os.fspath(root)
    result: Dict[str, int] = {}
    for cur_dir, sub_dirs, files in os.walk(root):
        sub_dirs.sort()
        for d in sub_dirs:
            rel = os.path.relpath(os.path.join(cur_dir, d), root)
            result[rel.replace(os.sep, "/") + "/"] = 0
        for f in sorted(files):
            abs_path = os.path.join(cur_dir, f)
            rel = os.path.relpath(abs_path, root)
            result[rel.replace(os.sep, "/")] = os.path.getsize(abs_path)
    return result


def select(resources: Dict[str, int], selector: Selector) -> Dict[str, int]:
    """Keep the files a selector accepts, plus the directories that lead to them."""
    if selector is None:
        return dict(resources)
    kept = {k: v for k, v in resources.items() if not k.endswith("/") and selector(k)}
    dirs = {}
    for path in kept:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs["/".join(parts[:i]) + "/"] = 0
    kept.update(dirs)
    return dict(sorted(kept.items()))


def copy_tree(src: str, dst: str, selector: Selector = None) -> None:
    """Copy the files of ``src`` (those ``selector`` accepts) into ``dst``, creating it."""
    os.makedirs(dst, exist_ok=True)
    for rel in select(list_directory(src), selector):
        s = os.path.join(src, rel)
        d = os.path.join(dst, rel)
        if rel.endswith("/"):
            os.makedirs(d, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copy2(s, d)


class StorageManager:
    """Stores checkpoints as ``<base_path>/<storage_id>/`` on a locally mounted filesystem."""

    def __init__(self, base_path: Union[str, os.PathLike]) -> None:
        self._base_path = pathlib.Path(base_path)

    @property
    def base_path(self) -> pathlib.Path:
        return self._base_path

    def path_of(self, storage_id: str) -> pathlib.Path:
        if not storage_id or "/" in storage_id or storage_id in (".", ".."):
            raise ValueError(f"invalid storage id {storage_id!r}")
        return self._base_path / storage_id

    @contextlib.contextmanager
    def store_path(self, storage_id: str) -> Iterator[pathlib.Path]:
        """Yield the directory to write checkpoint ``storage_id`` into (written in place)."""
        path = self.path_of(storage_id)
        path.mkdir(parents=True, exist_ok=True)
        yield path

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, selector: Selector = None) -> Iterator[pathlib.Path]:
        """Yield the directory holding checkpoint ``storage_id`` (read in place)."""
        path = self.path_of(storage_id)
        if not path.is_dir():
            raise FileNotFoundError(f"checkpoint {storage_id} not found in storage at {path}")
        yield path

    def upload(self, src: Union[str, os.PathLike], dst: str, selector: Selector = None) -> None:
        src = os.fspath(src)
        target = os.fspath(self.path_of(dst))
        if os.path.abspath(src) == os.path.abspath(target):
            return
        copy_tree(src, target, selector)

    def download(self, src: str, dst: Union[str, os.PathLike], selector: Selector = None) -> None:
        path = self.path_of(src)
        if not path.is_dir():
            raise FileNotFoundError(f"checkpoint {src} not found in storage at {path}")
        copy_tree(os.fspath(path), os.fspath(dst), selector)

    def delete(self, storage_id: str) -> None:
        """Delete a checkpoint's files; deleting one that is already gone is not an error."""
        shutil.rmtree(self.path_of(storage_id), ignore_errors=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self._base_path)!r})"
