"""HTTP access to the master's ``/api/v1`` (standard library only)."""

from determined.common.api.errors import (
    APIException,
    MasterUnavailableError,
    NotFoundError,
    UnauthenticatedError,
)
from determined.common.api._session import Session, default_retry_seconds, json_compatible

__all__ = [
    "APIException",
    "MasterUnavailableError",
    "NotFoundError",
    "Session",
    "UnauthenticatedError",
    "default_retry_seconds",
    "json_compatible",
]
