"""Samplers that make data loading reproducible, resumable and sharded.

They are building blocks to chain around a torch Sampler or BatchSampler (for a DataLoader built
by hand after ``context.experimental.disable_dataset_reproducibility_checks()``), in this order:
shuffle, then shard, then skip, with repeat before skip for training (see
``pytorch.adapt_batch_sampler``).
"""

from typing import Any, Iterator, List

import numpy as np
import torch.utils.data


class RepeatSampler(torch.utils.data.Sampler):
    """Yields the items of ``sampler`` over and over; ``len()`` is one pass."""

    def __init__(self, sampler: Any) -> None:
        self._sampler = sampler

    def __iter__(self) -> Iterator[Any]:
        while True:
            yielded = False
            for x in self._sampler:
                yielded = True
                yield x
            if not yielded:  # an empty sampler would otherwise loop forever
                return

    def __len__(self) -> int:
        return len(self._sampler)


class RepeatBatchSampler(torch.utils.data.BatchSampler):
    """Yields the batches of ``batch_sampler`` over and over; ``len()`` is one pass."""

    def __init__(self, batch_sampler: Any) -> None:
        self.batch_sampler = batch_sampler
        self._repeat = RepeatSampler(batch_sampler)

    def __iter__(self) -> Iterator[List[int]]:
        return iter(self._repeat)

    def __len__(self) -> int:
        return len(self.batch_sampler)


def _shard_len(n: int, num_workers: int, rank: int) -> int:
    return n // num_workers + (1 if rank < n % num_workers else 0)


def _check_shard(num_workers: int, rank: int) -> None:
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, not {num_workers}")
    if not 0 <= rank < num_workers:
        raise ValueError(f"rank must be in [0, num_workers={num_workers}), not {rank}")


class DistributedSampler(torch.utils.data.Sampler):
    """Rank ``rank`` of ``num_workers`` gets items rank, rank+num_workers, ... of ``sampler``
    (no padding, no shuffling: unlike torch's DistributedSampler it wraps another sampler)."""

    def __init__(self, sampler: Any, num_workers: int, rank: int) -> None:
        _check_shard(num_workers, rank)
        self._sampler = sampler
        self._num_workers = num_workers
        self._rank = rank

    def __iter__(self) -> Iterator[Any]:
        if self._num_workers == 1:
            yield from self._sampler
            return
        for i, x in enumerate(self._sampler):
            if i % self._num_workers == self._rank:
                yield x

    def __len__(self) -> int:
        return _shard_len(len(self._sampler), self._num_workers, self._rank)


class DistributedBatchSampler(torch.utils.data.BatchSampler):
    """Rank ``rank`` gets batches rank, rank+num_workers, ... of ``batch_sampler``. Wrapping a
    sampler that does not repeat, ranks may get different numbers of batches."""

    def __init__(self, batch_sampler: Any, num_workers: int, rank: int) -> None:
        _check_shard(num_workers, rank)
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.rank = rank
        self._inner = DistributedSampler(batch_sampler, num_workers, rank)

    def __iter__(self) -> Iterator[List[int]]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)


class SkipSampler(torch.utils.data.BatchSampler):
    """Skips the first ``skip`` items of ``sampler`` (skip before repeating, or every pass
    skips). ``len()`` stays the underlying length: skipping happens once, on resume."""

    def __init__(self, sampler: Any, skip: int) -> None:
        if skip < 0:
            raise ValueError(f"skip must not be negative, not {skip}")
        self._sampler = sampler
        self._skip = skip

    def __iter__(self) -> Iterator[Any]:
        it = iter(self._sampler)
        for _ in range(self._skip):
            if next(it, _END) is _END:
                return
        yield from it

    def __len__(self) -> int:
        return len(self._sampler)


class SkipBatchSampler(torch.utils.data.BatchSampler):
    """Skips the first ``skip`` batches of ``batch_sampler`` (resuming mid-epoch). ``len()``
    stays the underlying length, as for SkipSampler."""

    def __init__(self, batch_sampler: Any, skip: int) -> None:
        self.batch_sampler = batch_sampler
        self.skip = skip
        self._inner = SkipSampler(batch_sampler, skip)

    def __iter__(self) -> Iterator[List[int]]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self.batch_sampler)


_END = object()


class ReproducibleShuffleSampler(torch.utils.data.Sampler):
    """Shuffles the items of ``sampler`` with numpy's RandomState(seed); each pass continues the
    same random stream, so pass k's order depends only on (seed, k). Shuffle before skipping
    and before repeating."""

    def __init__(self, sampler: Any, seed: int) -> None:
        self._sampler = sampler
        self._rng = np.random.RandomState(seed)

    def __iter__(self) -> Iterator[Any]:
        items = list(self._sampler)
        self._rng.shuffle(items)
        return iter(items)

    def __len__(self) -> int:
        return len(self._sampler)


class ReproducibleShuffleBatchSampler(torch.utils.data.Sampler):
    """Shuffles the order of whole batches of ``batch_sampler`` like ReproducibleShuffleSampler
    (batch contents stay the same; prefer shuffling records where possible)."""

    def __init__(self, batch_sampler: Any, seed: int) -> None:
        self._inner = ReproducibleShuffleSampler(batch_sampler, seed)
        self._batch_sampler = batch_sampler

    def __iter__(self) -> Iterator[List[int]]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._batch_sampler)
