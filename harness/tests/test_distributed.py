import pytest

from determined import core


def test_single_worker_collectives():
    d = core.DistributedContext(rank=0, size=1, local_rank=0, local_size=1, cross_rank=0, cross_size=1)
    assert d.get_rank() == 0 and d.get_size() == 1 and d.get_local_rank() == 0 and d.get_num_agents() == 1
    assert d.gather("x") == ["x"]
    assert d.gather_local("x") == ["x"]
    assert d.allgather(1) == [1]
    assert d.allgather_local(1) == [1]
    assert d.broadcast({"a": 1}) == {"a": 1}
    assert d.broadcast_local(2) == 2


def test_from_torch_distributed(monkeypatch):
    for k, v in {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
                 "CROSS_RANK": "1", "CROSS_SIZE": "2", "DET_CHIEF_IP": "10.0.0.1"}.items():
        monkeypatch.setenv(k, v)
    d = core.DistributedContext.from_torch_distributed()
    assert (d.rank, d.size, d.local_rank, d.local_size, d.cross_rank, d.cross_size) == (3, 4, 1, 2, 1, 2)
    assert d._chief_ip == "10.0.0.1"  # collectives connect lazily (tested in test_multiprocess.py)


def test_from_torch_distributed_minimal_env(monkeypatch):
    for k in ("LOCAL_WORLD_SIZE", "CROSS_RANK", "CROSS_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("LOCAL_RANK", "1")
    d = core.DistributedContext.from_torch_distributed()
    assert (d.rank, d.size, d.local_size, d.cross_size) == (1, 2, 2, 1)


def test_cross_size_needs_chief_ip():
    with pytest.raises(ValueError, match="chief_ip"):
        core.DistributedContext(rank=0, size=2, local_rank=0, local_size=1, cross_rank=0, cross_size=2)


def test_inconsistent_ranks():
    with pytest.raises(ValueError):
        core.DistributedContext(rank=2, size=2, local_rank=0, local_size=1, cross_rank=0, cross_size=1)
