"""``gcs`` checkpoint storage through google-cloud-storage (Application Default Credentials)."""

from typing import Any, Dict, Optional, Sequence

from determined.common.storage.dependencies import require
from determined.common.storage.object_store import ObjectStoreStorageManager


class GCSStorageManager(ObjectStoreStorageManager):
    def __init__(self, bucket: str, prefix: Optional[str] = None) -> None:
        if not bucket:
            raise ValueError("gcs checkpoint storage needs bucket")
        super().__init__(prefix)
        gcs = require("google.cloud.storage", "google-cloud-storage", "gcs")
        self.bucket_name = bucket
        self._client = gcs.Client()
        self._bucket = self._client.bucket(bucket)

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "GCSStorageManager":
        return cls(bucket=config.get("bucket") or "", prefix=config.get("prefix"))

    def _location(self, storage_id: str) -> str:
        root = self._root(storage_id) if storage_id else (self.prefix + "/" if self.prefix else "")
        return f"gs://{self.bucket_name}/{root}"

    def _put_file(self, local_path: str, key: str) -> None:
        self._bucket.blob(key).upload_from_filename(local_path)

    def _put_empty(self, key: str) -> None:
        self._bucket.blob(key).upload_from_string(b"")

    def _get_file(self, key: str, local_path: str) -> None:
        self._bucket.blob(key).download_to_filename(local_path)

    def _list_keys(self, key_prefix: str) -> Dict[str, int]:
        return {b.name: int(b.size or 0) for b in self._client.list_blobs(self._bucket, prefix=key_prefix)}

    def _delete_keys(self, keys: Sequence[str]) -> None:
        for key in keys:
            blob = self._bucket.blob(key)
            try:
                blob.delete()
            except Exception as e:  # google.api_core.exceptions.NotFound: already gone
                if type(e).__name__ != "NotFound":
                    raise
