"""An in-process fake of the master's trial-facing routes (api/README.md), for tests.

Records every request; can fail requests with 503, drop connections, stop listening for a
while (connection refused) and come back on the same port with its state intact.
"""

import http.server
import json
import re
import socket
import threading
import time
import urllib.parse
from typing import Any, Callable, Dict, List, Optional, Tuple

TOKEN = "alloc-token"


class Request:
    def __init__(self, method: str, path: str, query: Dict[str, str], headers: Dict[str, str], body: Any):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    def __repr__(self) -> str:
        return f"{self.method} {self.path} {self.body!r}"


def _error(status: int, code: int, reason: str, msg: str) -> Tuple[int, Any]:
    return status, {"error": {"code": code, "reason": reason, "error": msg}}


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that go away mid-request (a trial exiting during a long poll) are expected.
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, OSError)):
            super().handle_error(request, client_address)


class FakeMaster:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.lock = threading.Condition()
        self.requests: List[Request] = []
        self.metrics: List[Dict[str, Any]] = []
        self.checkpoints: Dict[str, Dict[str, Any]] = {}
        self.progress: List[float] = []
        self.completed_ops: List[Dict[str, Any]] = []
        self.early_exits: List[Dict[str, Any]] = []
        self.runner_state: Optional[str] = None
        self.run_metadata: Dict[str, Any] = {}
        self.best_validation: Optional[float] = None
        self.acks = 0
        self.preempt = False
        self.ops: List[int] = []  # searcher op lengths still to hand out
        self.run_id = 1
        self.fail_next = 0  # answer this many (non-preemption) requests with 503
        self.drop_next = 0  # close this many connections without answering
        self.reject: Dict[str, Tuple[int, Any]] = {}  # regex on "METHOD path" -> response
        self.port = 0
        self._server: Optional[http.server.ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeMaster":
        master = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                master._dispatch(self)

            do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle

        server = _Server(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self.lock:
            self.lock.notify_all()

    def restart(self) -> None:
        """Listen again on the same port (state kept)."""
        deadline = time.monotonic() + 5
        while True:
            try:
                self.start()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    # -- helpers for tests ----------------------------------------------------------------
    def wait_for(self, pred: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        with self.lock:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out waiting for the fake master")
                self.lock.wait(timeout=min(left, 0.1))

    def set_preempt(self) -> None:
        with self.lock:
            self.preempt = True
            self.lock.notify_all()

    def requests_to(self, pattern: str) -> List[Request]:
        with self.lock:
            return [r for r in self.requests if re.search(pattern, f"{r.method} {r.path}")]

    def env(self, tmp_path: Any, **extra: str) -> Dict[str, str]:
        config = {
            "searcher": {"name": "single", "metric": "validation_loss", "max_length": {"batches": 100}},
            "checkpoint_storage": {"type": "shared_fs", "host_path": str(tmp_path), "storage_path": "ckpts"},
            "data": {"url": "x"},
            "hyperparameters": {"lr": 0.1},
        }
        env = {
            "DET_MASTER": self.url,
            "DET_CLUSTER_ID": "cluster-1",
            "DET_AGENT_ID": "agent-1",
            "DET_SLOT_IDS": "[0]",
            "DET_TASK_ID": "1.abc",
            "DET_ALLOCATION_ID": "1.abc.1",
            "DET_SESSION_TOKEN": self.token,
            "DET_TASK_TYPE": "TRIAL",
            "DET_EXPERIMENT_ID": "1",
            "DET_TRIAL_ID": "7",
            "DET_TRIAL_RUN_ID": str(self.run_id),
            "DET_TRIAL_SEED": "42",
            "DET_EXPERIMENT_CONFIG": json.dumps(config),
            "DET_HPARAMS": json.dumps({"lr": 0.1}),
            "DET_STEPS_COMPLETED": "0",
            "DET_USER": "determined",
            "DET_RETRY_SECONDS": "20",
        }
        env.update(extra)
        return env

    # -- request handling -----------------------------------------------------------------
    def _dispatch(self, h: http.server.BaseHTTPRequestHandler) -> None:
        parsed = urllib.parse.urlparse(h.path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = {"__invalid_json__": raw.decode(errors="replace")}
        req = Request(h.command, parsed.path, query, {k.lower(): v for k, v in h.headers.items()}, body)
        is_poll = "/signals/preemption" in parsed.path

        with self.lock:
            if not is_poll and self.drop_next > 0:
                self.drop_next -= 1
                h.close_connection = True
                try:
                    h.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if not is_poll and self.fail_next > 0:
                self.fail_next -= 1
                status, resp = _error(503, 14, "Unavailable", "master is busy")
            else:
                self.requests.append(req)
                status, resp = self._route(req)
            self.lock.notify_all()
        if status == -1:  # long poll
            status, resp = self._long_poll(req)
        data = json.dumps(resp).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _long_poll(self, req: Request) -> Tuple[int, Any]:
        timeout = float(req.query.get("timeoutSeconds", "0"))
        deadline = time.monotonic() + timeout
        with self.lock:
            while not self.preempt and self._server is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.lock.wait(timeout=min(left, 0.1))
            return 200, {"preempt": self.preempt}

    def _route(self, req: Request) -> Tuple[int, Any]:
        key = f"{req.method} {req.path}"
        for pattern, resp in self.reject.items():
            if re.fullmatch(pattern, key):
                return resp
        if req.headers.get("grpc-metadata-x-allocation-token") != f"Bearer {self.token}":
            return _error(401, 16, "Unauthenticated", "token missing")
        b = req.body or {}
        m = re.fullmatch(r"POST /api/v1/trials/(\d+)/metrics", key)
        if m:
            if b["metrics"]["trialRunId"] != self.run_id:
                return _error(400, 3, "InvalidArgument", "invalid run id")
            self.metrics.append(b)
            return 200, {}
        m = re.fullmatch(r"GET /api/v1/trials/(\d+)/searcher/operation", key)
        if m:
            if not self.ops:
                return 200, {"op": None, "completed": True}
            return 200, {"op": {"validateAfter": {"requestId": "r1", "length": str(self.ops[0])}}, "completed": False}
        m = re.fullmatch(r"POST /api/v1/trials/(\d+)/searcher/completed_operation", key)
        if m:
            self.completed_ops.append(b)
            if self.ops and int(b["op"]["length"]) == self.ops[0]:
                self.ops.pop(0)
            return 200, {}
        if re.fullmatch(r"POST /api/v1/trials/(\d+)/progress", key):
            self.progress.append(b["progress"])
            return 200, {}
        if re.fullmatch(r"POST /api/v1/trials/(\d+)/early_exit", key):
            if self.early_exits:
                return _error(400, 9, "FailedPrecondition", "early exit already reported")
            self.early_exits.append(b)
            return 200, {}
        if re.fullmatch(r"POST /api/v1/trials/(\d+)/runner/metadata", key):
            self.runner_state = b.get("state")
            return 200, {}
        if re.fullmatch(r"POST /api/v1/runs/(\d+)/metadata", key):
            self.run_metadata = b["metadata"]
            return 200, {"metadata": self.run_metadata}
        if re.fullmatch(r"GET /api/v1/runs/(\d+)/metadata", key):
            return 200, {"metadata": self.run_metadata}
        if re.fullmatch(r"GET /api/v1/experiments/(\d+)/searcher/best_searcher_validation_metric", key):
            if self.best_validation is None:
                return _error(404, 5, "NotFound", "no validation metrics yet")
            return 200, {"metric": self.best_validation}
        if key == "POST /api/v1/checkpoints":
            self.checkpoints[b["uuid"]] = b
            return 200, {}
        m = re.fullmatch(r"GET /api/v1/checkpoints/([^/]+)", key)
        if m:
            ckpt = self.checkpoints.get(m.group(1))
            if ckpt is None:
                return _error(404, 5, "NotFound", f"checkpoint {m.group(1)} not found")
            return 200, {"checkpoint": ckpt}
        if key == "PATCH /api/v1/checkpoints":
            return 200, {}
        if re.fullmatch(r"GET /api/v1/allocations/[^/]+/signals/preemption", key):
            if self.preempt or float(req.query.get("timeoutSeconds", "0")) == 0:
                return 200, {"preempt": self.preempt}
            return -1, None
        if re.fullmatch(r"POST /api/v1/allocations/[^/]+/signals/ack_preemption", key):
            self.acks += 1
            return 200, {}
        return _error(404, 5, "NotFound", f"no route {key}")
