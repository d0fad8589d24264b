"""``python3 -m determined.launch.horovod [[HVD_OVERRIDES...] --] (--trial TRIAL)|(SCRIPT...)``

A wrapper around horovodrun. Needs the `horovod` package; without it, exits 1 with a message
naming it (use determined.launch.torch_distributed instead).
"""

import importlib.util
import os
import subprocess
import sys
from typing import List, Optional

from determined.launch import torch_distributed


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("horovod") is None:
        print("determined.launch.horovod: the `horovod` package is not installed in this environment; "
              "install horovod or use `python3 -m determined.launch.torch_distributed` instead",
              file=sys.stderr)
        return 1
    overrides, rest = torch_distributed.split_args(argv)
    python = os.environ.get("DET_PYTHON_EXECUTABLE") or sys.executable
    try:
        cmd = torch_distributed.worker_command(rest, python)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    nproc = torch_distributed._slots_from_env() or 1
    addrs = os.environ.get("DET_CONTAINER_ADDRS")
    hosts = ",".join(f"{a}:{nproc}" for a in (__import__("json").loads(addrs) if addrs else ["localhost"]))
    np_total = nproc * len(hosts.split(","))
    hvd = ["horovodrun", "-np", str(np_total), "-H", hosts] + overrides + [
        python, "-m", "determined.launch.wrap_rank", "HOROVOD_RANK", "--"] + cmd
    return subprocess.call(hvd)


if __name__ == "__main__":
    sys.exit(main())
