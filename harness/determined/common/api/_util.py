"""Small helpers for clients of the master's REST API (names as in Determined)."""

import enum
import hashlib
import os
from typing import Any, Callable, Iterator, TypeVar

from determined._info import canonicalize_master_url

T = TypeVar("T")

# The salt Determined's clients add before hashing a password (see api/README.md, login).
_PASSWORD_SALT = "GubPEmmotfiK9TMD6Zdw"


class PageOpts(str, enum.Enum):
    """How many pages :func:`read_paginated` reads."""

    single = "1"
    all = "all"


def get_default_master_url() -> str:
    """The master address from ``DET_MASTER`` (or ``DET_MASTER_ADDR``), else localhost:8080.

    Not canonicalized; pass the result through :func:`canonicalize_master_url`.
    """
    return os.environ.get("DET_MASTER") or os.environ.get("DET_MASTER_ADDR") or "localhost:8080"


def salt_and_hash(password: str) -> str:
    """The hashed form of a password that login requests send with ``isHashed: true``."""
    if not password:
        return password
    return hashlib.sha512((_PASSWORD_SALT + password).encode()).hexdigest()


def _pagination_of(page: Any) -> Any:
    if isinstance(page, dict):
        return page.get("pagination")
    return getattr(page, "pagination", None)


def _field(pagination: Any, name: str) -> Any:
    if isinstance(pagination, dict):
        return pagination.get(name)
    return getattr(pagination, name, None)


def read_paginated(
    get_with_offset: Callable[[int], T], offset: int = 0, pages: PageOpts = PageOpts.all
) -> Iterator[T]:
    """Yield the pages ``get_with_offset(offset)`` returns until the last one.

    A page is a response dict (or object) with ``pagination: {endIndex, total}``.
    """
    while True:
        page = get_with_offset(offset)
        pagination = _pagination_of(page)
        if pagination is None:
            raise ValueError(f"a paginated response has no 'pagination' field: {page!r}")
        end, total = _field(pagination, "endIndex"), _field(pagination, "total")
        if end is None or total is None:
            raise ValueError(f"pagination needs endIndex and total, got {pagination!r}")
        yield page
        if int(end) >= int(total) or pages == PageOpts.single or int(end) <= offset:
            return
        offset = int(end)


__all__ = [
    "PageOpts",
    "canonicalize_master_url",
    "get_default_master_url",
    "read_paginated",
    "salt_and_hash",
]
