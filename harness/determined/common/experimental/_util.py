"""Helpers shared by the client SDK's classes: ordering, enum parsing, query strings, and the
raw (non-JSON) answers of the master: NDJSON streams and checkpoint tarballs."""

import enum
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Optional, Type, TypeVar, Union

from determined.common import api
from determined.common.api import _tls  # noqa: F401 - api._tls below
from determined.common.api import errors

E = TypeVar("E", bound=enum.Enum)


class OrderBy(enum.Enum):
    """Whether a sorted list of objects is in ascending or descending order."""

    ASCENDING = "ORDER_BY_ASC"
    ASC = "ORDER_BY_ASC"
    DESCENDING = "ORDER_BY_DESC"
    DESC = "ORDER_BY_DESC"

    def _to_bindings(self) -> str:
        return str(self.value)


def order_value(order_by: Any) -> Optional[str]:
    """The ``orderBy`` query value of an OrderBy (or a deprecated *OrderBy enum), or None."""
    if order_by is None:
        return None
    value = order_by.value if isinstance(order_by, enum.Enum) else order_by
    if value in ("ORDER_BY_ASC", "ORDER_BY_DESC"):
        return str(value)
    if isinstance(value, int):  # bindings' numeric form
        return {1: "ORDER_BY_ASC", 2: "ORDER_BY_DESC"}.get(value)
    raise ValueError(f"order_by: {order_by!r} is not OrderBy.ASCENDING or OrderBy.DESCENDING")


def is_descending(order_by: Any) -> bool:
    return order_value(order_by) == "ORDER_BY_DESC"


def parse_enum(cls: Type[E], value: Any) -> Any:
    """``cls(value)``; a state the SDK does not know stays the raw string, not an exception."""
    if value is None:
        return None
    try:
        return cls(value)
    except ValueError:
        return value


def query(path: str, params: Dict[str, Any]) -> str:
    """``path`` with a query string; list values repeat the key (``states=A&states=B``)."""
    items: List[Any] = []
    for k, v in params.items():
        if v is None:
            continue
        for one in v if isinstance(v, (list, tuple, set)) else [v]:
            if isinstance(one, enum.Enum):
                one = one.value
            if isinstance(one, bool):
                one = "true" if one else "false"
            items.append((k, one))
    if not items:
        return path
    return path + "?" + urllib.parse.urlencode(items)


def read_all(session: api.Session, path: str, key: str, params: Optional[Dict[str, Any]] = None,
             limit: Optional[int] = None) -> List[Any]:
    """Every item under ``key`` of a paginated list route (one page when ``limit`` is set)."""
    out: List[Any] = []
    offset = 0
    while True:
        page = session.get(query(path, dict(params or {}, offset=offset or None, limit=limit)))
        items = (page or {}).get(key) or []
        out.extend(items)
        pag = (page or {}).get("pagination") or {}
        end, total = pag.get("endIndex"), pag.get("total")
        if limit is not None or not items or end is None or total is None:
            return out
        if int(end) >= int(total) or int(end) <= offset:
            return out
        offset = int(end)


def _headers(session: api.Session, accept: str) -> Dict[str, str]:
    headers = {"Accept": accept}
    token = getattr(session, "_user_token", None)
    alloc = getattr(session, "_allocation_token", None)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if alloc:
        headers[api._session.ALLOCATION_TOKEN_HEADER] = f"Bearer {alloc}"
    return headers


def open_raw(session: api.Session, path: str, accept: str, timeout: Optional[float] = None) -> Any:
    """An open ``urllib`` response for a route whose answer is not one JSON document. Errors
    raise the same exceptions as :class:`determined.common.api.Session`, and, like it, a
    master that is briefly unreachable (refused, reset, 502/503/504) is retried with backoff
    for up to ``session.retry_seconds``."""
    req = urllib.request.Request(session.master_url + path, headers=_headers(session, accept))
    deadline = time.monotonic() + float(getattr(session, "retry_seconds", 0.0) or 0.0)
    backoff = 0.1
    while True:
        try:
            return urllib.request.urlopen(
                req,
                timeout=timeout or session.default_timeout,
                context=api._tls.ssl_context(session.master_url),
            )
        except urllib.error.HTTPError as e:
            try:
                raw = e.read()
            except Exception:  # noqa: BLE001 - the body of an error is best effort
                raw = b""
            if e.code not in api._session.RETRY_STATUSES:
                message, reason, code = api._session._error_message(raw)
                cls = api._session._ERROR_CLASSES.get(e.code, errors.APIException)
                raise cls("GET", path, e.code, message, reason, code) from None
            what = f"HTTP {e.code}"
        except (urllib.error.URLError, OSError) as e:
            problem = api._tls.certificate_problem(e)
            if problem is not None:
                raise errors.MasterCertificateError(
                    api._tls.certificate_message(session.master_url, problem)) from None
            what = f"{type(e).__name__}: {e}"
        if time.monotonic() >= deadline:
            raise errors.MasterUnavailableError(
                f"GET {path}: master at {session.master_url} unavailable: {what}") from None
        time.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
        backoff = min(backoff * 2, float(getattr(session, "max_backoff", 2.0)))


def ndjson(session: api.Session, path: str, timeout: Optional[float] = None) -> Iterator[Any]:
    """The ``result`` of every line of a newline-delimited JSON stream, as it arrives."""
    with open_raw(session, path, "application/x-ndjson, application/json", timeout) as resp:
        for line in resp:
            line = line.strip()
            if not line:
                continue
            doc = json.loads(line)
            if isinstance(doc, dict) and "error" in doc and "result" not in doc:
                err = doc["error"]
                msg = err.get("error") or err.get("message") if isinstance(err, dict) else err
                raise errors.APIException("GET", path, 500, str(msg))
            yield doc.get("result", doc) if isinstance(doc, dict) else doc


def chain_lists(pages: Iterable[Dict[str, Any]], key: str) -> Iterator[Any]:
    for p in pages:
        yield from (p or {}).get(key) or []


def as_list(v: Optional[Union[Any, List[Any]]]) -> Optional[List[Any]]:
    if v is None:
        return None
    return list(v) if isinstance(v, (list, tuple, set)) else [v]

class DeprecatedOrderByEnum(enum.EnumMeta):
    """Metaclass of the deprecated *OrderBy enums: using a member warns to use OrderBy."""

    def __getattribute__(cls, name: str) -> Any:
        if not name.startswith("_"):
            warnings.warn(f"'{type.__getattribute__(cls, '__name__')}' is deprecated; use "
                          "'experimental.OrderBy' instead.", FutureWarning, stacklevel=2)
        return super().__getattribute__(name)
