"""Credentials of the client SDK: the token cache ``det`` keeps, and logging in.

The cache is ``$XDG_CONFIG_HOME/determined/auth.json`` (default ``~/.config/determined``), in
Determined's format ``{"version": 1, "masters": {url: {"active_user": u, "tokens": {u: t}}}}``,
shared with ``det user login``. Credentials are resolved as ``det`` resolves them:
an explicit password logs in; else ``$DET_USER_TOKEN`` (for ``$DET_USER``); else a cached
token of the user (or of the master's active user) that the master still accepts; else
``$DET_PASS``, else a blank password, for the user (default ``determined``).
"""

import json
import logging
import os
import pathlib
import tempfile
from typing import Any, Dict, Optional, Tuple

from determined.common import api
from determined.common.api import errors

logger = logging.getLogger("determined.client")

DEFAULT_USER = "determined"


def cache_path() -> pathlib.Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return pathlib.Path(base, "determined", "auth.json")


def _load() -> Dict[str, Any]:
    try:
        data = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(data: Dict[str, Any]) -> None:
    path = cache_path()
    data.setdefault("version", 1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".auth.json.")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=4)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except OSError as e:  # a read-only home still lets the script run
        logger.warning("could not write the token cache %s: %s", path, e)


def _entry(data: Dict[str, Any], master: str) -> Dict[str, Any]:
    masters = data.setdefault("masters", {})
    if not isinstance(masters, dict):
        masters = data["masters"] = {}
    entry = masters.setdefault(master, {})
    if not isinstance(entry.get("tokens"), dict):
        entry["tokens"] = {}
    return entry


def cached(master: str, user: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """(user, token) from the cache for ``user`` (None: the master's active user)."""
    entry = (_load().get("masters") or {}).get(master) or {}
    user = user or entry.get("active_user")
    if not user:
        return None, None
    token = (entry.get("tokens") or {}).get(user)
    return user, token if isinstance(token, str) else None


def store(master: str, user: str, token: str) -> None:
    data = _load()
    entry = _entry(data, master)
    entry["tokens"][user] = token
    entry["active_user"] = user
    _save(data)


def drop(master: str, user: str) -> None:
    data = _load()
    entry = _entry(data, master)
    entry["tokens"].pop(user, None)
    if entry.get("active_user") == user:
        entry.pop("active_user", None)
    _save(data)


def password_login(master: str, user: str, password: str) -> str:
    """POST /api/v1/auth/login with the salted hash Determined's clients send; the token."""
    sess = api.Session(master)
    body = sess.post("/api/v1/auth/login", json_body={
        "username": user, "password": api.salt_and_hash(password), "isHashed": True,
    })
    token = (body or {}).get("token")
    if not isinstance(token, str) or not token:
        raise errors.APIException("POST", "/api/v1/auth/login", 200, "the answer has no token")
    return token


def token_works(master: str, token: str) -> bool:
    try:
        api.Session(master, user_token=token).get("/api/v1/me", retry=False)
        return True
    except errors.UnauthenticatedException:
        return False


def login(master: str, user: Optional[str], password: Optional[str]) -> Tuple[str, str]:
    """Resolve credentials for ``master``; returns (user, token) and caches fresh tokens."""
    env_user = os.environ.get("DET_USER") or None
    if password is None:
        env_token = os.environ.get("DET_USER_TOKEN")
        if env_token and (user is None or user == env_user):
            return user or env_user or DEFAULT_USER, env_token
        cached_user, token = cached(master, user or env_user)
        if token and cached_user:
            if token_works(master, token):
                return cached_user, token
            drop(master, cached_user)
        user = user or cached_user or env_user or DEFAULT_USER
        password = os.environ.get("DET_PASS", "")
    user = user or env_user or DEFAULT_USER
    token = password_login(master, user, password)
    store(master, user, token)
    return user, token


def logout(master: str, user: str, token: str) -> None:
    try:
        api.Session(master, user_token=token).post("/api/v1/auth/logout", retry=False)
    except errors.APIException as e:
        logger.debug("logout: %s", e)
    drop(master, user)
