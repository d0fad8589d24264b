"""The user session core_v2 reports an unmanaged trial with.

A ``client`` passed to ``core_v2.init`` (``determined.experimental.client.Determined``, or any
object with ``_session`` and ``_master``) is used as is. Otherwise the master is
``DET_MASTER`` (default ``localhost:8080``) and the user is found as ``det`` finds it:
``DET_USER_TOKEN``; a token ``det user login`` cached for ``DET_USER`` (or the active user)
in ``$XDG_CONFIG_HOME/determined/auth.json``; a login as ``DET_USER`` (default
``determined``) with ``DET_PASS`` (default blank), whose token is then cached.
"""

import json
import logging
import os
import tempfile
from typing import Any, Dict, Optional

from determined.common import api

logger = logging.getLogger("determined.core")

DEFAULT_USER = "determined"


class _Client:
    """What core_v2 needs of a client: a logged-in session and the master's address."""

    def __init__(self, session: api.Session, master: str, token: str, username: str) -> None:
        self._session = session
        self._master = master
        self._token = token
        self._username = username


def _cache_key(master: str) -> str:
    """The master as ``det`` writes it into auth.json: with a scheme, without a trailing /."""
    master = master.strip().rstrip("/")
    return master if "://" in master else "http://" + master


def _auth_cache_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "determined", "auth.json")


def _read_cache(path: str) -> Dict[str, Any]:
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _cached_token(master: str, user: Optional[str]) -> Optional[tuple]:
    entry = (_read_cache(_auth_cache_path()).get("masters") or {}).get(_cache_key(master))
    if not isinstance(entry, dict):
        return None
    user = user or entry.get("active_user")
    token = (entry.get("tokens") or {}).get(user) if user else None
    return (user, token) if isinstance(token, str) and token else None


def _store_token(master: str, user: str, token: str) -> None:
    """Caches the token the way ``det user login`` does (best effort: a read-only home is fine)."""
    path = _auth_cache_path()
    try:
        data = _read_cache(path)
        data.setdefault("version", 1)
        masters = data.setdefault("masters", {})
        entry = masters.setdefault(_cache_key(master), {})
        entry.setdefault("tokens", {})[user] = token
        if not entry.get("active_user"):
            entry["active_user"] = user
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".auth.json.")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=4)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as e:
        logger.debug("could not cache the login token in %s: %s", path, e)


def _login(master: str, user: str, password: str) -> str:
    session = api.Session(master)
    resp = session.post(
        "/api/v1/auth/login",
        json_body={"username": user, "password": api.salt_and_hash(password), "isHashed": True},
    )
    token = (resp or {}).get("token")
    if not token:
        raise api.errors.BadResponseException(f"login as {user!r} at {master} returned no token")
    return str(token)


def make_client(
    master: Optional[str] = None, user: Optional[str] = None, password: Optional[str] = None
) -> _Client:
    """Logs in to the master (see the module docstring for the order of credentials)."""
    raw_master = master or api.get_default_master_url()
    master_url = api.canonicalize_master_url(raw_master)
    user = user or os.environ.get("DET_USER") or None

    env_token = os.environ.get("DET_USER_TOKEN")
    if env_token:
        return _Client(api.Session(master_url, user_token=env_token), master_url, env_token, user or "")

    cached = _cached_token(raw_master, user) or _cached_token(master_url, user)
    if cached is not None:
        cached_user, token = cached
        session = api.Session(master_url, user_token=token)
        try:
            session.get("/api/v1/me")
            return _Client(session, master_url, token, cached_user)
        except api.errors.UnauthenticatedException:
            logger.info("the cached login of %s at %s has expired; logging in again", cached_user, master_url)

    user = user or DEFAULT_USER
    if password is None:
        password = os.environ.get("DET_PASS", "")
    token = _login(master_url, user, password)
    _store_token(raw_master, user, token)
    return _Client(api.Session(master_url, user_token=token), master_url, token, user)


def from_client(client: Any) -> _Client:
    """Adapts a ``Determined`` client (or a _Client) to what core_v2 uses."""
    if isinstance(client, _Client):
        return client
    session = getattr(client, "_session", None)
    if session is None:
        raise TypeError(f"client must be a determined.experimental.Determined, not {type(client).__name__}")
    master = getattr(client, "_master", None) or getattr(session, "master_url", None) or ""
    token = getattr(session, "_user_token", None) or getattr(session, "token", None) or ""
    username = getattr(session, "username", None) or ""
    return _Client(session, str(master), str(token), str(username))
