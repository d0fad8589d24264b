"""Exceptions raised by :class:`determined.common.api.Session`."""

from typing import Optional


class APIException(Exception):
    """The master answered with an error status (4xx, or 5xx that is not retried)."""

    def __init__(
        self,
        method: str,
        path: str,
        status: int,
        message: str,
        reason: Optional[str] = None,
        code: Optional[int] = None,
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.message = message
        self.reason = reason
        self.code = code
        what = f" ({reason})" if reason else ""
        super().__init__(f"{method} {path} failed with HTTP {status}{what}: {message}")


class NotFoundError(APIException):
    """HTTP 404."""


class UnauthenticatedError(APIException):
    """HTTP 401: the allocation token is missing or invalid."""


class MasterUnavailableError(Exception):
    """The master could not be reached for longer than the retry budget."""
