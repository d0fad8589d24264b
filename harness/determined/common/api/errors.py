"""Exceptions raised by :class:`determined.common.api.Session`.

The class names and their hierarchy follow Determined's ``determined.common.api.errors`` so
that user code catching e.g. ``NotFoundException`` or ``BadRequestException`` keeps working.
Every error the master answers with is an :class:`APIException` (which is a
``BadRequestException``), carrying the method, path, HTTP status and the master's message.
"""

from typing import Optional


class BadRequestException(Exception):
    """A request could not be made or was refused."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(message, *args)
        self.message = message


class BadResponseException(Exception):
    """The master answered with something that could not be understood."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(message, *args)
        self.message = message


class EmptyResultException(BadResponseException):
    """An answer that should have held a result held none."""


class MasterNotFoundException(BadRequestException):
    """The master could not be reached."""


class MasterUnavailableError(MasterNotFoundException):
    """The master could not be reached for longer than the retry budget."""


class APIException(BadRequestException):
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
        what = f" ({reason})" if reason else ""
        super().__init__(f"{method} {path} failed with HTTP {status}{what}: {message}")
        self.method = method
        self.path = path
        self.status = status
        self.status_code = status
        self.message = message  # the master's own message; str(e) holds the full text
        self.reason = reason
        self.code = code


class NotFoundException(APIException):
    """HTTP 404."""


class ForbiddenException(APIException):
    """HTTP 403: the caller may not do this."""


class UnauthenticatedException(APIException):
    """HTTP 401: the token is missing or invalid."""


class InvalidCredentialsException(UnauthenticatedException):
    """The user name or password was refused."""


class DeleteFailedException(APIException):
    """A delete the master was asked for did not succeed."""


class CorruptTokenCacheException(Exception):
    """The local cache of user tokens could not be read."""

    def __init__(self) -> None:
        super().__init__("the local token cache is corrupt; remove it and log in again")


class CorruptCertificateCacheException(Exception):
    """The local cache of master certificates could not be read."""

    def __init__(self) -> None:
        super().__init__("the local certificate cache is corrupt; remove it and try again")


# The names this package used before it followed Determined's.
NotFoundError = NotFoundException
UnauthenticatedError = UnauthenticatedException


class MasterCertificateError(MasterNotFoundException):
    """The master's TLS certificate could not be verified (not retried: waiting cannot fix it).
    Trust its CA with ``DET_MASTER_CERT_FILE`` (``noverify`` skips the check) and name the host
    the certificate carries with ``DET_MASTER_CERT_NAME`` when it is not the URL's host."""
