"""HTTP access to the master's ``/api/v1`` (standard library only).

:class:`Session` returns the decoded JSON of an answer (Determined's returns a
``requests.Response``); see docs/compatibility.md. ``BaseSession``, ``UnauthSession`` and
``TaskSession`` are the same class here: one session type serves users and tasks.
"""

from determined.common.api import errors
from determined.common.api.errors import (
    APIException,
    BadRequestException,
    ForbiddenException,
    MasterCertificateError,
    MasterNotFoundException,
    MasterUnavailableError,
    NotFoundError,
    NotFoundException,
    UnauthenticatedError,
    UnauthenticatedException,
)
from determined.common.api._session import Session, default_retry_seconds, json_compatible
from determined.common.api._util import (
    PageOpts,
    canonicalize_master_url,
    get_default_master_url,
    read_paginated,
    salt_and_hash,
)

BaseSession = Session
UnauthSession = Session
TaskSession = Session

__all__ = [
    "APIException",
    "BadRequestException",
    "BaseSession",
    "ForbiddenException",
    "MasterNotFoundException",
    "MasterUnavailableError",
    "NotFoundError",
    "NotFoundException",
    "PageOpts",
    "Session",
    "TaskSession",
    "UnauthSession",
    "UnauthenticatedError",
    "UnauthenticatedException",
    "canonicalize_master_url",
    "default_retry_seconds",
    "errors",
    "get_default_master_url",
    "json_compatible",
    "read_paginated",
    "salt_and_hash",
]
