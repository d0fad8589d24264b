"""A TensorBoard task: TensorBoard over the event files the trials of the given experiments
uploaded, on a free loopback port with the master's proxy path as its base URL. TensorBoard is
not packaged by Debian: without it the task fails with an error naming the missing package."""

import importlib.util
import json
import os
import sys

from determined.exec import _task_service


def main() -> int:
    if importlib.util.find_spec("tensorboard") is None:
        print(
            "tensorboard: the python package 'tensorboard' is not installed where this task runs "
            f"(interpreter {sys.executable}); install it there to use det tensorboard",
            file=sys.stderr,
        )
        return 1
    task_id = os.environ["DET_TASK_ID"]
    exp_ids = json.loads(os.environ.get("DET_TENSORBOARD_EXPERIMENT_IDS", "[]"))
    trial_ids = json.loads(os.environ.get("DET_TENSORBOARD_TRIAL_IDS", "[]"))
    # Event files live under the checkpoint storage's tensorboard path; the shared_fs root the
    # master passes (DET_TENSORBOARD_ROOT) or the conventional one.
    root = os.environ.get("DET_TENSORBOARD_ROOT", "/tmp/determined-tensorboard")
    dirs = [f"exp{e}:{os.path.join(root, 'experiment', str(e))}" for e in exp_ids]
    dirs += [f"trial{t}:{os.path.join(root, 'trial', str(t))}" for t in trial_ids]
    port = _task_service.free_port()
    argv = [
        sys.executable,
        "-m",
        "tensorboard.main",
        "--host=127.0.0.1",
        f"--port={port}",
        f"--path_prefix=/proxy/{task_id}",
        "--logdir_spec=" + ",".join(dirs),
    ]
    return _task_service.run_service(argv, port)


if __name__ == "__main__":
    sys.exit(main())
