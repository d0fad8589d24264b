"""TensorBoard support without the tensorboard package: an event file writer, the metric
writer that mirrors reported metrics into it, and the manager that copies a trial's
TensorBoard directory to checkpoint storage."""

from determined.tensorboard._crc32c import crc32c, masked_crc32c
from determined.tensorboard._event_writer import (
    EventFileWriter,
    SummaryWriter,
    encode_event,
    frame_record,
)
from determined.tensorboard._manager import TensorboardManager, sync_path
from determined.tensorboard._metric_writer import BatchMetricWriter

__all__ = [
    "BatchMetricWriter",
    "EventFileWriter",
    "SummaryWriter",
    "TensorboardManager",
    "crc32c",
    "encode_event",
    "frame_record",
    "masked_crc32c",
    "sync_path",
]
