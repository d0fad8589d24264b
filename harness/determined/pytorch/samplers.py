"""Samplers that make data loading reproducible, resumable and sharded."""

from typing import Any, Iterator, List, Sized

import numpy as np
import torch.utils.data


class ReproducibleShuffleSampler(torch.utils.data.Sampler):
    """Shuffles with numpy's RandomState(seed); each new iteration continues the same stream."""

    def __init__(self, data_source: Sized, seed: int) -> None:
        self._n = len(data_source)
        self._rng = np.random.RandomState(seed)

    def __iter__(self) -> Iterator[int]:
        return iter(int(i) for i in self._rng.permutation(self._n))

    def __len__(self) -> int:
        return self._n


class DistributedSampler(torch.utils.data.Sampler):
    """Rank ``rank`` of ``num_workers`` gets items rank, rank+num_workers, ... (no padding)."""

    def __init__(self, sampler: Any, num_workers: int, rank: int) -> None:
        self._sampler = sampler
        self._num_workers = num_workers
        self._rank = rank

    def __iter__(self) -> Iterator[Any]:
        for i, x in enumerate(self._sampler):
            if i % self._num_workers == self._rank:
                yield x

    def __len__(self) -> int:
        n = len(self._sampler)
        return n // self._num_workers + (1 if self._rank < n % self._num_workers else 0)


class SkipBatchSampler(torch.utils.data.BatchSampler):
    """Skips the first ``skip`` batches of a batch sampler."""

    def __init__(self, batch_sampler: Any, skip: int) -> None:
        self._batch_sampler = batch_sampler
        self._skip = skip

    def __iter__(self) -> Iterator[List[int]]:
        it = iter(self._batch_sampler)
        for _ in range(self._skip):
            next(it, None)
        return it

    def __len__(self) -> int:
        return max(0, len(self._batch_sampler) - self._skip)


class RepeatBatchSampler(torch.utils.data.BatchSampler):
    """Repeats a batch sampler forever (one pass per epoch)."""

    def __init__(self, batch_sampler: Any) -> None:
        self._batch_sampler = batch_sampler

    def __iter__(self) -> Iterator[List[int]]:
        while True:
            yielded = False
            for b in self._batch_sampler:
                yielded = True
                yield b
            if not yielded:
                return

    def __len__(self) -> int:
        return len(self._batch_sampler)


class DistributedBatchSampler(torch.utils.data.BatchSampler):
    """Rank ``rank`` gets batches rank, rank+num_workers, ... of a batch sampler."""

    def __init__(self, batch_sampler: Any, num_workers: int, rank: int) -> None:
        self._inner = DistributedSampler(batch_sampler, num_workers, rank)

    def __iter__(self) -> Iterator[List[int]]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)
