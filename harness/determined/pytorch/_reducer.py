"""Reducers for metrics: the built-in Reducer enum and the MetricReducer interface."""

import abc
import enum
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np


class Reducer(enum.Enum):
    """A Reducer defines a method for reducing (aggregating) evaluation metrics."""

    AVG = 1
    SUM = 2
    MAX = 3
    MIN = 4


class MetricReducer(metaclass=abc.ABCMeta):
    """Efficiently aggregate a custom metric across batches and slots (see the seed)."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Reset reducer state for another set of values."""

    @abc.abstractmethod
    def per_slot_reduce(self) -> Any:
        """Return a picklable per-slot value for cross_slot_reduce."""

    @abc.abstractmethod
    def cross_slot_reduce(self, per_slot_metrics: List) -> Any:
        """Reduce the per-slot values of every worker into the final metric(s)."""


class _SimpleReducer(MetricReducer):
    """Wraps a plain function ``fn(values) -> metric``: values come from ``update(value)``."""

    def __init__(self, fn: Callable[[List[Any]], Any]) -> None:
        self._fn = fn
        self.reset()

    def reset(self) -> None:
        self._values: List[Any] = []

    def update(self, value: Any) -> None:
        self._values.append(value)

    def per_slot_reduce(self) -> Any:
        return self._values

    def cross_slot_reduce(self, per_slot_metrics: List) -> Any:
        flat = [v for slot in per_slot_metrics for v in slot]
        return self._fn(flat)


class _WrappedReducer:
    def __init__(self, reducer: MetricReducer, name: Optional[str], for_training: bool, for_validation: bool):
        self.reducer = reducer
        self.name = name
        self.for_training = for_training
        self.for_validation = for_validation

    def finish(self, per_slot: List[Any]) -> Dict[str, Any]:
        out = self.reducer.cross_slot_reduce(per_slot)
        if self.name is None:
            assert isinstance(out, dict), (
                "a reducer registered with wrap_reducer() without a name must return a dict of "
                f"metric names to values from cross_slot_reduce(), not {type(out).__name__}"
            )
            return dict(out)
        assert not isinstance(out, dict), (
            f"the reducer named {self.name!r} returned a dict from cross_slot_reduce(); a named "
            "reducer must return a single metric value (omit name= to return a dict)"
        )
        return {self.name: out}


def _reduce(reducer: Reducer, values: List[Any], counts: Optional[List[int]] = None) -> Any:
    arr = np.asarray(values, dtype=np.float64)
    if reducer == Reducer.AVG:
        return float(np.mean(arr)) if len(arr) else float("nan")
    if reducer == Reducer.SUM:
        return float(np.sum(arr))
    if reducer == Reducer.MAX:
        return float(np.max(arr))
    if reducer == Reducer.MIN:
        return float(np.min(arr))
    raise ValueError(f"unknown reducer {reducer!r}")


def _reduce_metrics(
    per_slot_batch_metrics: List[List[Dict[str, Any]]],
    reducers: Union[Reducer, Dict[str, Reducer]],
) -> Dict[str, Any]:
    """Reduce per-batch metric dicts of every slot (in slot order) with the given reducer(s)."""
    keys: List[str] = []
    for slot in per_slot_batch_metrics:
        for m in slot:
            for k in m:
                if k not in keys:
                    keys.append(k)
    out: Dict[str, Any] = {}
    for k in keys:
        values = [m[k] for slot in per_slot_batch_metrics for m in slot if k in m]
        r = reducers.get(k, Reducer.AVG) if isinstance(reducers, dict) else reducers
        if not isinstance(r, Reducer):
            raise TypeError(f"evaluation_reducer() for {k!r} must be a pytorch.Reducer, not {r!r}")
        try:
            out[k] = _reduce(r, values)
        except (TypeError, ValueError):
            out[k] = values[-1] if values else None  # non-numeric: keep the last value
    return out
