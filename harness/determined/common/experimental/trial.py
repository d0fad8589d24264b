"""Trials in the client SDK: state, logs, metrics (followed while the trial runs), checkpoints."""

import datetime
import enum
import inspect
import time
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

from determined.common import api, util
from determined.common.experimental import _util, checkpoint, metrics
from determined.common.experimental._util import OrderBy

# How often a followed metrics stream asks the master for new reports.
METRICS_POLL_SECONDS = 1.0


class LogLevel(enum.Enum):
    TRACE = "LOG_LEVEL_TRACE"
    DEBUG = "LOG_LEVEL_DEBUG"
    INFO = "LOG_LEVEL_INFO"
    WARNING = "LOG_LEVEL_WARNING"
    ERROR = "LOG_LEVEL_ERROR"
    CRITICAL = "LOG_LEVEL_CRITICAL"

    def _to_bindings(self) -> str:
        return str(self.value)


_LEVEL_RANK = {lvl.value: i for i, lvl in enumerate(LogLevel)}


class TrialState(enum.Enum):
    ACTIVE = "STATE_ACTIVE"
    PAUSED = "STATE_PAUSED"
    STOPPING_CANCELED = "STATE_STOPPING_CANCELED"
    STOPPING_KILLED = "STATE_STOPPING_KILLED"
    STOPPING_COMPLETED = "STATE_STOPPING_COMPLETED"
    STOPPING_ERROR = "STATE_STOPPING_ERROR"
    CANCELED = "STATE_CANCELED"
    COMPLETED = "STATE_COMPLETED"
    ERROR = "STATE_ERROR"
    QUEUED = "STATE_QUEUED"
    PULLING = "STATE_PULLING"
    STARTING = "STATE_STARTING"
    RUNNING = "STATE_RUNNING"


TERMINAL_STATES = {TrialState.CANCELED, TrialState.COMPLETED, TrialState.ERROR}
_TERMINAL_VALUES = {s.value for s in TERMINAL_STATES} | {"STATE_DELETED"}


class TrialSortBy(enum.Enum):
    """The attribute trials are sorted by (the master's ``sortBy`` values)."""

    ID = "SORT_BY_ID"
    START_TIME = "SORT_BY_START_TIME"
    END_TIME = "SORT_BY_END_TIME"
    STATE = "SORT_BY_STATE"
    BEST_VALIDATION_METRIC = "SORT_BY_BEST_VALIDATION_METRIC"
    LATEST_VALIDATION_METRIC = "SORT_BY_LATEST_VALIDATION_METRIC"
    BATCHES_PROCESSED = "SORT_BY_BATCHES_PROCESSED"
    DURATION = "SORT_BY_DURATION"
    RESTARTS = "SORT_BY_RESTARTS"
    CHECKPOINT_SIZE = "SORT_BY_CHECKPOINT_SIZE"
    LOG_RETENTION_DAYS = "SORT_BY_LOG_RETENTION_DAYS"

    def _to_bindings(self) -> str:
        return str(self.value)




class TrialOrderBy(enum.Enum, metaclass=_util.DeprecatedOrderByEnum):
    """Deprecated: use :class:`OrderBy`."""

    ASCENDING = "ORDER_BY_ASC"
    ASC = "ORDER_BY_ASC"
    DESCENDING = "ORDER_BY_DESC"
    DESC = "ORDER_BY_DESC"

    def _to_bindings(self) -> str:
        return str(self.value)


