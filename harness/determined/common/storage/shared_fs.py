"""``shared_fs`` and ``directory`` checkpoint storage, and ``build()`` from a config."""

import logging
import os
from typing import Any, Dict, Union

from determined.common.storage.base import StorageManager

logger = logging.getLogger("determined.common.storage")

# Determined's master default (master.yaml): shared_fs host_path /tmp, storage_path
# determined-checkpoint.
DEFAULT_CONFIG = {"type": "shared_fs", "host_path": "/tmp", "storage_path": "determined-checkpoint"}


class SharedFSStorageManager(StorageManager):
    """A filesystem shared by the master and all agents, at ``<host_path>/<storage_path>``.

    Trials run as processes (no container), so ``host_path`` is used directly rather than
    Determined's container mount point ``/determined_shared_fs``.
    """

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "SharedFSStorageManager":
        host_path = config.get("host_path")
        if not host_path:
            raise ValueError("shared_fs checkpoint storage needs host_path")
        storage_path = config.get("storage_path") or config.get("checkpoint_path")
        if storage_path:
            if os.path.isabs(storage_path):
                base = storage_path
            else:
                base = os.path.join(host_path, storage_path)
        else:
            base = host_path
        return cls(os.path.normpath(base))


class DirectoryStorageManager(StorageManager):
    """``type: directory``: a path already present where the trial runs (``container_path``)."""

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "DirectoryStorageManager":
        path = config.get("container_path")
        if not path:
            raise ValueError("directory checkpoint storage needs container_path")
        return cls(os.path.normpath(path))


def build(config: Union[str, os.PathLike, Dict[str, Any], None]) -> StorageManager:
    """Build a StorageManager from a ``checkpoint_storage`` config or a directory path."""
    if config is None:
        config = DEFAULT_CONFIG
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if path.startswith("file://"):
            path = path[len("file://"):]
        elif "://" in path:
            raise NotImplementedError(
                f"checkpoint storage {path!r}: only local/shared filesystem paths are supported"
                " (s3://, gs:// are not implemented yet)"
            )
        return SharedFSStorageManager(os.path.abspath(path))
    typ = config.get("type")
    if typ == "shared_fs":
        return SharedFSStorageManager.from_config(config)
    if typ == "directory":
        return DirectoryStorageManager.from_config(config)
    raise NotImplementedError(
        f"checkpoint storage type {typ!r} is not supported yet (supported: shared_fs, directory)"
    )
