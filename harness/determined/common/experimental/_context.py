"""Packs a model directory (and includes) into the ``modelDefinition`` file list of
``POST /api/v1/experiments``, as ``det experiment create`` does: paths relative to the root,
a directory (type 53) before its contents, regular files (type 48) with base64 content, the
permission bits as ``mode`` and ``mtime``. The built-in ignores and a top-level ``.detignore``
(gitignore syntax: ``!`` negation, trailing ``/`` for directories, leading ``/`` anchors,
``**``) leave paths out. Included paths keep their base name as a prefix."""

import base64
import os
import pathlib
import re
import stat
from typing import Any, Dict, Iterable, List, Optional, Pattern, Tuple, Union

from determined.common import constants

MAX_CONTEXT_SIZE = 95 * 1024 * 1024
FILE, DIRECTORY = 48, 53


def _glob_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1:j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body + "]")
                i = j
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class Ignore:
    """gitignore-style rules; the last matching rule decides."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.rules: List[Tuple[Pattern[str], bool, bool]] = []  # (regex, negate, dir_only)
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line.lstrip("/")
            prefix = "" if anchored else "(?:.*/)?"
            self.rules.append((re.compile("^" + prefix + _glob_regex(line) + "$"), negate, dir_only))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        result = False
        for regex, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.match(rel):
                result = not negate
        return result


def _ignore_for(root: pathlib.Path) -> Ignore:
    lines = list(constants.DEFAULT_DETIGNORE)
    detignore = root / ".detignore"
    if detignore.is_file():
        lines += detignore.read_text(errors="replace").splitlines()
    return Ignore(lines)


def _entry(path: pathlib.Path, rel: str) -> Optional[Dict[str, Any]]:
    try:
        st = path.stat()
    except OSError:
        return None  # a dangling link
    if stat.S_ISDIR(st.st_mode):
        kind = DIRECTORY
    elif stat.S_ISREG(st.st_mode):
        kind = FILE
    else:
        return None  # sockets, fifos
    return {"path": rel, "type": kind, "mode": stat.S_IMODE(st.st_mode),
            "mtime": str(int(st.st_mtime)), "_local": str(path),
            "_size": st.st_size if kind == FILE else 0}


def _walk(root: pathlib.Path, rel_dir: str, match_dir: str, ignore: Ignore,
          out: List[Dict[str, Any]]) -> None:
    for child in sorted(root.iterdir(), key=lambda p: p.name):
        rel = f"{rel_dir}/{child.name}" if rel_dir else child.name
        match_rel = f"{match_dir}/{child.name}" if match_dir else child.name
        entry = _entry(child, rel)
        if entry is None:
            continue
        is_dir = entry["type"] == DIRECTORY
        if ignore.ignored(match_rel, is_dir):
            continue
        out.append(entry)
        if is_dir and not child.is_symlink():
            _walk(child, rel, match_rel, ignore, out)


def list_context(model_dir: Optional[Union[str, pathlib.Path]],
                 includes: Iterable[Union[str, pathlib.Path]] = ()) -> List[Dict[str, Any]]:
    entries: List[Dict[str, Any]] = []
    if model_dir is not None:
        root = pathlib.Path(model_dir)
        if not root.is_dir():
            raise ValueError(f"model_dir: {model_dir} is not a directory")
        _walk(root, "", "", _ignore_for(root), entries)
    roots = {e["path"] for e in entries if "/" not in e["path"]}
    for inc in includes:
        p = pathlib.Path(os.path.normpath(str(inc)))
        name = p.name
        if not name or name in (".", ".."):
            raise ValueError(f"includes: cannot include {inc}: it has no base name")
        if name in roots:
            raise ValueError(f"includes: cannot include {inc}: a path named '{name}' is "
                             "already in the context")
        roots.add(name)
        entry = _entry(p, name)
        if entry is None:
            raise ValueError(f"includes: cannot include {inc}: not a file or directory")
        entries.append(entry)
        if entry["type"] == DIRECTORY:
            _walk(p, name, "", _ignore_for(p), entries)
    return entries


def pack(model_dir: Optional[Union[str, pathlib.Path]],
         includes: Iterable[Union[str, pathlib.Path]] = (),
         max_bytes: int = MAX_CONTEXT_SIZE) -> List[Dict[str, Any]]:
    """The ``modelDefinition`` list; ValueError when the content reaches ``max_bytes``."""
    entries = list_context(model_dir, includes)
    total = sum(e["_size"] for e in entries)
    if total >= max_bytes:
        raise ValueError(
            f"the model directory and includes hold {total} bytes, which exceeds the maximum "
            f"allowed size of {max_bytes} bytes; list large files in a .detignore file")
    files = []
    for e in entries:
        content = b""
        if e["type"] == FILE:
            with open(e["_local"], "rb") as f:
                content = f.read()
        files.append({"path": e["path"], "type": e["type"], "mode": e["mode"],
                      "mtime": e["mtime"], "content": base64.b64encode(content).decode("ascii")})
    return files
