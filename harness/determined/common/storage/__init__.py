"""Checkpoint storage backends (filesystem-backed ones; cloud stores are a later issue)."""

from determined.common.storage.base import StorageManager, list_directory
from determined.common.storage.shared_fs import (
    DirectoryStorageManager,
    SharedFSStorageManager,
    build,
)

__all__ = [
    "DirectoryStorageManager",
    "SharedFSStorageManager",
    "StorageManager",
    "build",
    "list_directory",
]