def _sort_value(sort_by: TrialSortBy, t: Dict[str, Any]) -> Any:
    """The value of one trial JSON that ``sort_by`` sorts on (None when it has none)."""

    def metric(field: str) -> Optional[float]:
        v = (t.get(field) or {}).get("searcherMetric")
        if v is None:
            v = t.get("searcherMetricValue") if field == "bestValidation" else None
        return float(v) if isinstance(v, (int, float)) else None

    def duration() -> Optional[float]:
        if not t.get("startTime") or not t.get("endTime"):
            return None
        end = util.parse_protobuf_timestamp(t["endTime"])
        return (end - util.parse_protobuf_timestamp(t["startTime"])).total_seconds()

    value: Any = {
        TrialSortBy.ID: lambda: t.get("id"),
        TrialSortBy.START_TIME: lambda: t.get("startTime"),
        TrialSortBy.END_TIME: lambda: t.get("endTime"),
        TrialSortBy.STATE: lambda: t.get("state"),
        TrialSortBy.BEST_VALIDATION_METRIC: lambda: metric("bestValidation"),
        TrialSortBy.LATEST_VALIDATION_METRIC: lambda: metric("latestValidation"),
        TrialSortBy.BATCHES_PROCESSED: lambda: t.get("totalBatchesProcessed"),
        TrialSortBy.DURATION: duration,
        TrialSortBy.RESTARTS: lambda: t.get("restarts"),
        TrialSortBy.CHECKPOINT_SIZE: lambda: t.get("totalCheckpointSize"),
        TrialSortBy.LOG_RETENTION_DAYS: lambda: t.get("logRetentionDays"),
    }[sort_by]()
    return value


def sort_trials(trials: List[Dict[str, Any]], sort_by: TrialSortBy, order_by: Any) -> List[Any]:
    """Trials sorted by ``sort_by`` (ties by id); trials without the value come last in
    either order."""
    keyed = [(_sort_value(sort_by, t), t) for t in trials]
    present = [(v, t) for v, t in keyed if v is not None]
    missing = [t for v, t in keyed if v is None]
    present.sort(key=lambda vt: (vt[0], vt[1].get("id", 0)), reverse=_util.is_descending(order_by))
    return [t for _, t in present] + sorted(missing, key=lambda t: t.get("id", 0))


