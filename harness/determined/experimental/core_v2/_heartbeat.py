"""The state of an unmanaged trial, reported by its own script.

On start the trial is RUNNING and a thread sends a heartbeat (PATCH /api/v1/trials/{id} without
a state) every ``HEARTBEAT_SECONDS``; the master marks a running trial whose heartbeats stop for
5 minutes ERROR. On close the trial is COMPLETED, or ERROR when the script is ending with an
uncaught exception or a non-zero ``sys.exit`` (seen through ``sys.excepthook`` and ``sys.exit``,
since ``core_v2.close()`` usually runs from ``atexit``).
"""

import logging
import sys
import threading
import types
from typing import Any, Optional, Union

from determined.common import api

logger = logging.getLogger("determined.core")

HEARTBEAT_SECONDS = 60.0
RETRY_SECONDS = 10.0


class _ExitHook:
    """Remembers how the script is ending: an uncaught exception or a sys.exit code."""

    def __init__(self) -> None:
        self.exit_code: Optional[Union[int, str]] = None
        self.exception: Optional[BaseException] = None
        self._orig_exit: Any = None
        self._orig_excepthook: Any = None

    def hook(self) -> None:
        self._orig_exit = sys.exit
        self._orig_excepthook = sys.excepthook
        sys.exit = self.exit  # type: ignore[assignment]
        sys.excepthook = self.exc_handler

    def unhook(self) -> None:
        if self._orig_exit is not None and sys.exit == self.exit:
            sys.exit = self._orig_exit
        if self._orig_excepthook is not None and sys.excepthook == self.exc_handler:
            sys.excepthook = self._orig_excepthook

    def exit(self, code: Optional[Union[int, str]] = 0) -> None:
        self.exit_code = code
        self._orig_exit(code)

    def exc_handler(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.exception = exc
        self._orig_excepthook(exc_type, exc, tb)


class _HeartbeatThread(threading.Thread):
    def __init__(self, session: api.Session, trial_id: int) -> None:
        super().__init__(daemon=True, name="determined-unmanaged-heartbeat")
        self._session = session
        self._trial_id = trial_id
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            wait = HEARTBEAT_SECONDS
            try:
                self._session.patch(
                    f"/api/v1/trials/{self._trial_id}",
                    json_body={"trialId": self._trial_id},
                    should_stop=self._stop_event.is_set,
                )
            except Exception as e:  # noqa: BLE001 - keep beating
                if self._stop_event.is_set():
                    return
                logger.warning("heartbeat of trial %s failed (retrying in %ss): %s", self._trial_id, RETRY_SECONDS, e)
                wait = RETRY_SECONDS
            self._stop_event.wait(wait)

    def close(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)


class _UnmanagedTrialHeartbeat:
    def __init__(self, *, session: api.Session, trial_id: int) -> None:
        self._session = session
        self._trial_id = trial_id
        self._thread: Optional[_HeartbeatThread] = None
        self._hook = _ExitHook()
        self._closed = False

    def _update_state(self, state: str) -> None:
        self._session.patch(
            f"/api/v1/trials/{self._trial_id}", json_body={"trialId": self._trial_id, "state": state}
        )

    def start(self) -> "_UnmanagedTrialHeartbeat":
        self._update_state("STATE_RUNNING")
        self._thread = _HeartbeatThread(self._session, self._trial_id)
        self._thread.start()
        self._hook.hook()
        return self

    def close(
        self,
        exc_type: Optional[type] = None,
        exc_val: Optional[BaseException] = None,
        exc_tb: Optional[types.TracebackType] = None,
    ) -> None:
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._thread.close()
        self._hook.unhook()
        if self._hook.exception is not None:
            exc_val = self._hook.exception
        elif self._hook.exit_code not in (None, 0):
            exc_val = RuntimeError(f"exit code {self._hook.exit_code}")
        if exc_val is None and exc_type is not None:
            exc_val = RuntimeError(getattr(exc_type, "__name__", str(exc_type)))
        if exc_val is None:
            self._update_state("STATE_COMPLETED")
        else:
            logger.error("trial %s reached an ERROR state: %s", self._trial_id, exc_val)
            self._update_state("STATE_ERROR")
