"""PreemptContext: learn that the master wants this task to stop (pause, preemption)."""

import enum
import logging
import threading
from typing import Optional

from determined.common import api
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")

LONG_POLL_SECONDS = 60


class PreemptMode(enum.Enum):
    """How should_preempt() is called: WorkersAskChief (all workers, chief asks and broadcasts),
    ChiefOnly (only the chief calls), WorkersAskMaster (each worker asks the master)."""

    WorkersAskChief = "WORKERS_ASK_CHIEF"
    WorkersAskMaster = "WORKERS_ASK_MASTER"
    ChiefOnly = "CHIEF_ONLY"


class _PreemptionWatcher(threading.Thread):
    """Long-polls the preemption signal: first with timeoutSeconds=0, then 60, until it is set."""

    def __init__(self, session: api.Session, allocation_id: str, long_poll_seconds: int = LONG_POLL_SECONDS):
        super().__init__(name="determined-preemption", daemon=True)
        self._session = session
        self._allocation_id = allocation_id
        self._long_poll = long_poll_seconds
        self._cond = threading.Condition()
        self._should_preempt: Optional[bool] = None
        self._stop_requested = False

    def run(self) -> None:
        timeout = 0
        path = f"/api/v1/allocations/{self._allocation_id}/signals/preemption"
        while not self._stop_requested:
            try:
                resp = self._session.get(
                    path,
                    params={"timeoutSeconds": timeout},
                    timeout=timeout + 10,
                    should_stop=lambda: self._stop_requested,
                )
                preempt = bool((resp or {}).get("preempt"))
            except Exception as e:  # noqa: BLE001
                if self._stop_requested:
                    return
                logger.warning("checking the preemption signal failed, assuming none: %s", e)
                preempt = False
                if isinstance(e, api.APIException):
                    # The master does not offer the signal (or rejects us): stop asking.
                    self._set(False)
                    return
            self._set(preempt)
            if preempt:
                logger.info("the master asked this task to stop (preemption signal)")
                return
            timeout = self._long_poll

    def _set(self, value: bool) -> None:
        with self._cond:
            if self._should_preempt is not True:
                self._should_preempt = value
            self._cond.notify_all()

    def get_should_preempt(self) -> bool:
        with self._cond:
            while self._should_preempt is None and self.is_alive():
                self._cond.wait(timeout=1.0)
            return bool(self._should_preempt)

    def close(self) -> None:
        self._stop_requested = True
        with self._cond:
            self._cond.notify_all()


class PreemptContext:
    """Gives access to preemption signals from the master (pause, scheduler preemption)."""

    def __init__(
        self,
        session: api.Session,
        allocation_id: str,
        dist: DistributedContext,
        preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
        *,
        long_poll_seconds: int = LONG_POLL_SECONDS,
    ) -> None:
        self._session = session
        self._allocation_id = allocation_id
        self._dist = dist
        self._preempt_mode = PreemptMode(preempt_mode)
        self._ack_sent = False
        self._watcher: Optional[_PreemptionWatcher] = None
        if self._dist.rank == 0 or self._preempt_mode == PreemptMode.WorkersAskMaster:
            self._watcher = _PreemptionWatcher(session, allocation_id, long_poll_seconds)

    def start(self) -> "PreemptContext":
        if self._watcher is not None and not self._watcher.is_alive() and self._watcher.ident is None:
            self._watcher.start()
        return self

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()

    def should_preempt(self, auto_ack: bool = True) -> bool:
        """True if the task should checkpoint and exit; acknowledges the signal when auto_ack."""
        mode = self._preempt_mode
        if mode == PreemptMode.ChiefOnly and self._dist.rank != 0:
            raise RuntimeError("with PreemptMode.ChiefOnly only the chief may call should_preempt()")
        if mode == PreemptMode.WorkersAskChief and self._dist.size > 1:
            if self._dist.rank == 0:
                out = self._dist.broadcast(self._ask())
            else:
                out = self._dist.broadcast(None)
        else:
            out = self._ask()
        if out and auto_ack and self._dist.rank == 0:
            self.acknowledge_preemption_signal()
        return bool(out)

    def _ask(self) -> bool:
        assert self._watcher is not None
        self.start()
        return self._watcher.get_should_preempt()

    def acknowledge_preemption_signal(self) -> None:
        """Tell the master this task is stopping because of the signal and expects to resume."""
        if self._ack_sent:
            return
        logger.info("acknowledging the preemption signal")
        self._session.post(f"/api/v1/allocations/{self._allocation_id}/signals/ack_preemption")
        self._ack_sent = True


class DummyPreemptContext(PreemptContext):
    """Off-cluster: never preempted."""

    def __init__(self, dist: DistributedContext, preempt_mode: PreemptMode = PreemptMode.WorkersAskChief):
        self._dist = dist
        self._preempt_mode = PreemptMode(preempt_mode)
        self._watcher = None
        self._ack_sent = False

    def start(self) -> "PreemptContext":
        return self

    def close(self) -> None:
        pass

    def should_preempt(self, auto_ack: bool = True) -> bool:
        return False

    def acknowledge_preemption_signal(self) -> None:
        pass