class Trial:
    """A trial of an experiment.

    Attributes:
        id, experiment_id, hparams, summary_metrics, state (:class:`TrialState`): as of the
        last :meth:`reload` (or when the object was made from a list).
    """

    def __init__(self, trial_id: int, session: api.Session) -> None:
        self.id = trial_id
        self._session = session
        self.experiment_id: Optional[int] = None
        self.hparams: Optional[Dict[str, Any]] = None
        self.summary_metrics: Optional[Dict[str, Any]] = None
        self.state: Optional[TrialState] = None

    def _hydrate(self, t: Dict[str, Any]) -> None:
        self.experiment_id = t.get("experimentId")
        self.hparams = t.get("hparams")
        self.state = _util.parse_enum(TrialState, t.get("state"))
        self.summary_metrics = t.get("summaryMetrics")

    @classmethod
    def _from_json(cls, t: Dict[str, Any], session: api.Session) -> "Trial":
        trial = cls(int(t["id"]), session)
        trial._hydrate(t)
        return trial

    def reload(self) -> None:
        """Reads the trial again from the master."""
        self._hydrate(self._session.get(f"/api/v1/trials/{self.id}")["trial"])

    def __repr__(self) -> str:
        return f"Trial(id={self.id})"

    def kill(self) -> None:
        self._session.post(f"/api/v1/trials/{self.id}/kill")

    def get_experiment(self) -> Any:
        """The trial's :class:`Experiment`."""
        from determined.common.experimental import experiment

        if not self.experiment_id:
            self.reload()
        body = self._session.get(f"/api/v1/experiments/{self.experiment_id}")
        return experiment.Experiment._from_json(body["experiment"], self._session)

    # -- logs ----------------------------------------------------------------------------
    def iter_logs(
        self,
        follow: bool = False,
        *,
        head: Optional[int] = None,
        tail: Optional[int] = None,
        container_ids: Optional[List[str]] = None,
        rank_ids: Optional[List[int]] = None,
        stdtypes: Optional[List[str]] = None,
        min_level: Optional[LogLevel] = None,
        timestamp_before: Optional[Union[str, int]] = None,
        timestamp_after: Optional[Union[str, int]] = None,
        sources: Optional[List[str]] = None,
        search_text: Optional[str] = None,
    ) -> Iterable[str]:
        """The trial's log lines (each ending in a newline). ``follow`` keeps yielding new
        lines until the trial ends; ``head``/``tail`` give the first/last N lines; the other
        arguments filter lines (timestamps: RFC 3339 strings or Unix seconds)."""
        if head is not None and head < 0:
            raise ValueError(f"head must be non-negative, got {head}")
        if tail is not None and tail < 0:
            raise ValueError(f"tail must be non-negative, got {tail}")
        if head is not None and tail is not None:
            raise ValueError("head and tail cannot both be set")
        before, after = _timestamp(timestamp_before, "timestamp_before"), _timestamp(
            timestamp_after, "timestamp_after")
        params: Dict[str, Any] = {"follow": bool(follow) and tail is None and head is None}
        if head is not None:
            params["limit"] = head
        if tail is not None:
            params.update(limit=tail, orderBy="ORDER_BY_DESC")
        if head == 0 or tail == 0:
            return
        timeout = 24 * 3600.0 if params["follow"] else None
        lines: Iterable[Dict[str, Any]] = _util.ndjson(
            self._session, _util.query(f"/api/v1/trials/{self.id}/logs", params), timeout)
        if tail is not None:
            lines = list(lines)[::-1]
        want_level = _LEVEL_RANK.get(min_level.value) if min_level is not None else None
        for log in lines:
            if container_ids and log.get("containerId") not in container_ids:
                continue
            if rank_ids and log.get("rankId") not in rank_ids:
                continue
            if stdtypes and log.get("stdtype") not in stdtypes:
                continue
            if sources and log.get("source") not in sources:
                continue
            if want_level is not None and _LEVEL_RANK.get(log.get("level"), 2) < want_level:
                continue
            ts = _parse_ts(log.get("timestamp"))
            if before is not None and ts is not None and ts >= before:
                continue
            if after is not None and ts is not None and ts <= after:
                continue
            message = log.get("message")
            if message is None:
                message = log.get("log") or ""
            if search_text and search_text not in message:
                continue
            yield message if message.endswith("\n") else message + "\n"

    def logs(self, *args: Any, **kwargs: Any) -> Iterable[str]:
        """Deprecated: use :meth:`iter_logs`."""
        warnings.warn("Trial.logs() is deprecated; use Trial.iter_logs() instead.",
                      FutureWarning, stacklevel=2)
        return self.iter_logs(*args, **kwargs)

    logs.__signature__ = inspect.signature(iter_logs)  # type: ignore[attr-defined]

    # -- metrics -------------------------------------------------------------------------
    def iter_metrics(self, group: str) -> Iterable[metrics.TrialMetrics]:
        """The trial's metric reports of ``group`` ("training", "validation" or custom), in
        step order; on a trial that has not ended it keeps yielding new reports until it
        ends."""
        return _iter_trials_metrics(self._session, [self.id], group)

    def stream_metrics(self, group: str) -> Iterable[metrics.TrialMetrics]:
        warnings.warn("Trial.stream_metrics() is deprecated; use Trial.iter_metrics() instead.",
                      FutureWarning, stacklevel=2)
        return self.iter_metrics(group)

    def stream_training_metrics(self) -> Iterable[metrics.TrainingMetrics]:
        warnings.warn("Trial.stream_training_metrics is deprecated; use "
                      "Trial.iter_metrics('training') instead.", FutureWarning, stacklevel=2)
        return _iter_trials_metrics(self._session, [self.id], util._LEGACY_TRAINING,
                                    metrics.TrainingMetrics)  # type: ignore[return-value]

    def stream_validation_metrics(self) -> Iterable[metrics.ValidationMetrics]:
        warnings.warn("Trial.stream_validation_metrics is deprecated; use "
                      "Trial.iter_metrics('validation') instead.", FutureWarning, stacklevel=2)
        return _iter_trials_metrics(self._session, [self.id], util._LEGACY_VALIDATION,
                                    metrics.ValidationMetrics)  # type: ignore[return-value]

    # -- checkpoints ---------------------------------------------------------------------
    def list_checkpoints(
        self,
        sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]] = None,
        order_by: Optional[OrderBy] = None,
        max_results: Optional[int] = None,
    ) -> List[checkpoint.Checkpoint]:
        """The trial's checkpoints, sorted by an attribute or a validation metric name (both
        or neither of ``sort_by`` and ``order_by``; neither: best searcher metric first)."""
        return _list_checkpoints(self._session, f"/api/v1/trials/{self.id}/checkpoints",
                                 sort_by, order_by, max_results, completed_only=False)

    def top_checkpoint(self, sort_by: Optional[str] = None,
                       smaller_is_better: Optional[bool] = None) -> checkpoint.Checkpoint:
        """Deprecated: the best checkpoint (by ``sort_by`` or the searcher metric)."""
        warnings.warn("Trial.top_checkpoint() is deprecated; use "
                      "Trial.list_checkpoints(..., max_results=1) instead.", FutureWarning,
                      stacklevel=2)
        order_by = None
        if sort_by:
            order_by = OrderBy.ASC if smaller_is_better else OrderBy.DESC
        found = self.list_checkpoints(sort_by=sort_by, order_by=order_by, max_results=1)
        if not found:
            raise ValueError("No checkpoints found for criteria.")
        return found[0]

    def select_checkpoint(self, latest: bool = False, best: bool = False,
                          uuid: Optional[str] = None, sort_by: Optional[str] = None,
                          smaller_is_better: Optional[bool] = None) -> checkpoint.Checkpoint:
        """Deprecated: exactly one of ``latest``, ``best`` (optionally with ``sort_by`` and
        ``smaller_is_better``) or ``uuid``."""
        warnings.warn("Trial.select_checkpoint() is deprecated; use Trial.list_checkpoints() "
                      "instead.", FutureWarning, stacklevel=2)
        if sum([int(latest), int(best), int(uuid is not None)]) != 1:
            raise AssertionError("Exactly one of latest, best, or uuid must be set")
        if (sort_by is None) != (smaller_is_better is None):
            raise AssertionError("sort_by and smaller_is_better must be set together")
        if sort_by is not None and not best:
            raise AssertionError("`sort_by` and `smaller_is_better` can only be used with `best`")
        if uuid:
            body = self._session.get(f"/api/v1/checkpoints/{uuid}")
            return checkpoint.Checkpoint._from_json(self._session, body["checkpoint"])
        sort: Any = sort_by
        order_by = None
        if latest:
            sort, order_by = checkpoint.CheckpointSortBy.BATCH_NUMBER, OrderBy.DESC
        elif sort_by:
            order_by = OrderBy.ASC if smaller_is_better else OrderBy.DESC
        found = self.list_checkpoints(sort_by=sort, order_by=order_by, max_results=1)
        if not found:
            raise ValueError("No checkpoints found for criteria.")
        return found[0]

    def get_checkpoints(self, sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]] = None,
                        order_by: Optional[OrderBy] = None) -> List[checkpoint.Checkpoint]:
        """Deprecated: use :meth:`list_checkpoints`."""
        warnings.warn("Trial.get_checkpoints() is deprecated; use Trial.list_checkpoints() "
                      "instead.", FutureWarning, stacklevel=2)
        if (sort_by is None) != (order_by is None):
            raise AssertionError("sort_by and order_by must be set together")
        return self.list_checkpoints(sort_by=sort_by, order_by=order_by)


