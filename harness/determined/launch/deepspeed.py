"""``python3 -m determined.launch.deepspeed [[DEEPSPEED_ARGS...] --] (--trial TRIAL)|(SCRIPT...)``

Launches the workers under the `deepspeed` launcher. Needs the `deepspeed` package; without it,
exits 1 with a message naming it.
"""

import importlib.util
import os
import subprocess
import sys
from typing import List, Optional

from determined.launch import torch_distributed


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if importlib.util.find_spec("deepspeed") is None:
        print("determined.launch.deepspeed: the `deepspeed` package is not installed in this environment; "
              "install deepspeed or use `python3 -m determined.launch.torch_distributed` instead",
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
    if cmd[:3] == [python, "-m", "determined.exec.harness"]:
        script = ["--module", "determined.exec.harness"] + cmd[3:]
    elif cmd[0] == python:
        script = cmd[1:]
    else:
        script = ["--no_python"] + cmd
    ds = [python, "-m", "deepspeed.launcher.runner", "--num_gpus", str(nproc)] + overrides + script
    return subprocess.call(ds)


if __name__ == "__main__":
    sys.exit(main())
