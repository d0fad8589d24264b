"""``azure`` checkpoint storage (a blob container) through azure-storage-blob."""

from typing import Any, Dict, Optional, Sequence

from determined.common.storage.dependencies import require
from determined.common.storage.object_store import ObjectStoreStorageManager


class AzureStorageManager(ObjectStoreStorageManager):
    def __init__(
        self,
        container: str,
        connection_string: Optional[str] = None,
        account_url: Optional[str] = None,
        credential: Optional[str] = None,
        prefix: Optional[str] = None,
    ) -> None:
        if not container:
            raise ValueError("azure checkpoint storage needs container")
        if not connection_string and not account_url:
            raise ValueError("azure checkpoint storage needs connection_string or account_url")
        super().__init__(prefix)
        blob = require("azure.storage.blob", "azure-storage-blob", "azure")
        if connection_string:
            service = blob.BlobServiceClient.from_connection_string(connection_string)
        else:
            service = blob.BlobServiceClient(account_url=account_url, credential=credential)
        self.container = container
        self._container = service.get_container_client(container)

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "AzureStorageManager":
        return cls(
            container=config.get("container") or "",
            connection_string=config.get("connection_string"),
            account_url=config.get("account_url"),
            credential=config.get("credential"),
            prefix=config.get("prefix"),
        )

    def _location(self, storage_id: str) -> str:
        root = self._root(storage_id) if storage_id else (self.prefix + "/" if self.prefix else "")
        return f"azure://{self.container}/{root}"

    def _put_file(self, local_path: str, key: str) -> None:
        with open(local_path, "rb") as f:
            self._container.upload_blob(name=key, data=f, overwrite=True)

    def _put_empty(self, key: str) -> None:
        self._container.upload_blob(name=key, data=b"", overwrite=True)

    def _get_file(self, key: str, local_path: str) -> None:
        with open(local_path, "wb") as f:
            self._container.download_blob(key).readinto(f)

    def _list_keys(self, key_prefix: str) -> Dict[str, int]:
        return {b.name: int(b.size or 0) for b in self._container.list_blobs(name_starts_with=key_prefix)}

    def _delete_keys(self, keys: Sequence[str]) -> None:
        for key in keys:
            try:
                self._container.delete_blob(key)
            except Exception as e:  # azure.core.exceptions.ResourceNotFoundError: already gone
                if type(e).__name__ != "ResourceNotFoundError":
                    raise
