"""A real S3-compatible server (the npm package s3rver) on 127.0.0.1 for storage tests.

``make setup`` installs it with ``npm ci --prefix tools/s3rver``. Tests that need it skip with
a clear reason only when node or that install is missing.
"""

import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
S3RVER_JS = os.path.join(REPO, "tools", "s3rver", "node_modules", "s3rver", "bin", "s3rver.js")
# s3rver's built-in credentials.
ACCESS_KEY = "S3RVER"
SECRET_KEY = "S3RVER"


def missing_reason() -> Optional[str]:
    """Why s3rver cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is not installed (make setup installs it and s3rver)"
    if not os.path.isfile(S3RVER_JS):
        return f"s3rver is not installed at {S3RVER_JS} (run: make setup, or npm ci --prefix tools/s3rver)"
    try:
        import boto3  # noqa: F401
    except ImportError:
        return "boto3 is not installed (make setup installs Debian's python3-boto3)"
    return None


class S3rver:
    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="s3rver-data-")
        self.log_path = os.path.join(self.data_dir + "-log.txt")
        self.proc: Optional[subprocess.Popen] = None
        self.endpoint_url = ""

    def start(self, timeout: float = 30.0) -> "S3rver":
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            ["node", S3RVER_JS, "-d", self.data_dir, "-a", "127.0.0.1", "-p", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + timeout
        port = None
        while port is None:
            with open(self.log_path, "rb") as f:
                m = re.search(rb"listening on 127\.0\.0\.1:(\d+)", f.read())
            if m:
                port = int(m.group(1))
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"s3rver did not start; its output:\n{self._log_tail()}")
            else:
                time.sleep(0.05)
        self.endpoint_url = f"http://127.0.0.1:{port}"
        while True:  # wait until it answers HTTP
            try:
                urllib.request.urlopen(self.endpoint_url + "/", timeout=2).read()
                break
            except urllib.error.HTTPError:
                break  # any HTTP answer (e.g. 403) means it serves
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"s3rver on {self.endpoint_url} does not answer:\n{self._log_tail()}")
                time.sleep(0.05)
        return self

    def client(self):  # type: ignore[no-untyped-def]
        import boto3
        import botocore.config

        return boto3.session.Session(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY).client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name="us-east-1",
            config=botocore.config.Config(s3={"addressing_style": "path"}),
        )

    def create_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def storage_config(self, bucket: str, prefix: Optional[str] = None) -> dict:
        cfg = {
            "type": "s3",
            "bucket": bucket,
            "access_key": ACCESS_KEY,
            "secret_key": SECRET_KEY,
            "endpoint_url": self.endpoint_url,
        }
        if prefix:
            cfg["prefix"] = prefix
        return cfg

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-4000:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.data_dir, ignore_errors=True)
        try:
            os.remove(self.log_path)
        except OSError:
            pass
