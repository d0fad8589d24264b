"""A small TensorBoard event file writer that needs no tensorflow/tensorboard package.

An event file is a sequence of records: uint64 length, masked CRC-32C of the length, the data,
masked CRC-32C of the data (little-endian). Each record's data is a serialized ``Event``
protobuf. The few fields written are encoded here directly in the protobuf wire format:

    Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
    Summary { repeated Value value = 1; }
    Value   { string tag = 1; float simple_value = 2; }

The first record of a file carries ``file_version: "brain.Event:2"``, as TensorBoard expects.
"""

import itertools
import os
import pathlib
import socket
import struct
import threading
import time
from typing import Optional, Union

from determined.tensorboard._crc32c import masked_crc32c

_file_counter = itertools.count()


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int64: two's complement, ten bytes
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint((field << 3) | wire_type)


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def encode_event(
    wall_time: float,
    step: Optional[int] = None,
    file_version: Optional[str] = None,
    scalars: Optional[dict] = None,
) -> bytes:
    """Serializes one Event; ``scalars`` ({tag: value}) become its Summary's simple values."""
    out = _key(1, 1) + struct.pack("<d", wall_time)
    if step:
        out += _key(2, 0) + _varint(int(step))
    if file_version is not None:
        out += _length_delimited(3, file_version.encode())
    if scalars:
        summary = b""
        for tag, value in scalars.items():
            v = _length_delimited(1, tag.encode()) + _key(2, 5) + struct.pack("<f", float(value))
            summary += _length_delimited(1, v)
        out += _length_delimited(5, summary)
    return out


def frame_record(data: bytes) -> bytes:
    """One TFRecord: length, masked CRC of length, data, masked CRC of data."""
    length = struct.pack("<Q", len(data))
    return (
        length
        + struct.pack("<I", masked_crc32c(length))
        + data
        + struct.pack("<I", masked_crc32c(data))
    )


class EventFileWriter:
    """Writes scalars into a new event file in ``logdir`` (created if needed); thread-safe."""

    def __init__(self, logdir: Union[str, pathlib.Path], filename_suffix: str = "") -> None:
        self.logdir = pathlib.Path(logdir)
        self.logdir.mkdir(parents=True, exist_ok=True)
        name = "events.out.tfevents.%010d.%s.%d.%d%s" % (
            time.time(),
            socket.gethostname(),
            os.getpid(),
            next(_file_counter),
            filename_suffix,
        )
        self.path = self.logdir / name
        self._lock = threading.Lock()
        self._file = open(self.path, "ab")
        self._file.write(frame_record(encode_event(time.time(), file_version="brain.Event:2")))
        self._file.flush()

    def add_scalar(
        self, tag: str, value: float, step: int, wall_time: Optional[float] = None
    ) -> None:
        self.add_scalars({tag: value}, step, wall_time)

    def add_scalars(self, scalars: dict, step: int, wall_time: Optional[float] = None) -> None:
        """Writes one event holding every (tag, value) of ``scalars`` at ``step``."""
        record = frame_record(
            encode_event(time.time() if wall_time is None else wall_time, step, scalars=scalars)
        )
        with self._lock:
            self._file.write(record)

    def flush(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()


class SummaryWriter:
    """The scalar part of ``torch.utils.tensorboard.SummaryWriter`` (add_scalar, flush,
    close), for when the tensorboard package is not installed."""

    def __init__(self, log_dir: Union[str, pathlib.Path], filename_suffix: str = "") -> None:
        self.log_dir = str(log_dir)
        self._writer = EventFileWriter(log_dir, filename_suffix)

    def add_scalar(
        self,
        tag: str,
        scalar_value: float,
        global_step: Optional[int] = None,
        walltime: Optional[float] = None,
    ) -> None:
        if hasattr(scalar_value, "item"):
            scalar_value = scalar_value.item()  # tensors and numpy scalars
        self._writer.add_scalar(tag, float(scalar_value), global_step or 0, walltime)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
