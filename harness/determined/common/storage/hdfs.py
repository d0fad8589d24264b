"""``hdfs`` checkpoint storage through WebHDFS (the ``hdfs`` package)."""

import posixpath
from typing import Any, Dict, Optional, Sequence

from determined.common.storage.dependencies import require
from determined.common.storage.object_store import ObjectStoreStorageManager


class HDFSStorageManager(ObjectStoreStorageManager):
    """Keys are paths below ``hdfs_path``; directory markers are real directories."""

    def __init__(self, hdfs_url: str, hdfs_path: str, user: Optional[str] = None) -> None:
        if not hdfs_url:
            raise ValueError("hdfs checkpoint storage needs hdfs_url")
        if not hdfs_path:
            raise ValueError("hdfs checkpoint storage needs hdfs_path")
        super().__init__(None)
        hdfs = require("hdfs", "hdfs", "hdfs")
        self.hdfs_url = hdfs_url
        self.hdfs_path = hdfs_path
        self._client = hdfs.InsecureClient(hdfs_url, root=hdfs_path, user=user)

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "HDFSStorageManager":
        return cls(
            hdfs_url=config.get("hdfs_url") or "",
            hdfs_path=config.get("hdfs_path") or "",
            user=config.get("user"),
        )

    def _location(self, storage_id: str) -> str:
        return f"{self.hdfs_url} {posixpath.join(self.hdfs_path, storage_id)}"

    def _put_file(self, local_path: str, key: str) -> None:
        self._client.upload(key, local_path, overwrite=True)

    def _put_empty(self, key: str) -> None:
        self._client.makedirs(key.rstrip("/"))

    def _get_file(self, key: str, local_path: str) -> None:
        self._client.download(key, local_path, overwrite=True)

    def _list_keys(self, key_prefix: str) -> Dict[str, int]:
        root = key_prefix.rstrip("/")
        if self._client.status(root, strict=False) is None:
            return {}
        resolved = self._client.resolve(root)
        out: Dict[str, int] = {}
        for cur, dirs, files in self._client.walk(root, status=True):
            rel_dir = posixpath.relpath(self._client.resolve(cur[0]), resolved)
            base = root if rel_dir == "." else posixpath.join(root, rel_dir)
            for name, _ in dirs:
                out[posixpath.join(base, name) + "/"] = 0
            for name, st in files:
                out[posixpath.join(base, name)] = int(st.get("length", 0))
        return out

    def _delete_keys(self, keys: Sequence[str]) -> None:
        for key in keys:
            self._client.delete(key.rstrip("/"), recursive=True)  # False if already gone
