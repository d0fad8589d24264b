"""Checkpoint storage backends behind one interface (``StorageManager``).

``build(config)`` picks the backend for a ``checkpoint_storage`` config or shortcut string.
shared_fs and directory need only the standard library; s3 (boto3), gcs
(google-cloud-storage), hdfs (hdfs) and azure (azure-storage-blob) import their client
library when they are built.
"""

from typing import Set

from determined.common.storage import base, shared_fs
from determined.common.storage import object_store
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
from determined.common.storage.object_store import normalize_prefix
from determined.common.storage.s3 import S3StorageManager
from determined.common.storage.gcs import GCSStorageManager
from determined.common.storage.azure import AzureStorageManager
from determined.common.storage.hdfs import HDFSStorageManager
from determined.common.storage.validate import from_string, validate_config, validate_manager

# Determined's names for the same things: its module ``shared`` is our ``shared_fs``, its
# ``cloud`` (the base of S3/GCS/Azure) our ``object_store``.
shared = shared_fs
cloud = object_store
CloudStorageManager = ObjectStoreStorageManager
Selector = base.Selector
Paths = Set[str]

__all__ = [
    "ALL_FILES",
    "AzureStorageManager",
    "CloudStorageManager",
    "GCSStorageManager",
    "HDFSStorageManager",
    "Paths",
    "S3StorageManager",
    "Selector",
    "cloud",
    "from_string",
    "normalize_prefix",
    "shared",
    "validate_config",
    "validate_manager",
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
