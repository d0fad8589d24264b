"""Writes reported metrics as TensorBoard scalars, named as Determined names them:
"Determined/<name>" for training metrics (per batch when batch metrics are given, else the
averages at steps_completed) and "Determined/val_<name>" for validation metrics."""

import numbers
from typing import Any, Dict, List, Optional

from determined.tensorboard._event_writer import EventFileWriter


def _scalar(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, numbers.Number):
        try:
            return float(value)  # numpy scalars are Numbers
        except (TypeError, ValueError):
            return None
    try:  # 0-d tensors and arrays
        if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
            return float(value.item())
    except (TypeError, ValueError):
        pass
    return None


class BatchMetricWriter:
    def __init__(self, writer: EventFileWriter) -> None:
        self.writer = writer

    def _write(self, name: str, value: Any, step: int) -> bool:
        v = _scalar(value)
        if v is None:
            return False  # only numbers are scalars
        self.writer.add_scalar("Determined/" + name, v, step)
        return True

    def on_train_step_end(
        self,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        seen = set()
        for i, batch in enumerate(batch_metrics or []):
            step = steps_completed - len(batch_metrics or []) + i
            for name, value in batch.items():
                self._write(name, value, step)
                seen.add(name)
        for name, value in metrics.items():
            if name not in seen:
                self._write(name, value, steps_completed)
        self.writer.flush()

    def on_validation_step_end(self, steps_completed: int, metrics: Dict[str, Any]) -> None:
        for name, value in metrics.items():
            self._write(name if name.startswith("val") else "val_" + name, value, steps_completed)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
