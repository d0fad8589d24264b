"""``det checkpoint download --mode direct``: copy a checkpoint straight from its storage.

    python -m determined.common.checkpoint_download --storage-config JSON --uuid UUID \\
        [-o DIR] [--glob GLOB ...] [--force]

The target defaults to ``checkpoints/<uuid>``; like Determined it is left alone when it
already holds ``metadata.json`` (or ``MLmodel``) unless ``--force``. Prints the target path.
Exit status 2 when the checkpoint is not in storage.
"""

import argparse
import os
import sys
from typing import Any, Optional, Sequence

from determined.common import storage
from determined.common.storage import globs as _globs

MARKERS = ("metadata.json", "MLmodel")


def download(
    storage_config: Any,
    storage_id: str,
    output: Optional[str] = None,
    *,
    globs: Sequence[str] = (),
    force: bool = False,
) -> str:
    """Download checkpoint ``storage_id`` into ``output``; returns the target directory."""
    target = output or os.path.join("checkpoints", storage_id)
    if not force and any(os.path.exists(os.path.join(target, m)) for m in MARKERS):
        return target
    manager = storage.build(storage_config)
    selector = (lambda p: _globs.selects(p, globs)) if globs else None
    manager.download(storage_id, target, selector=selector)
    return target


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="determined.common.checkpoint_download")
    p.add_argument("--storage-config", required=True)
    p.add_argument("--uuid", required=True)
    p.add_argument("-o", "--output", default=None)
    p.add_argument("--glob", action="append", default=[])
    p.add_argument("--force", action="store_true")
    args = p.parse_args(argv)
    try:
        target = download(
            storage.config_from_arg(args.storage_config), args.uuid, args.output, globs=args.glob, force=args.force
        )
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
