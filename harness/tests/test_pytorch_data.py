import pytest

torch = pytest.importorskip("torch")

from determined import pytorch  # noqa: E402
from determined.pytorch import samplers  # noqa: E402


def test_distributed_sampler_19_items_4_ranks():
    got = [list(samplers.DistributedSampler(range(19), 4, r)) for r in range(4)]
    assert got[0] == [0, 4, 8, 12, 16] and got[1] == [1, 5, 9, 13, 17] and got[3] == [3, 7, 11, 15]
    assert [len(samplers.DistributedSampler(range(19), 4, r)) for r in range(4)] == [5, 5, 5, 4]


def test_reproducible_shuffle_sampler_777():
    s = samplers.ReproducibleShuffleSampler(range(5), 777)
    assert list(s) == [0, 4, 1, 2, 3]
    assert list(s) == [2, 0, 1, 3, 4]


def test_skip_and_repeat_batch_samplers():
    bs = torch.utils.data.BatchSampler(range(5), batch_size=2, drop_last=False)
    assert list(samplers.SkipBatchSampler(bs, 1)) == [[2, 3], [4]]
    it = iter(samplers.RepeatBatchSampler(bs))
    assert [next(it) for _ in range(4)] == [[0, 1], [2, 3], [4], [0, 1]]


def _batches(dl, n, **kw):
    it = iter(dl.get_data_loader(**kw))
    return [next(it).tolist() for _ in range(n)]


def test_dataloader_resume_shard_and_shuffle():
    dl = pytorch.DataLoader(list(range(10)), batch_size=3, shuffle=True)
    full = _batches(dl, 9, repeat=True, seed=3)
    assert _batches(dl, 4, repeat=True, seed=3, skip=5) == full[5:9]  # resume at the exact batch
    assert _batches(dl, 9, repeat=True, seed=3) == full  # reproducible
    assert _batches(dl, 9, repeat=True, seed=4) != full
    assert sorted(sum(full[:4], [])) == list(range(10))  # one epoch = 4 batches, every item once
    r0 = _batches(dl, 2, repeat=True, seed=3, num_replicas=2, rank=0)
    r1 = _batches(dl, 2, repeat=True, seed=3, num_replicas=2, rank=1)
    assert sorted(sum(r0 + r1, [])) == list(range(10))
    val = pytorch.DataLoader(list(range(7)), batch_size=2)
    shards = [[x for b in val.get_data_loader(num_replicas=3, rank=r) for x in b.tolist()] for r in range(3)]
    assert sorted(sum(shards, [])) == list(range(7))  # validation: no padding, no duplicates
    assert len(dl) == 4