class TrialReference(Trial):
    """Deprecated name of :class:`Trial`."""

    def __init__(self, trial_id: int, session: api.Session) -> None:
        warnings.warn("'TrialReference' was renamed to 'Trial'.", FutureWarning, stacklevel=2)
        Trial.__init__(self, trial_id=trial_id, session=session)


def _timestamp(v: Optional[Union[str, int]], name: str) -> Optional[datetime.datetime]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise ValueError(f"{name} must be a str or an int, got {type(v).__name__}")
    if isinstance(v, int):
        return datetime.datetime.fromtimestamp(v, tz=datetime.timezone.utc)
    if not util.is_protobuf_timestamp(v):
        raise ValueError(f"{name}: timestamp {v} has an invalid format")
    return _parse_ts(v)


def _parse_ts(v: Any) -> Optional[datetime.datetime]:
    if not isinstance(v, str) or not v:
        return None
    try:
        ts = v[:-1] + "+00:00" if v.endswith("Z") else v
        parsed = datetime.datetime.fromisoformat(_strip_fraction(ts))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


def _strip_fraction(ts: str) -> str:
    # fromisoformat on 3.10 and older accepts only 3 or 6 fraction digits: keep 6 at most.
    if "." not in ts:
        return ts
    head, rest = ts.split(".", 1)
    digits = "".join(c for c in rest if c.isdigit())
    zone = rest[len(digits):]
    return f"{head}.{(digits + '000000')[:6]}{zone}"


