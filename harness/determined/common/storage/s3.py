"""``s3`` checkpoint storage (Amazon S3 or any S3-compatible server) through boto3.

boto3 is imported when an S3StorageManager is created, never when the package is imported.
"""

import os
from typing import Any, Dict, Optional, Sequence

from determined.common.storage.dependencies import require
from determined.common.storage.object_store import ObjectStoreStorageManager

DELETE_BATCH = 1000  # S3's DeleteObjects limit


class S3StorageManager(ObjectStoreStorageManager):
    def __init__(
        self,
        bucket: str,
        access_key: Optional[str] = None,
        secret_key: Optional[str] = None,
        endpoint_url: Optional[str] = None,
        prefix: Optional[str] = None,
    ) -> None:
        if not bucket:
            raise ValueError("s3 checkpoint storage needs bucket")
        super().__init__(prefix)
        boto3 = require("boto3", "boto3", "s3")
        botocore_config = require("botocore.config", "boto3", "s3")
        self.bucket = bucket
        self.endpoint_url = endpoint_url
        # AWS_MAX_ATTEMPTS (botocore's own knob) wins: the master's GC runner retries whole
        # requests itself and wants each pass to fail fast.
        attempts = int(os.environ.get("AWS_MAX_ATTEMPTS", "5") or 5)
        cfg: Dict[str, Any] = {"retries": {"max_attempts": attempts, "mode": "standard"}}
        if endpoint_url:
            # S3 clones (MinIO, s3rver, ...) are addressed by path, not by virtual host.
            cfg["s3"] = {"addressing_style": "path"}
        session = boto3.session.Session(
            aws_access_key_id=access_key, aws_secret_access_key=secret_key
        )
        self._client = session.client(
            "s3",
            endpoint_url=endpoint_url or None,
            region_name=os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION") or "us-east-1",
            config=botocore_config.Config(**cfg),
        )

    @classmethod
    def from_config(cls, config: Dict[str, Any]) -> "S3StorageManager":
        return cls(
            bucket=config.get("bucket") or "",
            access_key=config.get("access_key"),
            secret_key=config.get("secret_key"),
            endpoint_url=config.get("endpoint_url"),
            prefix=config.get("prefix"),
        )

    def _location(self, storage_id: str) -> str:
        root = self._root(storage_id) if storage_id else (self.prefix + "/" if self.prefix else "")
        return f"s3://{self.bucket}/{root}"

    def _put_file(self, local_path: str, key: str) -> None:
        self._client.upload_file(local_path, self.bucket, key)

    def _put_empty(self, key: str) -> None:
        self._client.put_object(Bucket=self.bucket, Key=key, Body=b"")

    def _get_file(self, key: str, local_path: str) -> None:
        self._client.download_file(self.bucket, key, local_path)

    def _list_keys(self, key_prefix: str) -> Dict[str, int]:
        out: Dict[str, int] = {}
        paginator = self._client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=key_prefix):
            for obj in page.get("Contents", []) or []:
                out[obj["Key"]] = int(obj.get("Size", 0))
        return out

    def _delete_keys(self, keys: Sequence[str]) -> None:
        keys = list(keys)
        for i in range(0, len(keys), DELETE_BATCH):
            batch = keys[i : i + DELETE_BATCH]
            resp = self._client.delete_objects(
                Bucket=self.bucket,
                Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True},
            )
            errors = [e for e in resp.get("Errors", []) or [] if e.get("Code") != "NoSuchKey"]
            if errors:
                first = errors[0]
                raise OSError(
                    f"s3 delete of {len(errors)} key(s) in bucket {self.bucket} failed: "
                    f"{first.get('Key')}: {first.get('Code')} {first.get('Message')}"
                )
