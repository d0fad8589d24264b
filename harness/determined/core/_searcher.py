"""SearcherContext: the searcher operations (train to ``length``, then report a metric)."""

import enum
import json
import logging
import math
import os
import time
from typing import Any, Callable, Dict, Iterator, Optional

from determined.common import api
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")


class Unit(enum.Enum):
    EPOCHS = "EPOCHS"
    RECORDS = "RECORDS"
    BATCHES = "BATCHES"


class SearcherMode(enum.Enum):
    """WorkersAskChief: all workers call operations() in step; ChiefOnly: only the chief does."""

    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHIEF_ONLY"


def _parse_units(max_length: Any) -> Optional[Unit]:
    if isinstance(max_length, dict) and len(max_length) == 1:
        key = next(iter(max_length))
        try:
            return Unit(str(key).upper())
        except ValueError:
            return None
    return None


def _length_of(max_length: Any) -> Optional[int]:
    if isinstance(max_length, dict):
        vals = list(max_length.values())
        return int(vals[0]) if len(vals) == 1 else None
    if isinstance(max_length, (int, float)) and not isinstance(max_length, bool):
        return int(max_length)
    return None


def _configured_max_length(config: Dict[str, Any]) -> Optional[int]:
    searcher = (config or {}).get("searcher") or {}
    for key in ("max_length", "max_time", "max_steps", "target_trial_steps"):
        if key in searcher:
            n = _length_of(searcher[key])
            if n is not None:
                return n
    return None


class SearcherOperation:
    """One train-validate-report cycle: train until ``length`` (absolute, not incremental),
    then call :meth:`report_completed` with the searcher metric."""

    def __init__(
        self,
        session: Optional[api.Session],
        trial_id: int,
        length: int,
        is_chief: bool,
        *,
        post_async: Optional[Callable[[str, Any], None]] = None,
        flush: Optional[Callable[[], None]] = None,
        report_to_master: bool = True,
    ) -> None:
        self._session = session
        self._trial_id = trial_id
        self._length = length
        self._is_chief = is_chief
        self._completed = False
        self._post_async = post_async
        self._flush = flush or (lambda: None)
        self._report_to_master = report_to_master and session is not None

    @property
    def length(self) -> int:
        return self._length

    def report_progress(self, length: float) -> None:
        """Report training progress, in the same units as ``length``."""
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_progress() from the chief worker")
        if self._completed and self._length != 0:
            raise RuntimeError("you must not call op.report_progress() after op.report_completed()")
        logger.debug("op.report_progress(%s)", length)
        if self._session is None:
            return
        progress = float(length) / self._length if self._length else 1.0
        progress = min(1.0, max(0.0, progress))
        body = {"progress": progress, "isRaw": True}
        path = f"/api/v1/trials/{self._trial_id}/progress"
        if self._post_async is not None:
            self._post_async(path, body)
        else:
            self._session.post(path, json_body=body)

    def report_completed(self, searcher_metric: Any) -> None:
        """Report the searcher metric after training to ``length`` (chief only, once)."""
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_completed() from the chief worker")
        if self._completed and self._length != 0:
            raise RuntimeError("you may only call op.report_completed() once")
        if isinstance(searcher_metric, float) and math.isnan(searcher_metric):
            raise RuntimeError("searcher_metric may not be NaN")
        self._completed = True
        logger.debug("op.report_completed(%s)", searcher_metric)
        if not self._report_to_master:
            return
        self._flush()
        assert self._session is not None
        self._session.post(
            f"/api/v1/trials/{self._trial_id}/searcher/completed_operation",
            json_body={"op": {"length": self._length}, "searcherMetric": searcher_metric},
        )

    def __repr__(self) -> str:
        return f"SearcherOperation(length={self._length}, completed={self._completed})"


class DummySearcherOperation(SearcherOperation):
    """An operation no master hears of: progress and completion are only logged."""

    def __init__(self, length: int, is_chief: bool) -> None:
        super().__init__(None, 0, length, is_chief, report_to_master=False)

    def report_progress(self, length: float) -> None:
        super().report_progress(length)
        logger.info("progress report: %s/%s", length, self._length)

    def report_completed(self, searcher_metric: Any) -> None:
        super().report_completed(searcher_metric)
        logger.info("SearcherOperation complete: searcher_metric=%r", searcher_metric)


# The first operation of this process's trial, taken from DET_SEARCHER_OP at most once per
# process and removed from the environment then: a later SearcherContext (or core.init), and a
# process started from this one afterwards, ask the master as usual.
_env_op_taken = False


