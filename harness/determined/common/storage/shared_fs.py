"""``shared_fs`` checkpoint storage: a filesystem shared by the master and every agent."""

import os
from typing import Any, Dict, Optional

from determined.common.storage.filesystem import FilesystemStorageManager

# Determined's master default (master.yaml): shared_fs host_path /tmp, storage_path
# determined-checkpoint.
DEFAULT_CONFIG = {"type": "shared_fs", "host_path": "/tmp", "storage_path": "determined-checkpoint"}

PROPAGATIONS = ("rprivate", "private", "rshared", "shared", "rslave", "slave")


def storage_subpath(host_path: str, storage_path: Optional[str]) -> str:
    """``storage_path`` relative to ``host_path`` ('' for none); it must lie inside host_path."""
    if not storage_path:
        return ""
    if os.path.isabs(storage_path):
        rel = os.path.relpath(os.path.normpath(storage_path), os.path.normpath(host_path))
    else:
        rel = os.path.normpath(storage_path)
    if rel == ".":
        return ""
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        raise ValueError(
            f"shared_fs storage_path {storage_path!r} must be inside host_path {host_path!r}"
        )
    return rel


def base_path_from_config(config: Dict[str, Any], container_path: Optional[str] = None) -> str:
    """Where checkpoints of a shared_fs config live, validating the path rules.

    ``host_path`` is required and absolute; ``storage_path`` (or legacy ``checkpoint_path``) is
    relative to it or absolute inside it; a ``container_path`` (the argument, else the
    config's legacy field) replaces host_path as the mount point the trial sees.
    """
    host_path = config.get("host_path")
    if not host_path or not isinstance(host_path, str):
        raise ValueError("shared_fs checkpoint storage needs host_path")
    if not os.path.isabs(host_path):
        raise ValueError(f"shared_fs host_path must be an absolute path, got {host_path!r}")
    propagation = config.get("propagation")
    if propagation is not None and propagation not in PROPAGATIONS:
        raise ValueError(
            f"shared_fs propagation must be one of {', '.join(PROPAGATIONS)}, got {propagation!r}"
        )
    sub = storage_subpath(host_path, config.get("storage_path") or config.get("checkpoint_path"))
    mount = container_path or config.get("container_path") or host_path
    return os.path.normpath(os.path.join(mount, sub))


class SharedFSStorageManager(FilesystemStorageManager):
    """Checkpoints at ``<host_path>/<storage_path>/<uuid>/``.

    Trials run as processes (no container), so ``host_path`` is used directly rather than
    Determined's container mount point ``/determined_shared_fs``.
    """

    @classmethod
    def from_config(
        cls, config: Dict[str, Any], container_path: Optional[str] = None
    ) -> "SharedFSStorageManager":
        return cls(base_path_from_config(config, container_path))
