"""DistributedContext: ranks and sizes of the workers of one trial, plus simple collectives.

Collectives work for a single worker (and for one worker per machine, for the *_local ones).
Moving objects between several worker processes is not implemented yet; it raises a clear
NotImplementedError instead of hanging.
"""

import logging
import os
from typing import Any, List, Optional

logger = logging.getLogger("determined.core")

_NOT_YET = (
    "DistributedContext.{op}() across {n} worker processes is not implemented yet "
    "(the multi-process transport for determined.core is a later issue); only single-worker "
    "collectives work today"
)


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
            chief_ip=chief_ip or os.environ.get("DET_CHIEF_IP"),
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
    def _single(self, op: str, n: int) -> None:
        if n > 1:
            raise NotImplementedError(_NOT_YET.format(op=op, n=n))

    def gather(self, stuff: Any) -> Optional[List]:
        self._single("gather", self.size)
        return [stuff]

    def gather_local(self, stuff: Any) -> Optional[List]:
        self._single("gather_local", self.local_size)
        return [stuff]

    def allgather(self, stuff: Any) -> List:
        self._single("allgather", self.size)
        return [stuff]

    def allgather_local(self, stuff: Any) -> List:
        self._single("allgather_local", self.local_size)
        return [stuff]

    def broadcast(self, stuff: Any) -> Any:
        self._single("broadcast", self.size)
        return stuff

    def broadcast_local(self, stuff: Optional[Any] = None) -> Any:
        self._single("broadcast_local", self.local_size)
        return stuff

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return (
            f"DistributedContext(rank={self.rank}, size={self.size}, local_rank={self.local_rank}, "
            f"local_size={self.local_size}, cross_rank={self.cross_rank}, cross_size={self.cross_size})"
        )


class DummyDistributedContext(DistributedContext):
    """The DistributedContext of a single worker."""

    def __init__(self) -> None:
        super().__init__(rank=0, size=1, local_rank=0, local_size=1, cross_rank=0, cross_size=1)
