"""import_from_path: import modules from a directory (e.g. a checkpoint's code) without
clashing with same-named modules already imported."""

import contextlib
import os
import sys
import threading
from typing import Dict, Iterator, Set

_lock = threading.Lock()


def _modules_from_dir(path: str) -> Set[str]:
    """Names in sys.modules imported from ``path`` (and submodules of those), plus cached
    misses (None entries), which would hide the directory's modules."""
    root = os.path.abspath(path)
    found: Set[str] = set()
    for name, module in sorted(sys.modules.items()):  # parents sort before children
        if module is None:
            found.add(name)
            continue
        file = getattr(module, "__file__", None)
        if not file:
            continue
        directory, base = os.path.split(file)
        if base == "__init__.py":
            directory = os.path.dirname(directory)
        if directory == root or name.rpartition(".")[0] in found:
            found.add(name)
    return found


@contextlib.contextmanager
def import_from_path(path: "os.PathLike[str] | str") -> Iterator[None]:
    """Within the block, ``import x`` finds ``x`` in ``path`` first, even when a module ``x``
    was imported before from the current directory; on exit the modules imported from
    ``path`` are forgotten and the earlier ones restored. Byte code is not written into
    ``path``. Not reentrant, and not for use from several threads at once."""
    if not _lock.acquire(blocking=False):
        raise RuntimeError("det.import_from_path does not support nesting or concurrent use")
    fspath = os.fspath(path)
    saved_path = sys.path
    saved_dont_write = sys.dont_write_bytecode
    shadowed: Dict[str, object] = {}
    try:
        for local in ("", os.getcwd()):
            if local in sys.path:
                sys.path = [p for p in sys.path if p != ""]
                for name in _modules_from_dir(local):
                    shadowed[name] = sys.modules.pop(name)
        sys.path = [os.path.abspath(fspath)] + sys.path
        sys.dont_write_bytecode = True  # keep __pycache__ out of checkpoint directories
        yield
    finally:
        sys.dont_write_bytecode = saved_dont_write
        for name in _modules_from_dir(fspath):
            sys.modules.pop(name, None)
        sys.path = saved_path
        sys.modules.update(shadowed)  # type: ignore[arg-type]
        _lock.release()
