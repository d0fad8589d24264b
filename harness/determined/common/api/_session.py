"""A small HTTP/JSON session to the master, built on urllib.

On-cluster requests are retried with backoff while the master is briefly unreachable
(connection refused/reset, timeouts, HTTP 502/503/504), for up to ``DET_RETRY_SECONDS``
(default 300) seconds; other errors raise :class:`APIException` with the server's message.
"""

import http.client
import json
import logging
import math
import os
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Optional

from determined.common.api import _tls
from determined.common.api.errors import (
    APIException,
    ForbiddenException,
    MasterCertificateError,
    MasterUnavailableError,
    NotFoundException,
    UnauthenticatedException,
)

logger = logging.getLogger("determined.common.api")

RETRY_STATUSES = (502, 503, 504)

# The APIException subclass raised for an HTTP status (others: APIException itself).
_ERROR_CLASSES = {401: UnauthenticatedException, 403: ForbiddenException, 404: NotFoundException}
DEFAULT_RETRY_SECONDS = 300.0
ALLOCATION_TOKEN_HEADER = "Grpc-Metadata-x-allocation-token"


def default_retry_seconds() -> float:
    raw = os.environ.get("DET_RETRY_SECONDS")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            logger.warning("ignoring DET_RETRY_SECONDS=%r: not a number", raw)
    return DEFAULT_RETRY_SECONDS


def json_compatible(obj: Any) -> Any:
    """Return a copy of ``obj`` that ``json.dumps(allow_nan=False)`` accepts.

    NaN and infinities become the strings "NaN", "Infinity", "-Infinity" (as the gRPC gateway
    renders them); numpy/torch scalars become Python numbers; tuples and sets become lists.
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if math.isnan(obj):
            return "NaN"
        if math.isinf(obj):
            return "Infinity" if obj > 0 else "-Infinity"
        return float(obj)
    if isinstance(obj, dict):
        return {str(k): json_compatible(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [json_compatible(v) for v in obj]
    # numpy scalars / 0-d arrays, torch 1-element tensors
    item = getattr(obj, "item", None)
    if callable(item):
        try:
            return json_compatible(item())
        except (ValueError, RuntimeError, TypeError):
            pass
    tolist = getattr(obj, "tolist", None)
    if callable(tolist):
        return json_compatible(tolist())
    if hasattr(obj, "__fspath__"):
        return os.fspath(obj)
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serializable: {obj!r}")


def _error_message(raw: bytes) -> "tuple[str, Optional[str], Optional[int]]":
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return text or "(empty response)", None, None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return str(err.get("error") or err.get("message") or text), err.get("reason"), err.get("code")
        if isinstance(err, str):
            return err, None, body.get("code")
        if "message" in body:
            return str(body["message"]), None, body.get("code")
    return text, None, None


class _Transient(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class Session:
    """Talks JSON to one master with one set of credentials."""

    def __init__(
        self,
        master_url: str,
        *,
        allocation_token: Optional[str] = None,
        user_token: Optional[str] = None,
        retry_seconds: Optional[float] = None,
        max_backoff: float = 2.0,
        default_timeout: float = 60.0,
    ) -> None:
        self.master_url = master_url.rstrip("/")
        self._allocation_token = allocation_token
        self._user_token = user_token
        self.retry_seconds = default_retry_seconds() if retry_seconds is None else retry_seconds
        self.max_backoff = max_backoff
        self.default_timeout = default_timeout

    # -- public verbs ---------------------------------------------------------------------
    def get(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> Any:
        return self.request("POST", path, **kw)

    def patch(self, path: str, **kw: Any) -> Any:
        return self.request("PATCH", path, **kw)

    def put(self, path: str, **kw: Any) -> Any:
        return self.request("PUT", path, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self.request("DELETE", path, **kw)

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
        retry: bool = True,
        should_stop: Optional[Callable[[], bool]] = None,
    ) -> Any:
        """Send one request; return the decoded JSON body (None when empty).

        With ``retry`` (the default) transient failures are retried with exponential backoff
        until ``retry_seconds`` have passed, then :class:`MasterUnavailableError` is raised.
        ``should_stop`` lets a background thread give up early (raises MasterUnavailableError).
        """
        url = self.master_url + path
        if params:
            url += "?" + urllib.parse.urlencode(
                {k: (str(v).lower() if isinstance(v, bool) else v) for k, v in params.items() if v is not None}
            )
        data = None
        headers = {"Accept": "application/json"}
        if json_body is not None:
            data = json.dumps(json_compatible(json_body), allow_nan=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT", "PATCH"):
            data = b"{}"
            headers["Content-Type"] = "application/json"
        if self._allocation_token:
            headers[ALLOCATION_TOKEN_HEADER] = f"Bearer {self._allocation_token}"
        if self._user_token:
            headers["Authorization"] = f"Bearer {self._user_token}"
        timeout = self.default_timeout if timeout is None else timeout

        deadline = time.monotonic() + (self.retry_seconds if retry else 0.0)
        backoff = 0.1
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._once(method, path, url, data, headers, timeout)
            except _Transient as e:
                now = time.monotonic()
                if not retry or now >= deadline or (should_stop is not None and should_stop()):
                    raise MasterUnavailableError(
                        f"{method} {path}: master at {self.master_url} unavailable"
                        f" after {attempt} attempt(s): {e.what}"
                    ) from None
                if attempt == 1 or attempt % 10 == 0:
                    logger.warning(
                        "%s %s: %s; retrying (attempt %d, giving up in %.0fs)",
                        method, path, e.what, attempt, deadline - now,
                    )
                sleep = min(backoff, self.max_backoff, max(0.0, deadline - now))
                time.sleep(sleep * (0.75 + 0.5 * random.random()))
                backoff = min(backoff * 2, self.max_backoff)

    # -- internals ------------------------------------------------------------------------
    def _once(
        self, method: str, path: str, url: str, data: Optional[bytes], headers: Dict[str, str], timeout: float
    ) -> Any:
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(
                req, timeout=timeout, context=_tls.ssl_context(url)
            ) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            try:
                raw = e.read()
            except Exception:  # noqa: BLE001 - the body of an error is best effort
                raw = b""
            if e.code in RETRY_STATUSES:
                raise _Transient(f"HTTP {e.code}") from None
            message, reason, code = _error_message(raw)
            cls = _ERROR_CLASSES.get(e.code, APIException)
            raise cls(method, path, e.code, message, reason, code) from None
        except urllib.error.URLError as e:
            problem = _tls.certificate_problem(e)
            if problem is not None:
                raise MasterCertificateError(_tls.certificate_message(self.master_url, problem)) from None
            raise _Transient(f"{type(e.reason).__name__}: {e.reason}") from None
        except (http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError, OSError) as e:
            problem = _tls.certificate_problem(e)
            if problem is not None:
                raise MasterCertificateError(_tls.certificate_message(self.master_url, problem)) from None
            raise _Transient(f"{type(e).__name__}: {e}") from None
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            raise APIException(method, path, 200, f"response is not JSON: {raw[:200]!r}") from None
