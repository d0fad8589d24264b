"""Glob patterns over checkpoint resources (``**/*``, ``**/*state*``, ``sub/*.pt``).

``*`` and ``?`` stay within one path component, ``**/`` spans any number of directories (also
none) and a trailing ``**`` matches everything below. A pattern that matches a directory
selects everything under it as well.
"""

import functools
import re
from typing import Dict, Iterable, Pattern, Set


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Pattern[str]:
    pat = pattern.strip().lstrip("/")
    if pat.endswith("/"):
        pat = pat.rstrip("/")
    out = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pat.find("]", i + 2 if pat[i + 1 : i + 2] in ("!", "^") else i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def matches(path: str, globs: Iterable[str]) -> bool:
    """Whether a resource path (directories end with '/') matches any of ``globs``."""
    p = path.rstrip("/")
    return any(g and compile_glob(g).fullmatch(p) is not None for g in globs)


def selects(path: str, globs: Iterable[str]) -> bool:
    """Whether ``path`` or one of the directories it lies in matches any of ``globs``."""
    globs = list(globs)
    parts = path.rstrip("/").split("/")
    return any(matches("/".join(parts[:i]), globs) for i in range(1, len(parts) + 1))


def expand_matches(resources: Dict[str, int], globs: Iterable[str]) -> Set[str]:
    """The resource paths selected by ``globs``: the matches and everything under matched dirs."""
    globs = [g for g in globs if g]
    hit = {p for p in resources if matches(p, globs)}
    dirs = [p for p in hit if p.endswith("/")]
    if dirs:
        for p in resources:
            if any(p.startswith(d) for d in dirs):
                hit.add(p)
    return hit
