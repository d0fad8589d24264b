"""Build a StorageManager from a ``checkpoint_storage`` config dict or a shortcut string.

Shortcuts: a plain path or ``file://path`` -> shared_fs rooted there; ``s3://bucket/prefix``;
``gs://bucket/prefix``. Backends with third-party clients are imported only when used.
"""

import json
import os
import urllib.parse
from typing import Any, Dict, Optional, Union

from determined.common.storage.base import StorageManager
from determined.common.storage.directory import DirectoryStorageManager
from determined.common.storage.shared_fs import DEFAULT_CONFIG, SharedFSStorageManager

TYPES = ("shared_fs", "directory", "s3", "gcs", "hdfs", "azure")

# Fields every checkpoint_storage config may carry besides the backend's own.
GC_FIELDS = ("save_experiment_best", "save_trial_best", "save_trial_latest")


def config_from_string(spec: str) -> Dict[str, Any]:
    """The config dict a shortcut string stands for."""
    if spec.startswith("s3://") or spec.startswith("gs://"):
        url = urllib.parse.urlparse(spec)
        if not url.netloc:
            raise ValueError(f"checkpoint storage {spec!r} names no bucket")
        typ = "s3" if url.scheme == "s3" else "gcs"
        cfg: Dict[str, Any] = {"type": typ, "bucket": url.netloc}
        prefix = url.path.strip("/")
        if prefix:
            cfg["prefix"] = prefix
        return cfg
    if spec.startswith("file://"):
        spec = spec[len("file://"):]
    elif "://" in spec:
        raise ValueError(
            f"checkpoint storage {spec!r}: unknown scheme (use a path, file://, s3:// or gs://)"
        )
    if not spec:
        raise ValueError("checkpoint storage path is empty")
    return {"type": "shared_fs", "host_path": os.path.abspath(spec)}


def build(
    config: Union[str, os.PathLike, Dict[str, Any], None],
    container_path: Optional[str] = None,
) -> StorageManager:
    """Build the StorageManager for a ``checkpoint_storage`` config (None: the master default)."""
    if config is None:
        config = DEFAULT_CONFIG
    if isinstance(config, (str, os.PathLike)):
        config = config_from_string(os.fspath(config))
    if not isinstance(config, dict):
        raise TypeError(f"checkpoint storage config must be a dict or a string, got {type(config).__name__}")
    typ = config.get("type")
    if typ == "shared_fs":
        return SharedFSStorageManager.from_config(config, container_path)
    if typ == "directory":
        return DirectoryStorageManager.from_config(config)
    if typ == "s3":
        from determined.common.storage.s3 import S3StorageManager

        return S3StorageManager.from_config(config)
    if typ == "gcs":
        from determined.common.storage.gcs import GCSStorageManager

        return GCSStorageManager.from_config(config)
    if typ == "hdfs":
        from determined.common.storage.hdfs import HDFSStorageManager

        return HDFSStorageManager.from_config(config)
    if typ == "azure":
        from determined.common.storage.azure import AzureStorageManager

        return AzureStorageManager.from_config(config)
    raise ValueError(f"unknown checkpoint storage type {typ!r} (known: {', '.join(TYPES)})")


def config_from_arg(raw: str) -> Any:
    """A command-line ``--storage-config``: JSON text, a JSON file, or a shortcut string."""
    text = raw.strip()
    if text.startswith("{"):
        return json.loads(text)
    if os.path.isfile(text):
        with open(text) as f:
            return json.load(f)
    return text
