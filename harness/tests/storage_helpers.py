"""Shared pieces of the storage tests: an s3rver-backed fixture and a fake distributed group."""

import os
import threading
import uuid
from typing import Any, Callable, List, Optional

import pytest

import s3rver_server
from determined.core._distributed import DistributedContext


@pytest.fixture(scope="session")
def s3rver():
    reason = s3rver_server.missing_reason()
    if reason:
        pytest.skip(f"S3 tests need a local s3rver: {reason}")
    server = s3rver_server.S3rver().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_config(s3rver):
    """A fresh bucket (and prefix) on the local s3rver, as a checkpoint_storage config."""
    bucket = s3rver.create_bucket("det-" + uuid.uuid4().hex[:12])
    return s3rver.storage_config(bucket, prefix="exp/ckpts")


def make_tree(root, files) -> None:
    """files: {relative path: bytes or str}; a path ending with '/' is an empty directory."""
    for rel, content in files.items():
        p = os.path.join(os.fspath(root), rel)
        if rel.endswith("/"):
            os.makedirs(p, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)


class _Group:
    """Threads exchanging objects in lock step, like one collective call."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.barrier = threading.Barrier(n, timeout=15)
        self.slots: List[Any] = [None] * n

    def exchange(self, idx: int, obj: Any) -> List[Any]:
        self.barrier.wait()
        self.slots[idx] = obj
        self.barrier.wait()
        out = list(self.slots)
        self.barrier.wait()
        return out


class FakeDistributedContext(DistributedContext):
    """A DistributedContext whose collectives run between threads of this process."""

    def __init__(self, rank: int, size: int, local_size: int, world: _Group, local: _Group) -> None:
        cross_size = size // local_size
        super().__init__(
            rank=rank,
            size=size,
            local_rank=rank % local_size,
            local_size=local_size,
            cross_rank=rank // local_size,
            cross_size=cross_size,
            chief_ip="127.0.0.1" if cross_size > 1 else None,
        )
        self._world = world
        self._local = local
        self.calls: List[str] = []

    def allgather(self, stuff: Any) -> List:
        self.calls.append("allgather")
        return self._world.exchange(self.rank, stuff)

    def gather(self, stuff: Any) -> Optional[List]:
        out = self._world.exchange(self.rank, stuff)
        return out if self.rank == 0 else None

    def broadcast(self, stuff: Any) -> Any:
        self.calls.append("broadcast")
        return self._world.exchange(self.rank, stuff)[0]

    def allgather_local(self, stuff: Any) -> List:
        self.calls.append("allgather_local")
        return self._local.exchange(self.local_rank, stuff)

    def gather_local(self, stuff: Any) -> Optional[List]:
        out = self._local.exchange(self.local_rank, stuff)
        return out if self.local_rank == 0 else None

    def broadcast_local(self, stuff: Optional[Any] = None) -> Any:
        self.calls.append("broadcast_local")
        return self._local.exchange(self.local_rank, stuff)[0]


def fake_group(size: int, local_size: int) -> List[FakeDistributedContext]:
    world = _Group(size)
    locals_ = [_Group(local_size) for _ in range(size // local_size)]
    return [FakeDistributedContext(r, size, local_size, world, locals_[r // local_size]) for r in range(size)]


def run_ranks(dists: List[FakeDistributedContext], fn: Callable[[FakeDistributedContext], Any]) -> List[Any]:
    """Run fn on every rank in its own thread; returns results, or exceptions, per rank."""
    results: List[Any] = [None] * len(dists)

    def body(d: FakeDistributedContext) -> None:
        try:
            results[d.rank] = fn(d)
        except BaseException as e:  # handed back to the test
            results[d.rank] = e  # (a rank left waiting fails on the barrier's timeout)

    threads = [threading.Thread(target=body, args=(d,), daemon=True) for d in dists]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a rank hung"
    return results
