"""DistributedContext: ranks and sizes of the workers of one trial, plus simple collectives.

Collectives between worker processes (and hosts) go over standard-library TCP sockets with
pickle (see _transport.py): the chief listens on ``chief_ip`` (DET_CHIEF_IP / MASTER_ADDR) at
``pub_port + port_offset`` (from_torch_distributed reads INTER_TRAIN_PROCESS_COMM_PORT_1).
"""

import logging
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

from determined.core._transport import Transport

logger = logging.getLogger("determined.core")



def _env_int(*names: str, default: Optional[int] = None) -> int:
    for name in names:
        raw = os.environ.get(name)
        if raw not in (None, ""):
            try:
                return int(raw)  # type: ignore[arg-type]
            except ValueError:
                raise ValueError(f"environment variable {name} is not an integer: {raw!r}") from None
    if default is None:
        raise ValueError(f"environment variable {names[0]} is not set")
    return default


class DistributedContext:
    """Provides rank information and simple coordination between the workers of a trial."""

    def __init__(
        self,
        *,
        rank: int,
        size: int,
        local_rank: int,
        local_size: int,
        cross_rank: int,
        cross_size: int,
        chief_ip: Optional[str] = None,
        pub_port: int = 12360,
        pull_port: int = 12376,
        port_offset: int = 0,
        force_tcp: bool = False,
    ) -> None:
        self.rank = rank
        self.size = size
        self.local_rank = local_rank
        self.local_size = local_size
        self.cross_rank = cross_rank
        self.cross_size = cross_size
        self._chief_ip = chief_ip
        self._pub_port = pub_port + port_offset
        self._pull_port = pull_port + port_offset
        self._force_tcp = force_tcp
        self._transport: Optional[Transport] = None
        for name in ("rank", "local_rank", "cross_rank"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if not (0 <= rank < size and 0 <= local_rank < local_size and 0 <= cross_rank < cross_size):
            raise ValueError(
                f"inconsistent DistributedContext: rank={rank} size={size} local_rank={local_rank} "
                f"local_size={local_size} cross_rank={cross_rank} cross_size={cross_size}"
            )
        if cross_size > 1 and not chief_ip:
            raise ValueError(
                "chief_ip is required when cross_size > 1 (pass chief_ip or set DET_CHIEF_IP)"
            )

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def from_torch_distributed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """Read RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE and CROSS_RANK/CROSS_SIZE
        (or torchrun's GROUP_RANK/GROUP_WORLD_SIZE) from the environment."""
        size = _env_int("WORLD_SIZE")
        local_size = _env_int("LOCAL_WORLD_SIZE", default=size)
        return cls(
            rank=_env_int("RANK"),
            size=size,
            local_rank=_env_int("LOCAL_RANK", default=0),
            local_size=local_size,
            cross_rank=_env_int("CROSS_RANK", "GROUP_RANK", default=0),
            cross_size=_env_int("CROSS_SIZE", "GROUP_WORLD_SIZE", default=max(1, size // max(1, local_size))),
            chief_ip=chief_ip or os.environ.get("DET_CHIEF_IP") or os.environ.get("MASTER_ADDR"),
            pub_port=_env_int("INTER_TRAIN_PROCESS_COMM_PORT_1", default=12360),
        )

    @classmethod
    def from_deepspeed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """Read the standard deepspeed environment variables (same names as torch's)."""
        return cls.from_torch_distributed(chief_ip=chief_ip)

    @classmethod
    def from_horovod(cls, hvd: Any, chief_ip: Optional[str] = None) -> "DistributedContext":
        """Use an initialized ``horovod`` module to learn rank information."""
        return cls(
            rank=hvd.rank(),
            size=hvd.size(),
            local_rank=hvd.local_rank(),
            local_size=hvd.local_size(),
            cross_rank=hvd.cross_rank(),
            cross_size=hvd.cross_size(),
            chief_ip=chief_ip or os.environ.get("DET_CHIEF_IP"),
            pub_port=_env_int("INTER_TRAIN_PROCESS_COMM_PORT_1", default=12360),
        )

    # -- accessors ------------------------------------------------------------------------
    def get_rank(self) -> int:
        return self.rank

    def get_local_rank(self) -> int:
        return self.local_rank

    def get_size(self) -> int:
        return self.size

    def get_num_agents(self) -> int:
        return self.cross_size

    def get_local_size(self) -> int:
        return self.local_size

    def get_cross_rank(self) -> int:
        return self.cross_rank

    def get_cross_size(self) -> int:
        return self.cross_size

    # -- collectives ----------------------------------------------------------------------
    def _get_transport(self) -> Transport:
        if self._transport is None:
            chief = self._chief_ip or "127.0.0.1"
            bind = "0.0.0.0" if self.cross_size > 1 else chief
            self._transport = Transport(self.rank, self.size, chief, self._pub_port, bind)
        return self._transport

    def _exchange(self, op: str, stuff: Any, reply: Callable[[List[Tuple[int, int, Any]]], List[Any]]) -> Any:
        """Every rank sends (op, cross_rank, local_rank, stuff) to the chief; the chief computes
        one reply per rank with ``reply`` and sends it back."""
        t = self._get_transport()
        mine = (op, self.cross_rank, self.local_rank, stuff)
        if self.rank == 0:
            got = t.chief_gather(mine)
            for r, g in enumerate(got):
                if g[0] != op:
                    raise RuntimeError(f"collective mismatch: the chief called {op}() but rank {r} called {g[0]}()")
            return t.chief_send(reply([(g[1], g[2], g[3]) for g in got]))
        t.worker_send(mine)
        return t.worker_recv()

    @staticmethod
    def _groups(items: List[Tuple[int, int, Any]]) -> Dict[int, List[Any]]:
        groups: Dict[int, List[Tuple[int, Any]]] = {}
        for cross_rank, local_rank, stuff in items:
            groups.setdefault(cross_rank, []).append((local_rank, stuff))
        return {k: [s for _, s in sorted(v, key=lambda x: x[0])] for k, v in groups.items()}

    def gather(self, stuff: Any) -> Optional[List]:
        """Gather ``stuff`` to the chief: the chief gets a list in rank order, workers None."""
        if self.size == 1:
            return [stuff]
        return self._exchange("gather", stuff, lambda items: [[s for _, _, s in items]] + [None] * (len(items) - 1))

    def allgather(self, stuff: Any) -> List:
        """Every worker gets the list of everybody's ``stuff`` in rank order."""
        if self.size == 1:
            return [stuff]
        return self._exchange("allgather", stuff, lambda items: [[s for _, _, s in items]] * len(items))

    def broadcast(self, stuff: Any) -> Any:
        """Every worker gets the chief's ``stuff``."""
        if self.size == 1:
            return stuff
        return self._exchange("broadcast", stuff, lambda items: [items[0][2]] * len(items))

    def gather_local(self, stuff: Any) -> Optional[List]:
        """Gather ``stuff`` to the local chief (local_rank 0) of each machine."""
        if self.size == 1:
            return [stuff]

        def reply(items: List[Tuple[int, int, Any]]) -> List[Any]:
            groups = self._groups(items)
            return [groups[c] if lr == 0 else None for c, lr, _ in items]

        return self._exchange("gather_local", stuff, reply)

    def allgather_local(self, stuff: Any) -> List:
        """Every worker gets the list of the ``stuff`` of the workers on its machine."""
        if self.size == 1:
            return [stuff]

        def reply(items: List[Tuple[int, int, Any]]) -> List[Any]:
            groups = self._groups(items)
            return [groups[c] for c, _, _ in items]

        return self._exchange("allgather_local", stuff, reply)

    def broadcast_local(self, stuff: Optional[Any] = None) -> Any:
        """Every worker gets the ``stuff`` of its machine's local chief."""
        if self.size == 1:
            return stuff

        def reply(items: List[Tuple[int, int, Any]]) -> List[Any]:
            groups = self._groups(items)
            return [groups[c][0] for c, _, _ in items]

        return self._exchange("broadcast_local", stuff, reply)

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def __repr__(self) -> str:
        return (
            f"DistributedContext(rank={self.rank}, size={self.size}, local_rank={self.local_rank}, "
            f"local_size={self.local_size}, cross_rank={self.cross_rank}, cross_size={self.cross_size})"
        )


class DummyDistributedContext(DistributedContext):
    """The DistributedContext of a single worker."""

    def __init__(self) -> None:
        super().__init__(rank=0, size=1, local_rank=0, local_size=1, cross_rank=0, cross_size=1)
