"""Checkpoint storage backends behind one interface (``StorageManager``).

``build(config)`` picks the backend for a ``checkpoint_storage`` config or shortcut string.
shared_fs and directory need only the standard library; s3 (boto3), gcs
(google-cloud-storage), hdfs (hdfs) and azure (azure-storage-blob) import their client
library when they are built.
"""

from determined.common.storage import shared_fs
from determined.common.storage.base import (
    ALL_FILES,
    Resources,
    StorageManager,
    list_directory,
    select,
)
from determined.common.storage.dependencies import MissingStorageDependency
from determined.common.storage.directory import DirectoryStorageManager
from determined.common.storage.factory import TYPES, build, config_from_arg, config_from_string
from determined.common.storage.filesystem import FilesystemStorageManager
from determined.common.storage.globs import matches as glob_matches
from determined.common.storage.object_store import ObjectStoreStorageManager
from determined.common.storage.shared_fs import SharedFSStorageManager

__all__ = [
    "ALL_FILES",
    "DirectoryStorageManager",
    "FilesystemStorageManager",
    "MissingStorageDependency",
    "ObjectStoreStorageManager",
    "Resources",
    "SharedFSStorageManager",
    "StorageManager",
    "TYPES",
    "build",
    "config_from_arg",
    "config_from_string",
    "glob_matches",
    "list_directory",
    "select",
    "shared_fs",
]
