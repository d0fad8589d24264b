"""_MetricsContext: ships metric (and other fire-and-forget) reports from a background thread.

Reports keep their order. ``flush()`` waits until everything queued so far has been accepted by
the master; calls that must be ordered after earlier reports (checkpoints, searcher completion,
early exit) flush first. A report the master rejects (4xx), or that could not be delivered
within the retry budget, is raised from the next report/flush/close in the caller's thread.
"""

import datetime
import logging
import queue
import threading
from typing import Any, Dict, List, Optional, Tuple

from determined.common import api

logger = logging.getLogger("determined.core")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


class _MetricsContext:
    def __init__(self, session: api.Session, trial_id: int, run_id: int, maxsize: int = 1000) -> None:
        self._session = session
        self._trial_id = trial_id
        self._run_id = run_id
        self._queue: "queue.Queue[Optional[Tuple[str, Any]]]" = queue.Queue(maxsize=maxsize)
        self._cond = threading.Condition()
        self._pending = 0
        self._error: Optional[BaseException] = None
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    # -- producer side --------------------------------------------------------------------
    def report(
        self,
        group: str,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        inner: Dict[str, Any] = {"avgMetrics": metrics}
        if batch_metrics is not None:
            inner["batchMetrics"] = batch_metrics
        body = {
            "group": group,
            "metrics": {
                "trialId": self._trial_id,
                "trialRunId": self._run_id,
                "stepsCompleted": steps_completed,
                "reportTime": _now(),
                "metrics": inner,
            },
        }
        # Serialize now, so later mutation of the caller's dicts cannot change the report.
        self.post_async(f"/api/v1/trials/{self._trial_id}/metrics", api.json_compatible(body))

    def post_async(self, path: str, body: Any) -> None:
        self._raise_error()
        if self._closed:
            raise RuntimeError("core.Context is closed; cannot report any more")
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="determined-metrics", daemon=True)
            self._thread.start()
        with self._cond:
            self._pending += 1
        self._queue.put((path, body))

    def flush(self) -> None:
        """Block until every queued report is delivered; raise a delivery error if any."""
        with self._cond:
            while self._pending > 0:
                self._cond.wait(timeout=1.0)
        self._raise_error()

    def close(self, raise_errors: bool = True) -> None:
        if self._closed:
            return
        try:
            with self._cond:
                while self._pending > 0:
                    self._cond.wait(timeout=1.0)
        finally:
            self._closed = True
            if self._thread is not None:
                self._queue.put(None)
                self._thread.join()
                self._thread = None
        if raise_errors:
            self._raise_error()
        elif self._error is not None:
            logger.error("a report to the master failed: %s", self._error)

    # -- consumer side --------------------------------------------------------------------
    def _raise_error(self) -> None:
        err = self._error
        if err is not None:
            raise RuntimeError(f"a report to the master failed: {err}") from err

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            path, body = item
            try:
                self._session.post(path, json_body=body)
            except Exception as e:  # noqa: BLE001 - surfaced in the caller's thread
                logger.error("POST %s failed: %s", path, e)
                if self._error is None:
                    self._error = e
            finally:
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()


class _DummyMetricsContext:
    """Off-cluster: print reports to stdout."""

    def report(
        self,
        group: str,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        shown = ", ".join(f"{k}={v}" for k, v in metrics.items())
        print(f"[{group}] steps_completed={steps_completed}: {shown}", flush=True)

    def post_async(self, path: str, body: Any) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self, raise_errors: bool = True) -> None:
        pass
