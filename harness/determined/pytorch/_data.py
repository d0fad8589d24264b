"""determined.pytorch.DataLoader: a torch DataLoader description that Determined instantiates
with a reproducible, resumable and sharded sampler."""

import logging
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Type, Union

import numpy as np
import torch
import torch.utils.data

from determined.pytorch import samplers

logger = logging.getLogger("determined.pytorch")

# A batch as user code sees it: a tensor, or a dict / sequence of them.
TorchData = Union[Dict[str, torch.Tensor], Sequence[torch.Tensor], torch.Tensor]


class _EpochBatches(torch.utils.data.Sampler):
    """Yields lists of dataset indices for one rank, epoch after epoch.

    Epoch ``e``'s order is a pure function of (seed, e): shuffles come from one numpy
    RandomState(seed) stream, so the same seed always gives the same batches. Training
    (``pad=True``) pads each epoch by wrapping around so every rank has the same number of
    batches; ``skip`` batches are skipped without loading data (resuming after a restart).
    """

    def __init__(self, loader: "DataLoader", seed: int, repeat: bool, skip: int, num_replicas: int,
                 rank: int, pad: bool) -> None:
        self._l = loader
        self._seed = seed
        self._repeat = repeat
        self._skip = skip
        self._num_replicas = num_replicas
        self._rank = rank
        self._pad = pad

    def _epoch_indices(self, rng: Optional[np.random.RandomState]) -> List[Any]:
        l = self._l
        if l.batch_sampler is not None:
            return [list(b) for b in l.batch_sampler]
        if l.sampler is not None:
            return list(l.sampler)
        n = len(l.dataset)
        if rng is not None:
            return rng.permutation(n).tolist()  # Python ints, without a per-item int() call
        return list(range(n))

    def _shard(self, items: List[Any]) -> List[Any]:
        if self._num_replicas == 1:
            return items
        if self._pad and items and len(items) % self._num_replicas:
            extra = self._num_replicas - len(items) % self._num_replicas
            items = items + (items * (extra // len(items) + 1))[:extra]
        return items[self._rank :: self._num_replicas]

    def _batches(self, items: List[Any]) -> List[List[Any]]:
        l = self._l
        if l.batch_sampler is not None:
            return self._shard(items)
        items = self._shard(items)
        bs = l.batch_size
        out = [items[i : i + bs] for i in range(0, len(items), bs)]
        if l.drop_last and out and len(out[-1]) < bs:
            out.pop()
        return out

    def batches_per_epoch(self) -> int:
        return len(self._batches(self._epoch_indices(None)))

    def __iter__(self) -> Iterator[List[Any]]:
        rng = np.random.RandomState(self._seed) if (self._l.shuffle and self._l.sampler is None
                                                    and self._l.batch_sampler is None) else None
        skip = self._skip
        while True:
            batches = self._batches(self._epoch_indices(rng))
            if not batches:
                return
            if skip >= len(batches):
                skip -= len(batches)
            else:
                for b in batches[skip:]:
                    yield b
                skip = 0
            if not self._repeat:
                return

    def __len__(self) -> int:
        return max(0, self.batches_per_epoch() - self._skip)


class DataLoader:
    """Holds a Dataset and the options of a torch DataLoader; Determined builds the real
    torch DataLoader in get_data_loader() so that shuffling is reproducible from the trial seed,
    training resumes at the exact batch after a restart, and data is sharded across ranks."""

    def __init__(
        self,
        dataset: torch.utils.data.Dataset,
        batch_size: Optional[int] = 1,
        shuffle: bool = False,
        sampler: Optional[torch.utils.data.Sampler] = None,
        batch_sampler: Optional[torch.utils.data.BatchSampler] = None,
        num_workers: int = 0,
        collate_fn: Optional[Callable[[List[Any]], Any]] = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Optional[Callable[[int], None]] = None,
        multiprocessing_context: Optional[Any] = None,
        generator: Optional[Any] = None,
        *,
        prefetch_factor: int = 2,
        persistent_workers: bool = False,
    ) -> None:
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            raise ValueError("batch_size=None (no automatic batching) is not supported by determined.pytorch.DataLoader")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if isinstance(dataset, torch.utils.data.IterableDataset):
            raise ValueError("determined.pytorch.DataLoader needs a map-style Dataset, not an IterableDataset")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory
        self.drop_last = drop_last
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers

    def __iter__(self) -> Iterator[Any]:
        """One pass over the data, as a torch DataLoader would (for using a trial's loaders
        outside Determined)."""
        return iter(self.get_data_loader())

    def __len__(self) -> int:
        """Batches per epoch for a single (unsharded) worker."""
        return _EpochBatches(self, 0, False, 0, 1, 0, False).batches_per_epoch()

    def _batch_sampler(self, seed: int = 0, repeat: bool = False, skip: int = 0, num_replicas: int = 1,
                       rank: int = 0, pad: bool = False) -> _EpochBatches:
        return _EpochBatches(self, seed, repeat, skip, num_replicas, rank, pad)

    def get_data_loader(self, repeat: bool = False, skip: int = 0, num_replicas: int = 1, rank: int = 0,
                        seed: int = 0, pad: Optional[bool] = None) -> torch.utils.data.DataLoader:
        """Build the torch DataLoader for one rank (``repeat`` for training)."""
        bs = self._batch_sampler(seed, repeat, skip, num_replicas, rank, repeat if pad is None else pad)
        gen = self.generator
        if gen is None:
            # A private generator, so creating iterators never consumes the global torch RNG
            # (which would make a resumed trial differ from an uninterrupted one).
            gen = torch.Generator()
            gen.manual_seed(seed + 7919 * rank)
        kwargs = {}
        if self.num_workers > 0:
            kwargs = {"prefetch_factor": self.prefetch_factor, "persistent_workers": self.persistent_workers}
        return torch.utils.data.DataLoader(
            self.dataset,
            batch_sampler=bs,
            num_workers=self.num_workers,
            collate_fn=self.collate_fn,
            pin_memory=self.pin_memory,
            timeout=self.timeout,
            worker_init_fn=self.worker_init_fn,
            multiprocessing_context=self.multiprocessing_context,
            generator=gen,
            **kwargs,
        )


def adapt_batch_sampler(
    batch_sampler: torch.utils.data.BatchSampler,
    repeat: bool = False,
    skip: int = 0,
    num_replicas: int = 1,
    rank: int = 0,
) -> torch.utils.data.BatchSampler:
    """Wrap a batch sampler for training under Determined: ``repeat`` it forever, shard its
    batches over ``num_replicas`` ranks (this one is ``rank``), then ``skip`` that many of the
    rank's batches (resuming). Sharding comes before skipping, so ``skip`` counts this rank's
    batches."""
    if repeat:
        batch_sampler = samplers.RepeatBatchSampler(batch_sampler)
    if num_replicas > 1:
        batch_sampler = samplers.DistributedBatchSampler(batch_sampler, num_replicas, rank)
    if skip > 0:
        batch_sampler = samplers.SkipBatchSampler(batch_sampler, skip)
    return batch_sampler


def data_length(data: Any) -> int:
    """Records in a batch: the length of a tensor or array, or of the first value of a dict or
    first element of a list/tuple (every leaf is assumed to have the same batch length)."""
    if isinstance(data, (np.ndarray, torch.Tensor)):
        return len(data)
    for kind, container in (("dict", dict), ("list", list), ("tuple", tuple)):
        if isinstance(data, container):
            if len(data) == 0:
                raise ValueError(f"data_length(): an empty {kind} has no np.ndarray or torch.Tensor to measure")
            first = next(iter(data.values())) if isinstance(data, dict) else data[0]
            return len(first)
    raise TypeError(f"data_length(): cannot measure data of type {type(data).__name__} "
                    "(expected np.ndarray, torch.Tensor, dict, list or tuple)")


def to_device(data: Any, device: Union[str, torch.device], warned_types: Optional[Set[Type]] = None) -> Any:
    """Move a batch to ``device``: tensors and anything with a callable ``to()`` are moved,
    numeric numpy arrays become tensors, dicts, lists and tuples (namedtuples keep their type)
    are converted element by element. Anything else is returned unchanged, with one warning per
    type. Called for every batch: tensors, the common leaf, are tested first."""
    if isinstance(data, torch.Tensor):
        return data.to(device)
    kind = type(data)
    if kind is tuple:  # exact types first: the default collate's batches
        return tuple([to_device(v, device, warned_types) for v in data])
    if kind is list:
        return [to_device(v, device, warned_types) for v in data]
    if isinstance(data, (list, tuple)):
        if isinstance(data, tuple) and hasattr(data, "_fields"):
            return kind(*(to_device(v, device, warned_types) for v in data))
        return kind(to_device(v, device, warned_types) for v in data)
    if isinstance(data, dict):
        return {k: to_device(v, device, warned_types) for k, v in data.items()}
    if isinstance(data, np.ndarray):
        # torch has tensors of floats, complex numbers, ints, uints and bools only.
        if data.dtype.kind in "fciub":
            return torch.from_numpy(data).to(device)
    elif callable(getattr(data, "to", None)):
        return data.to(device)
    if data is None or isinstance(data, (str, bytes, int, float, bool)):
        return data
    if warned_types is None:
        warned_types = set()
    if type(data) not in warned_types:
        warned_types.add(type(data))
        logger.warning("to_device(): cannot move an item of type %s to %s; leaving it as it is",
                       type(data).__name__, device)
    return data
