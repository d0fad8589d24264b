"""What the notebook, shell and TensorBoard tasks share: a free loopback port, waiting for the
service to listen, and registering it with the master (which then proxies /proxy/{task_id}/)."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from typing import List, Optional


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def _post(path: str, body: dict) -> None:
    master = os.environ["DET_MASTER"].rstrip("/")
    req = urllib.request.Request(
        master + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            # Task processes authenticate with their allocation token.
            "Grpc-Metadata-x-allocation-token": "Bearer " + os.environ["DET_SESSION_TOKEN"],
        },
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        resp.read()


def register(port: int, extra: Optional[dict] = None) -> None:
    """Tells the master where the service listens and that it is ready."""
    allocation_id = os.environ["DET_ALLOCATION_ID"]
    body = {"allocationId": allocation_id, "proxyAddress": f"127.0.0.1:{port}"}
    body.update(extra or {})
    _post(f"/api/v1/allocations/{allocation_id}/proxy_address", body)
    _post(f"/api/v1/allocations/{allocation_id}/ready", {"allocationId": allocation_id})


def run_service(
    argv: List[str], port: int, env: Optional[dict] = None, extra: Optional[dict] = None
) -> int:
    """Starts the service, registers it once it listens, and exits with its exit code."""
    print("starting: " + " ".join(argv), flush=True)
    proc = subprocess.Popen(argv, env=env)
    if not wait_listening(port, proc):
        code = proc.poll()
        if code is None:
            proc.kill()
            code = proc.wait()
        print(f"the service did not listen on port {port}; exit code {code}", file=sys.stderr)
        return code or 1
    register(port, extra)
    print(f"service ready on 127.0.0.1:{port}", flush=True)
    return proc.wait()
