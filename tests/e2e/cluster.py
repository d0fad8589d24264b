"""A local cluster for end-to-end tests: real determined-master, determined-agent and det
processes on loopback, started with `det deploy local cluster-up` in a temporary directory."""

import contextlib
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Iterator, List, Optional

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("DET_BUILD_DIR", REPO / "build"))
BIN = BUILD / "bin"
PYTHON = "/usr/bin/python3"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    """Polls `predicate` until it returns a truthy value or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class Cluster:
    def __init__(self, agents: int = 1, slots: int = 2, up_args: tuple = ()) -> None:
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-e2e-"))
        self.data_dir = self.tmp / "data"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.agents = agents
        self.slots = slots
        self.up_args = tuple(up_args)  # more cluster-up flags, e.g. ("--db", "postgres")
        self.env = dict(os.environ)
        self.env.update(
            {
                "DET_MASTER": self.url,
                "XDG_CONFIG_HOME": str(self.tmp / "config"),
                "XDG_DATA_HOME": str(self.tmp / "xdg-data"),
                "PYTHONPATH": str(REPO / "harness"),
            }
        )
        self.env.pop("DET_USER", None)
        self.env.pop("DET_USER_TOKEN", None)
        self._token: Optional[str] = None

    # Processes -----------------------------------------------------------------------------
    def det(self, *args: str, check: bool = True, timeout: float = 300,
            cwd: Optional[str] = None) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [str(BIN / "det"), *args], env=self.env, cwd=cwd, capture_output=True, text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"det {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\n"
                f"stderr:\n{proc.stderr}"
            )
        return proc

    def _set_port(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env["DET_MASTER"] = self.url

    def master_pid(self) -> Optional[int]:
        try:
            return int((self.data_dir / "master.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def master_running(self) -> bool:
        """Whether the master recorded in master.pid is alive (not a zombie)."""
        pid = self.master_pid()
        if pid is None:
            return False
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")

    def up(self, attempts: int = 3) -> None:
        """cluster-up on a free port. Tests run in parallel (pytest-xdist), so another worker
        may take the port between free_port() and the master's bind: then the master exits
        with "Address already in use" (or another worker's master answers on it and ours is
        gone), and this retries on a new port."""
        for attempt in range(attempts):
            proc = self.det(
                "deploy", "local", "cluster-up", "--master-port", str(self.port), "--agents",
                str(self.agents), "--slots-per-agent", str(self.slots), "--data-dir",
                str(self.data_dir), *self.up_args, timeout=120, check=False,
            )
            if proc.returncode == 0 and self.master_running():
                return
            log = self.data_dir / "master.log"
            text = proc.stdout + proc.stderr + (log.read_text(errors="replace") if log.exists()
                                                else "")
            port_taken = "already in use" in text or proc.returncode == 0
            if not port_taken or attempt == attempts - 1:
                raise AssertionError(
                    f"cluster-up on port {self.port} exited {proc.returncode}\n"
                    f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
            self.down()
            if log.exists():
                log.unlink()
            self._set_port(free_port())

    def master_up(self, *extra: str, timeout: float = 60) -> None:
        """Starts this cluster's master again (same port and data dir, `extra` passed to
        master-up), forgets the old session token and waits until /info answers."""
        self.det("deploy", "local", "master-up", "--master-port", str(self.port), "--data-dir",
                 str(self.data_dir), *extra, timeout=max(120, timeout))
        self._token = None

        def answers():
            try:
                return self.request("GET", "/info", auth=False)
            except OSError:
                return None

        wait_for(answers, timeout, "the master to come back")

    def down(self) -> None:
        self.det("deploy", "local", "cluster-down", "--data-dir", str(self.data_dir), check=False,
                 timeout=60)

    def cleanup(self) -> None:
        self.down()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # REST ----------------------------------------------------------------------------------
    def token(self) -> str:
        if self._token is None:
            body = self.request("POST", "/api/v1/auth/login",
                                {"username": "determined", "password": "", "isHashed": True},
                                auth=False)
            self._token = body["token"]
        return self._token

    def request(self, method: str, path: str, body: Any = None, auth: bool = True,
                raw: bool = False) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", f"Bearer {self.token()}")
        with urllib.request.urlopen(req, timeout=120) as resp:
            text = resp.read().decode()
        return text if raw else json.loads(text)

    def request_status(self, method: str, path: str, body: Any = None,
                       headers: Optional[Dict[str, str]] = None) -> (int, Any):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, json.loads(resp.read().decode() or "{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read().decode() or "{}")

    # Helpers -------------------------------------------------------------------------------
    def create(self, config: pathlib.Path, context: pathlib.Path, *extra: str) -> int:
        out = self.det("experiment", "create", str(config), str(context), *extra).stdout
        m = re.search(r"Created experiment (\d+)", out)
        assert m, f"no 'Created experiment N' in output:\n{out}"
        return int(m.group(1))

    def experiment(self, exp_id: int) -> Dict[str, Any]:
        return self.request("GET", f"/api/v1/experiments/{exp_id}")["experiment"]

    def trials(self, exp_id: int) -> List[Dict[str, Any]]:
        return self.request("GET", f"/api/v1/experiments/{exp_id}/trials")["trials"]

    def wait_state(self, exp_id: int, state: str, timeout: float = 240) -> Dict[str, Any]:
        terminal = {"STATE_COMPLETED", "STATE_CANCELED", "STATE_ERROR"}

        def check():
            e = self.experiment(exp_id)
            if e["state"] == state:
                return e
            if e["state"] in terminal:
                logs = "\n".join(
                    self.det("trial", "logs", str(t["id"]), check=False).stdout
                    for t in self.trials(exp_id)
                )
                raise AssertionError(f"experiment {exp_id} ended {e['state']}, wanted {state}\n{logs}")
            return None

        return wait_for(check, timeout, f"experiment {exp_id} to reach {state}", interval=0.5)

    def metrics(self, trial_id: int, group: str) -> List[Dict[str, Any]]:
        return self.request("GET", f"/api/v1/trials/{trial_id}/metrics?group={group}")["metrics"]


@contextlib.contextmanager
def brought_up(cluster: Cluster) -> Iterator[Cluster]:
    """Brings `cluster` up for the `with` block and tears it down (processes and files) after."""
    cluster.up()
    try:
        yield cluster
    finally:
        cluster.cleanup()
