"""Ships an unmanaged trial's stdout and stderr to the master, so ``det trial logs`` shows them.

Writes still reach the terminal; each complete line is also queued, and a thread posts the
queue to POST /api/v1/task/logs every ``FLUSH_SECONDS`` (or at ``BATCH_LINES`` lines). The
queue is bounded: when the master is unreachable for long, lines are dropped rather than
blocking the script. Close sends what is left.
"""

import datetime
import queue
import sys
import threading
import time
import types
from typing import Any, Callable, Dict, List, Optional, TextIO, Tuple

from determined.common import api

FLUSH_SECONDS = 1.0
BATCH_LINES = 1000
QUEUE_LINES = 10000
CLOSE_SECONDS = 10.0


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class _Interceptor:
    """A text stream that passes writes on and hands complete lines to ``handler``."""

    def __init__(self, original: TextIO, stdtype: str, handler: Callable[[str, str], None]) -> None:
        self._original = original
        self._stdtype = stdtype
        self._handler = handler
        self._buf = ""
        self._lock = threading.Lock()

    def write(self, data: str) -> int:
        n = self._original.write(data)
        with self._lock:
            self._buf += data
            while "\n" in self._buf:
                line, self._buf = self._buf.split("\n", 1)
                self._handler(self._stdtype, line + "\n")
        return n

    def flush_partial(self) -> None:
        with self._lock:
            if self._buf:
                self._handler(self._stdtype, self._buf + "\n")
                self._buf = ""

    def flush(self) -> None:
        self._original.flush()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._original, attr)


_Entry = Tuple[str, str, str]  # (timestamp, stdtype, line)


class _UnmanagedTrialLogShipper:
    def __init__(
        self, *, session: api.Session, trial_id: int, task_id: str, rank: Optional[int] = None
    ) -> None:
        self._session = session
        self._trial_id = trial_id
        self._task_id = task_id
        self._rank = rank
        self._queue: "queue.Queue[Optional[_Entry]]" = queue.Queue(maxsize=QUEUE_LINES)
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._stdout: Optional[_Interceptor] = None
        self._stderr: Optional[_Interceptor] = None
        self._dropped = 0

    def _enqueue(self, stdtype: str, line: str) -> None:
        try:
            self._queue.put_nowait((_now(), stdtype, line))
        except queue.Full:
            self._dropped += 1

    def start(self) -> "_UnmanagedTrialLogShipper":
        self._stdout = _Interceptor(sys.stdout, "stdout", self._enqueue)
        self._stderr = _Interceptor(sys.stderr, "stderr", self._enqueue)
        sys.stdout = self._stdout  # type: ignore[assignment]
        sys.stderr = self._stderr  # type: ignore[assignment]
        self._thread = threading.Thread(target=self._run, name="determined-unmanaged-logs", daemon=True)
        self._thread.start()
        return self

    def _body(self, batch: List[_Entry]) -> Dict[str, Any]:
        logs = []
        for ts, stdtype, line in batch:
            entry: Dict[str, Any] = {"taskId": self._task_id, "timestamp": ts, "stdtype": stdtype, "log": line}
            if self._rank is not None:
                entry["rankId"] = self._rank
            logs.append(entry)
        return {"logs": logs}

    def _ship(self, batch: List[_Entry]) -> None:
        if not batch:
            return
        try:
            self._session.post("/api/v1/task/logs", json_body=self._body(batch), should_stop=self._stop.is_set)
        except Exception as e:  # noqa: BLE001 - logs are best effort
            original = self._stderr._original if self._stderr is not None else sys.__stderr__
            if original is not None:
                original.write(f"determined: could not ship {len(batch)} log lines of trial {self._trial_id}: {e}\n")

    def _run(self) -> None:
        batch: List[_Entry] = []
        deadline = time.monotonic() + FLUSH_SECONDS
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                item = ("", "", "")  # the flush interval passed
            if item is None:
                self._ship(batch)
                return
            if item[2]:
                batch.append(item)
            if len(batch) >= BATCH_LINES or time.monotonic() >= deadline:
                self._ship(batch)
                batch = []
                deadline = time.monotonic() + FLUSH_SECONDS

    def close(
        self,
        exc_type: Optional[type] = None,
        exc_val: Optional[BaseException] = None,
        exc_tb: Optional[types.TracebackType] = None,
    ) -> None:
        if self._thread is None:
            return
        for stream in (self._stdout, self._stderr):
            if stream is not None:
                stream.flush_partial()
        if sys.stdout is self._stdout and self._stdout is not None:
            sys.stdout = self._stdout._original
        if sys.stderr is self._stderr and self._stderr is not None:
            sys.stderr = self._stderr._original
        try:
            self._queue.put(None, timeout=CLOSE_SECONDS)
        except queue.Full:
            pass
        self._thread.join(timeout=CLOSE_SECONDS)
        self._stop.set()
        self._thread = None
        if self._dropped and sys.stderr is not None:
            sys.stderr.write(f"determined: {self._dropped} log lines of trial {self._trial_id} were not shipped\n")
