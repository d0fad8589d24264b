"""Checks that a storage backend can be written, read back and deleted from."""

import uuid
from typing import Any, Dict, Optional

from determined.common.storage.base import StorageManager
from determined.common.storage.factory import build, config_from_string

_PROBE_FILE = "VALIDATE.txt"


def from_string(shortcut: str) -> StorageManager:
    """The StorageManager for a shortcut such as ``/mnt/ckpts``, ``s3://bucket/prefix`` or
    ``gs://bucket/prefix``."""
    return build(config_from_string(shortcut))


def validate_manager(manager: StorageManager) -> None:
    """Store a small probe checkpoint, read it back and delete it; raise on any failure."""
    storage_id = str(uuid.uuid4())
    with manager.store_path(storage_id) as path:
        path.mkdir(parents=True, exist_ok=True)
        path.joinpath(_PROBE_FILE).write_text(storage_id)
    with manager.restore_path(storage_id) as path:
        got = path.joinpath(_PROBE_FILE).read_text()
    if got != storage_id:
        raise ValueError(f"checkpoint storage {manager!r} returned {got!r} for a probe that held {storage_id!r}")
    manager.delete(storage_id, ["**/*"])


def validate_config(config: Dict[str, Any], container_path: Optional[str] = None) -> None:
    """Build the backend of a ``checkpoint_storage`` config and :func:`validate_manager` it."""
    validate_manager(build(config, container_path))
