"""A local cluster for end-to-end tests: real determined-master, determined-agent and det
processes on loopback, started with `det deploy local cluster-up` in a temporary directory.

DET_E2E_DB=postgres runs every cluster's master on PostgreSQL: one server per test process
(a pytest-xdist worker), started on first use under a temp dir on a free loopback port and
stopped when the process exits, and a fresh database in it for each cluster."""

import atexit
import contextlib
import itertools
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


E2E_DB = os.environ.get("DET_E2E_DB", "sqlite")
if E2E_DB not in ("sqlite", "postgres"):
    raise ValueError(f"DET_E2E_DB must be 'sqlite' or 'postgres', not {E2E_DB!r}")
ON_POSTGRES = E2E_DB == "postgres"


class WorkerPostgres:
    """The PostgreSQL server of this test process (tools/postgres/det-postgres, no fsync: a
    test server), and a database per cluster in it."""

    def __init__(self) -> None:
        self.dir: Optional[pathlib.Path] = None
        self.url: Optional[str] = None  # postgres://determined@127.0.0.1:PORT/determined
        self._names = itertools.count(1)

    def _psql(self, sql: str) -> None:
        subprocess.run(["psql", self.url, "-qtAc", sql], check=True, capture_output=True,
                       text=True, timeout=120)

    def new_database(self) -> str:
        """Creates an empty database and returns its URL."""
        if self.url is None:
            self.dir = pathlib.Path(tempfile.mkdtemp(prefix="det-e2e-pg-"))
            proc = subprocess.run([str(BIN / "det-postgres"), "start", str(self.dir),
                                   "--no-fsync"], capture_output=True, text=True, timeout=180)
            if proc.returncode != 0:
                raise AssertionError(f"det-postgres start exited {proc.returncode}:\n"
                                     f"{proc.stdout}{proc.stderr}")
            self.url = proc.stdout.strip().splitlines()[-1]
            atexit.register(self.stop)
        name = f"det_e2e_{next(self._names)}"
        self._psql(f"CREATE DATABASE {name}")
        return self.url.rsplit("/", 1)[0] + "/" + name

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        # FORCE: connections of a master killed -9 may not be gone yet.
        subprocess.run(["psql", self.url, "-qtAc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"],
                       capture_output=True, timeout=120)

    def stop(self) -> None:
        if self.dir is not None:
            subprocess.run([str(BIN / "det-postgres"), "stop", str(self.dir)],
                           capture_output=True, timeout=120)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = self.url = None


WORKER_POSTGRES = WorkerPostgres()


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
    def __init__(self, agents: int = 1, slots: int = 2, up_args: tuple = (),
                 det_prefix: tuple = ()) -> None:
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="det-e2e-"))
        self.data_dir = self.tmp / "data"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.agents = agents
        self.slots = slots
        self.up_args = tuple(up_args)  # more cluster-up flags, e.g. ("--db", "postgres")
        self.det_prefix = tuple(det_prefix)  # runs det under it, e.g. ("runuser", "-u", "nobody", "--")
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
        self._db_url: Optional[str] = None  # DET_E2E_DB=postgres: this cluster's database

    def db_url(self) -> Optional[str]:
        """This cluster's PostgreSQL database (made on first use) when DET_E2E_DB=postgres,
        else None (SQLite under the data dir)."""
        if ON_POSTGRES and self._db_url is None:
            self._db_url = WORKER_POSTGRES.new_database()
        return self._db_url

    def master_db_args(self) -> List[str]:
        """The determined-master flags for this cluster's store (tests that start it directly)."""
        url = self.db_url()
        return ["--db", url] if url else []

    # Processes -----------------------------------------------------------------------------
    def det(self, *args: str, check: bool = True, timeout: float = 300,
            cwd: Optional[str] = None) -> subprocess.CompletedProcess:
        # Every master a test starts through det uses the suite's store, unless the test picks
        # one itself (test_postgres_store.py).
        if (ON_POSTGRES and args[:2] == ("deploy", "local")
                and args[2:3] in (("cluster-up",), ("master-up",)) and "--db" not in args):
            args = (*args, "--db", self.db_url())
        proc = subprocess.run(
            [*self.det_prefix, str(BIN / "det"), *args], env=self.env, cwd=cwd, capture_output=True, text=True,
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
        if self._db_url is not None:
            WORKER_POSTGRES.drop_database(self._db_url)
            self._db_url = None
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
