"""Write one checkpoint, read from its storage, to stdout as a gzip-compressed tar stream.

    DET_STORAGE_CONFIG='{"type": "s3", ...}' python -m determined.exec.checkpoint_tar --uuid UUID

The master runs this to serve ``GET /api/v1/checkpoints/{uuid}`` (``det checkpoint download
--mode master``) for storage it cannot read itself (s3, gcs, azure, hdfs): the storage managers
of ``determined.common.storage`` already speak every backend, with the same credentials the
trials use. The storage config comes from the environment (``DET_STORAGE_CONFIG``), not the
command line, so that keys do not show in the process list; ``--storage-config`` is accepted too.

Entries are relative to the checkpoint directory, as for shared_fs checkpoints. Exit status 0
after a complete archive; 2 when the checkpoint has no files in storage ("not found" on stderr);
3 when it holds a symbolic link or a special file (named on stderr and stdout, no archive); 1 on any
other failure (the reason on stderr).
"""

import argparse
import json
import os
import pathlib
import sys
import tarfile
from typing import IO, Any, Optional, Sequence

from determined.common import storage


class UnsafeEntry(Exception):
    """A checkpoint entry a download must not carry (a link or a special file)."""


def write_tar(root: pathlib.Path, out: IO[bytes]) -> int:
    """Stream every file and directory under ``root`` into ``out``; returns the entry count.
    Symbolic links and special files are refused before anything is written (an archive that
    carried them could point the downloader's extraction outside its target)."""
    paths = sorted(root.rglob("*"))
    for path in paths:
        rel = path.relative_to(root)
        if path.is_symlink():
            raise UnsafeEntry(f"entry '{rel}' is a symbolic link (to '{os.readlink(path)}'); "
                              "a checkpoint download holds regular files and directories only")
        if not (path.is_file() or path.is_dir()):
            raise UnsafeEntry(f"entry '{rel}' is a special file; a checkpoint download holds "
                              "regular files and directories only")
    count = 0
    with tarfile.open(fileobj=out, mode="w|gz") as tar:
        for path in paths:
            tar.add(str(path), arcname=str(path.relative_to(root)), recursive=False)
            count += 1
    return count


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="determined.exec.checkpoint_tar", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--uuid", required=True, help="the checkpoint's uuid (its storage id)")
    parser.add_argument(
        "--storage-config", default=None,
        help="checkpoint_storage as JSON (default: the DET_STORAGE_CONFIG environment variable)",
    )
    args = parser.parse_args(argv)
    raw = args.storage_config or os.environ.get("DET_STORAGE_CONFIG")
    if not raw:
        print("checkpoint_tar: no storage config (DET_STORAGE_CONFIG or --storage-config)",
              file=sys.stderr)
        return 1
    try:
        config: Any = json.loads(raw)
        manager = storage.build(config)
        if not manager.list_files(args.uuid):
            print(f"checkpoint files of {args.uuid} not found in storage "
                  f"({manager._location(args.uuid)})", file=sys.stderr)
            return 2
        with manager.restore_path(args.uuid) as path:
            write_tar(pathlib.Path(path), sys.stdout.buffer)
        sys.stdout.buffer.flush()
    except UnsafeEntry as e:
        # Nothing was written to stdout yet: the reason goes there too, for the master to pass on.
        print(f"checkpoint {args.uuid}: {e}", file=sys.stderr)
        print(f"checkpoint {args.uuid}: {e}", flush=True)
        return 3
    except Exception as e:
        print(f"checkpoint_tar: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
