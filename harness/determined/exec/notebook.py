"""A notebook task: Jupyter (Debian's python3-notebook) on a free loopback port, with the
master's proxy path as its base URL and the task's token."""

import os
import shutil
import sys

from determined.exec import _task_service


def main() -> int:
    task_id = os.environ["DET_TASK_ID"]
    token = os.environ.get("DET_NOTEBOOK_TOKEN", "")
    jupyter = shutil.which("jupyter-notebook")
    if jupyter is None:
        print(
            "notebook: jupyter-notebook is not installed where this task runs "
            "(Debian package python3-notebook / jupyter-notebook)",
            file=sys.stderr,
        )
        return 1
    port = _task_service.free_port()
    argv = [
        sys.executable,
        "-m",
        "notebook",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--NotebookApp.base_url=/proxy/{task_id}/",
        f"--NotebookApp.token={token}",
        "--NotebookApp.password=",
        "--NotebookApp.allow_origin=*",
        f"--notebook-dir={os.getcwd()}",
    ]
    if os.geteuid() == 0:
        argv.append("--allow-root")
    env = dict(os.environ)
    # Jupyter's runtime files stay in the task's work dir.
    env.setdefault("JUPYTER_RUNTIME_DIR", os.path.join(os.getcwd(), ".jupyter-runtime"))
    return _task_service.run_service(argv, port, env)


if __name__ == "__main__":
    sys.exit(main())
