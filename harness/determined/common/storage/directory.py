"""``directory`` checkpoint storage: a path already present where the trial runs."""

import os
from typing import Any, Dict

from determined.common.storage.filesystem import FilesystemStorageManager


class DirectoryStorageManager(FilesystemStorageManager):
    """Checkpoints at ``<container_path>/<uuid>/``."""

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "DirectoryStorageManager":
        path = config.get("container_path")
        if not path or not isinstance(path, str):
            raise ValueError("directory checkpoint storage needs container_path")
        if not os.path.isabs(path):
            raise ValueError(f"directory container_path must be an absolute path, got {path!r}")
        return cls(os.path.normpath(path))