def _take_env_op(trial_id: int, allocation_id: str) -> Optional[int]:
    """The length of the operation the master put in the start command's environment (what
    GET .../searcher/operation answered when the trial was started), or None."""
    global _env_op_taken
    if _env_op_taken:
        return None
    _env_op_taken = True
    raw = os.environ.pop("DET_SEARCHER_OP", None)
    if not raw:
        return None
    try:
        op = json.loads(raw)
        if op.get("trialId") != trial_id or op.get("allocationId") != allocation_id:
            return None
        return int(op["length"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


class SearcherContext:
    """Gives access to the operations the master's search algorithm emits for this trial."""

    def __init__(
        self,
        session: api.Session,
        dist: DistributedContext,
        trial_id: int,
        run_id: int,
        allocation_id: str,
        units: Optional[Unit] = None,
        *,
        config: Optional[Dict[str, Any]] = None,
        post_async: Optional[Callable[[str, Any], None]] = None,
        flush: Optional[Callable[[], None]] = None,
        poll_interval: float = 1.0,
    ) -> None:
        self._session = session
        self._dist = dist
        self._trial_id = trial_id
        self._run_id = run_id
        self._allocation_id = allocation_id
        self._units = units
        self._config = config or {}
        self._post_async = post_async
        self._flush = flush or (lambda: None)
        self._poll_interval = poll_interval
        self._local_ops: Optional[list] = None  # set when the master has no searcher endpoint
        self._acked = False

    def _make_op(self, length: int, report_to_master: bool = True) -> SearcherOperation:
        return SearcherOperation(
            self._session,
            self._trial_id,
            length=length,
            is_chief=self._dist.rank == 0,
            post_async=self._post_async,
            flush=self._flush,
            report_to_master=report_to_master,
        )

    def _get_searcher_op(self) -> Optional[SearcherOperation]:
        if self._local_ops is not None:
            return self._local_ops.pop(0) if self._local_ops else None
        # The trial's first operation came with its start: no round trip before training.
        length = _take_env_op(self._trial_id, self._allocation_id)
        if length is not None:
            return self._make_op(length)
        delay = 0.05
        while True:
            try:
                resp = self._session.get(f"/api/v1/trials/{self._trial_id}/searcher/operation") or {}
            except api.APIException as e:
                if e.status not in (404, 501):
                    raise
                length = _configured_max_length(self._config)
                logger.warning(
                    "the master has no searcher operations for this trial (%s); training to the "
                    "configured searcher length %s", e, length,
                )
                self._local_ops = [self._make_op(length, report_to_master=False)] if length else []
                return self._local_ops.pop(0) if self._local_ops else None
            if resp.get("completed"):
                return None
            op = resp.get("op") or {}
            validate_after = op.get("validateAfter") or op.get("validate_after")
            if validate_after and validate_after.get("length") is not None:
                return self._make_op(int(validate_after["length"]))
            # No operation decided yet (e.g. the searcher waits for other trials): poll again.
            time.sleep(delay)
            delay = min(delay * 2, self._poll_interval)

    def operations(
        self,
        searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
        auto_ack: bool = True,
    ) -> Iterator[SearcherOperation]:
        """Iterate through all the operations this searcher has for this trial."""
        searcher_mode = SearcherMode(searcher_mode)
        if self._dist.rank != 0 and searcher_mode == SearcherMode.ChiefOnly:
            raise RuntimeError("with SearcherMode.ChiefOnly only the chief may call operations()")
        while True:
            if self._dist.rank == 0:
                op = self._get_searcher_op()
                if searcher_mode == SearcherMode.WorkersAskChief and self._dist.size > 1:
                    self._dist.broadcast(None if op is None else op.length)
            else:
                length = self._dist.broadcast(None)
                op = None if length is None else self._make_op(length)
            if op is None:
                if auto_ack:
                    self.acknowledge_out_of_ops()
                return
            yield op
            if self._dist.rank == 0 and not op._completed:
                raise RuntimeError(f"you must call op.report_completed() on each operation ({op})")

    def acknowledge_out_of_ops(self) -> None:
        """Tell the master you are exiting because the searcher has no more operations.

        The master already knows this (it answered ``completed: true``), so nothing is sent;
        the process simply exits 0 afterwards.
        """
        logger.debug("acknowledge_out_of_ops()")
        self._acked = True

    def get_configured_units(self) -> Optional[Unit]:
        """The units of ``searcher.max_length`` in the experiment config (None if unitless)."""
        return self._units


class DummySearcherContext(SearcherContext):
    """Off-cluster: yields a single operation of a fixed length (default 1)."""

    def __init__(self, dist: DistributedContext, length: int = 1, units: Optional[Unit] = None) -> None:
        self._dist = dist
        self._length = length
        self._units = units
        self._session = None  # type: ignore[assignment]
        self._trial_id = 0
        self._post_async = None
        self._flush = lambda: None
        self._acked = False

    def operations(
        self,
        searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
        auto_ack: bool = True,
    ) -> Iterator[SearcherOperation]:
        SearcherMode(searcher_mode)
        op = DummySearcherOperation(self._length, is_chief=self._dist.rank == 0)
        yield op
        if self._dist.rank == 0 and not op._completed:
            raise RuntimeError("you must call op.report_completed() on each operation")
        if auto_ack:
            self.acknowledge_out_of_ops()


class SearcherContextMissing(SearcherContext):
    """The ``searcher`` of a Context that has no searcher (tasks that are not trials):
    asking it for operations fails with an explanation."""

    def __init__(self) -> None:
        self._units = None

    def operations(
        self,
        searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
        auto_ack: bool = True,
    ) -> Iterator[SearcherOperation]:
        raise ValueError(
            "this task has no searcher: core_context.searcher is only available to trials "
            "(in Determined 0.38 it also needs searcher.max_length in the experiment config; "
            "training length can instead come from your own hyperparameters)"
        )

    def acknowledge_out_of_ops(self) -> None:
        raise ValueError("this task has no searcher to acknowledge")

    def get_configured_units(self) -> Optional[Unit]:
        return None
