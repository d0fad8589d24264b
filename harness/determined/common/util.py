"""Small helpers shared by the harness, tools and user code (names as in Determined's
``determined.common.util``).

YAML helpers import PyYAML (Debian's python3-yaml) when they are called, so importing this
module needs only the standard library.
"""

import datetime
import functools
import io
import json
import os
import pathlib
import platform
import random
import re
import sys
import time
import warnings
from typing import IO, Any, Callable, Iterator, Optional, Sequence, Tuple, TypeVar, Union, cast

T = TypeVar("T")
U = TypeVar("U", bound=Callable[..., Any])

_FALSE_WORDS = ("n", "no", "f", "false", "off", "0")

# The metric groups with a meaning of their own (Determined's fixtures import these).
_LEGACY_TRAINING = "training"
_LEGACY_VALIDATION = "validation"
_INFERENCE = "inference"


def chunks(lst: Union[str, Sequence[T]], chunk_size: int) -> Iterator[Any]:
    """Yield consecutive slices of ``chunk_size`` items (the last one may be shorter)."""
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be positive, not {chunk_size}")
    for start in range(0, len(lst), chunk_size):
        yield lst[start : start + chunk_size]


def sizeof_fmt(val: Union[int, float]) -> str:
    """A byte count for humans: 1536 -> '1.5KB'."""
    size = float(val)
    for unit in ("", "K", "M", "G", "T", "P", "E", "Z"):
        if abs(size) < 1024.0:
            return f"{size:3.1f}{unit}B"
        size /= 1024.0
    return f"{size:.1f}YB"


def debug_mode() -> bool:
    """True when ``DET_DEBUG`` is set to true/1/yes."""
    return os.environ.get("DET_DEBUG", "").lower() in ("true", "1", "yes")


def preserve_random_state(fn: Callable) -> Callable:
    """Decorate ``fn`` so that the state of Python's ``random`` is the same after it runs."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        saved = random.getstate()
        try:
            return fn(*args, **kwargs)
        finally:
            random.setstate(saved)

    return wrapped


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as e:  # pragma: no cover - python3-yaml is a project dependency
        raise ImportError("YAML helpers need PyYAML (Debian package python3-yaml)") from e
    return yaml


def yaml_safe_dump(
    data: Any,
    stream: Optional[Union[io.FileIO, IO[Any], str]] = None,
    default_flow_style: Optional[bool] = None,
) -> Any:
    """Dump plain data as YAML; return the text when no stream is given."""
    yaml = _yaml()
    kwargs: dict = {"sort_keys": False}
    if default_flow_style is not None:
        kwargs["default_flow_style"] = default_flow_style
    if stream is None:
        return yaml.safe_dump(data, **kwargs)
    if isinstance(stream, str):
        with open(stream, "w") as f:
            return yaml.safe_dump(data, f, **kwargs)
    return yaml.safe_dump(data, stream, **kwargs)


def yaml_safe_load(f: Union[io.FileIO, IO[Any], str]) -> Any:
    """Load YAML (a stream or the YAML text itself) into plain data."""
    return _yaml().safe_load(f)


def safe_load_yaml_with_exceptions(yaml_file: Union[io.FileIO, IO[Any], str]) -> Any:
    """Like :func:`yaml_safe_load`, but a malformed file prints where it is wrong and exits 1
    instead of raising a parser traceback (for command-line tools)."""
    yaml = _yaml()
    try:
        return yaml.safe_load(yaml_file)
    except yaml.MarkedYAMLError as e:
        print(
            f"Error: invalid experiment config file.\n{type(e).__name__}: {e.problem}\n{e.problem_mark}"
        )
        sys.exit(1)


def get_config_path() -> pathlib.Path:
    """Where the CLI keeps its configuration (tokens, certificates)."""
    override = os.environ.get("DET_DEBUG_CONFIG_PATH")
    if override:
        return pathlib.Path(override)
    system = platform.system()
    if system == "Linux" and os.environ.get("XDG_CONFIG_HOME"):
        base = pathlib.Path(os.environ["XDG_CONFIG_HOME"])
    elif system == "Darwin":
        base = pathlib.Path.home() / "Library" / "Application Support"
    elif system == "Windows" and os.environ.get("LOCALAPPDATA"):
        base = pathlib.Path(os.environ["LOCALAPPDATA"])
    else:
        base = pathlib.Path.home() / ".config"
    return base / "determined"


def get_max_retries_config() -> Any:
    """A ``urllib3.util.retry.Retry`` for clients built on requests/urllib3.

    ``DET_RETRY_CONFIG`` (a JSON object of Retry arguments) overrides the default of 20 tries
    with a 0.5 s backoff factor on every method. Our own :class:`api.Session` does not use it
    (it retries by time, ``DET_RETRY_SECONDS``); urllib3 is imported only here.
    """
    from urllib3.util import retry

    raw = os.environ.get("DET_RETRY_CONFIG")
    if raw is not None:
        try:
            config = json.loads(raw)
        except json.JSONDecodeError as e:
            raise ValueError(f"DET_RETRY_CONFIG is not a JSON object: {e}") from None
        return retry.Retry(**config)
    try:
        return retry.Retry(total=20, backoff_factor=0.5, allowed_methods=False)
    except TypeError:  # urllib3 older than 1.26 names the argument differently
        return retry.Retry(total=20, backoff_factor=0.5, method_whitelist=False)


def parse_protobuf_timestamp(ts: str) -> datetime.datetime:
    """Parse the RFC 3339 timestamps the master sends (fractions of a second are dropped)."""
    if ts.endswith("Z"):
        ts = ts[:-1] + "+00:00"
    return datetime.datetime.fromisoformat(re.sub(r"\.[0-9]*", "", ts))


def is_protobuf_timestamp(ts: str) -> bool:
    """True for a UTC timestamp such as ``2024-01-02T03:04:05Z`` (optionally with fractions)."""
    if not isinstance(ts, str) or not ts.endswith("Z"):
        return False
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            datetime.datetime.strptime(ts, fmt)
            return True
        except ValueError:
            continue
    return False


def wait_for(predicate: Callable[[], Tuple[bool, T]], timeout: int = 60, interval: float = 0.1) -> T:
    """Call ``predicate()`` (returning ``(done, value)``) every ``interval`` seconds until it is
    done, and return its value; raise TimeoutError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        done, value = predicate()
        if done:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout} s waiting for a predicate")
        time.sleep(interval)


def deprecated(message: Optional[str] = None) -> Callable[[U], U]:
    """Decorate a function so that calling it warns with a DeprecationWarning."""

    def decorator(func: U) -> U:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            text = f"{func.__name__} is deprecated and will be removed in a future version."
            if message:
                text += f" {message}."
            warnings.warn(text, category=DeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        return cast(U, wrapper)

    return decorator


def strtobool(val: str) -> bool:
    """False for empty, n/no/f/false/off/0 (any case); True for any other string."""
    return bool(val) and val.lower() not in _FALSE_WORDS