def _list_checkpoints(session: api.Session, path: str, sort_by: Any, order_by: Any,
                      max_results: Optional[int], completed_only: bool) -> List[Any]:
    if (sort_by is None) != (order_by is None):
        raise AssertionError("sort_by and order_by must be either both set, or neither.")
    if sort_by is not None and not isinstance(sort_by, (checkpoint.CheckpointSortBy, str)):
        raise ValueError("sort_by must be of type CheckpointSortBy or str")
    if not sort_by:
        sort_by = checkpoint.CheckpointSortBy.SEARCHER_METRIC
    params: Dict[str, Any] = {
        "sortByAttr": sort_by.value if isinstance(sort_by, checkpoint.CheckpointSortBy) else None,
        "sortByMetric": sort_by if isinstance(sort_by, str) else None,
        "orderBy": _util.order_value(order_by),
        "states": "STATE_COMPLETED" if completed_only else None,
    }
    found = _util.read_all(session, path, "checkpoints", params, limit=max_results)
    return [checkpoint.Checkpoint._from_json(session, c) for c in found]


def _trial_states(session: api.Session, trial_ids: List[int]) -> Dict[int, str]:
    return {t: session.get(f"/api/v1/trials/{t}")["trial"].get("state", "") for t in trial_ids}


def _iter_trials_metrics(session: api.Session, trial_ids: List[int], group: str,
                         cls: Any = metrics.TrialMetrics) -> Iterator[metrics.TrialMetrics]:
    """Every stored report of ``group`` of the trials, then (while any of them has not ended)
    new reports as they arrive. The master's stream answers what is stored when asked, so
    this asks again every METRICS_POLL_SECONDS and yields the reports it has not yet seen."""
    if not trial_ids:
        raise ValueError("trial_ids: must name at least one trial")
    ids = sorted({int(t) for t in trial_ids})
    path = _util.query("/api/v1/trials/metrics/trial_metrics", {"trialIds": ids, "group": group})
    seen: Set[Tuple[int, Any]] = set()
    ended: Set[int] = set()
    while True:
        # Read the states first: reports stored before a trial ended are then all in the read.
        # A trial that has ended stays ended, so only the others are asked about.
        states = _trial_states(session, [t for t in ids if t not in ended])
        ended |= {t for t, s in states.items() if s in _TERMINAL_VALUES}
        for chunk in _util.ndjson(session, path):
            for report in chunk.get("metrics") or []:
                key = (int(report.get("trialId", 0)),
                       report.get("id", (report.get("trialRunId"), report.get("totalBatches"))))
                if key in seen:
                    continue
                seen.add(key)
                yield cls._from_json(report, group)
        if len(ended) == len(ids):
            return
        time.sleep(METRICS_POLL_SECONDS)
