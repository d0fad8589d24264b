"""``python3 -m determined.exec.zygote``: the agent's warm Python.

The agent starts one per host, with the environment its trials get and a control socket on fd 3
(``SOCK_SEQPACKET``, one JSON message per packet). It imports ``determined`` and the modules named
by ``--preload`` once, says ``{"op": "ready"}``, then for each ``{"op": "spawn"}`` request (sent
with the trial's stdin, stdout and stderr as ``SCM_RIGHTS``) forks a child that becomes what
``python3 script.py ...`` or ``python3 -m module ...`` would have been: its own session and
process group, the trial's stdio, working directory, environment, ``sys.path``, ``sys.argv`` and
``__main__``. The zygote answers ``{"op": "spawned", "pid": P}``, and ``{"op": "exited", "pid": P,
"status": S}`` (a raw wait status) once the child exited and what was left of its process group
was killed, which is what the agent does for processes it starts itself.

The fork that serves a spawn is made ahead of time: the zygote keeps one spare child, forked
and set up as far as nothing trial-specific goes (its own session, ``PR_SET_PDEATHSIG``, the
zygote's memory pages already copied), blocked on a socket pair until a spawn hands it the
request and the trial's stdio. Then the zygote forks the next spare, off the trial's critical
path. A spare that is gone (killed) is replaced by a plain fork for that spawn.

A child that finds it cannot match a cold start (a module the zygote imported would resolve to a
different file on the trial's ``sys.path``, or the script is not a plain file) execs the
interpreter cold instead, keeping its pid, process group and stdio. Children die with the zygote
(``PR_SET_PDEATHSIG``); the zygote exits once the agent closed the socket and its children ended.
Everything it prints goes to the agent's log.
"""

import argparse
import ctypes
import gc
import importlib
import importlib.machinery
import json
import os
import runpy
import selectors
import signal
import socket
import subprocess
import sys
import types
from typing import Any, Dict, List, Optional, Set, Tuple

CONTROL_FD = 3
MAX_MESSAGE = 1 << 20
_PR_SET_PDEATHSIG = 1
_THIS_FILE = os.path.abspath(__file__)


class _Job:
    """What a forked child runs, handed from the serve loop up to the top level."""

    def __init__(self, request: Dict[str, Any]) -> None:
        self.executable: str = request["executable"]
        self.argv: List[str] = list(request["argv"])  # the cold command line, python first
        self.module: Optional[str] = request.get("module")
        self.script: Optional[str] = request.get("script")
        self.args: List[str] = list(request.get("args") or [])
        self.env: Dict[str, str] = dict(request["env"])
        self.cwd: str = request["cwd"]


class _Zygote:
    def __init__(self, preload: List[str]) -> None:
        self.sock = socket.socket(fileno=CONTROL_FD)
        self.sel = selectors.DefaultSelector()
        self.children: Dict[int, int] = {}  # pidfd -> pid
        self.spare: Optional[Tuple[int, socket.socket]] = None  # (pid, our end of its socket)
        self.base_modules = _bare_interpreter_modules()
        self.base_path = _path_without_pythonpath(sys.path[1:], os.environ.get("PYTHONPATH", ""))
        self.loaded, self.failed = [], {}
        for name in preload:
            try:
                importlib.import_module(name)
                self.loaded.append(name)
            except BaseException as e:  # a missing optional module must not stop the zygote
                self.failed[name] = f"{type(e).__name__}: {e}"
                print(f"zygote: cannot preload {name}: {self.failed[name]}", file=sys.stderr)

    def send(self, msg: Dict[str, Any]) -> None:
        try:
            self.sock.send(json.dumps(msg).encode())
        except OSError:
            pass  # the agent is gone (e.g. kill -9): its children keep running until they end

    def serve(self) -> Optional[_Job]:
        """Answers requests until the agent goes away; returns only in a forked child."""
        self.send({"op": "ready", "pid": os.getpid(), "preloaded": self.loaded,
                   "failed": self.failed})
        self.sel.register(self.sock, selectors.EVENT_READ, None)
        job = self._fork_spare()
        if job is not None:
            return job
        open_socket = True
        while open_socket or self.children:
            for key, _ in self.sel.select():
                if key.data is not None:
                    self._reap(key.fd, key.data)
                    continue
                try:
                    data, fds, _, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 8)
                except ConnectionResetError:
                    data, fds = b"", []
                if not data:
                    self.sel.unregister(self.sock)
                    open_socket = False
                    self._drop_spare()
                    continue
                job = self._spawn(json.loads(data), fds)
                if job is not None:
                    return job
        return None

    def _spawn(self, request: Dict[str, Any], fds: List[int]) -> Optional[_Job]:
        rid = request.get("id")
        if request.get("op") != "spawn" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            self.send({"op": "error", "id": rid, "message": "expected a spawn with 3 fds"})
            return None
        try:
            job = _Job(request)
        except (KeyError, TypeError) as e:
            for fd in fds:
                os.close(fd)
            self.send({"op": "error", "id": rid, "message": f"bad spawn request: {e}"})
            return None
        pid = self._hand_to_spare(request, fds)
        if pid is None:
            parent = os.getpid()
            pid = os.fork()
            if pid == 0:
                self._in_child(job, lambda: self._become_child(job, fds, parent))
                return job
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)  # the child is ours until we reap it: this cannot miss
        self.children[pidfd] = pid
        self.sel.register(pidfd, selectors.EVENT_READ, pid)
        self.send({"op": "spawned", "id": rid, "pid": pid})
        return self._fork_spare()  # the next spawn's child, made while this trial starts

    @staticmethod
    def _in_child(job: _Job, setup: Any) -> None:
        try:
            setup()
        except BaseException as e:
            try:
                os.write(2, f"warm start failed: {type(e).__name__}: {e}\n".encode())
                _exec_cold(job)
            finally:
                os._exit(127)  # never back into the serve loop

    def _hand_to_spare(self, request: Dict[str, Any], fds: List[int]) -> Optional[int]:
        """Gives the spawn to the spare child; its pid, or None when there is none (alive)."""
        if self.spare is None:
            return None
        pid, ours = self.spare
        self.spare = None
        try:
            socket.send_fds(ours, [json.dumps(request).encode()], fds)
            return pid
        except OSError:
            _reap_quietly(pid)  # it died waiting (e.g. killed): fork this one as before
            return None
        finally:
            ours.close()

    def _fork_spare(self) -> Optional[_Job]:
        """Forks the spare child; returns only in the spare, with the job it was handed."""
        if self.spare is not None:
            return None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError as e:
            ours.close()
            theirs.close()
            print(f"zygote: cannot fork a spare child: {e}", file=sys.stderr)
            return None
        if pid == 0:
            ours.close()
            return self._spare(theirs, parent)
        theirs.close()
        self.spare = (pid, ours)
        return None

    def _spare(self, sock: socket.socket, parent: int) -> _Job:
        """In the spare child: everything that does not depend on the trial, then wait for it."""
        try:
            self._detach(parent)
            _prefault()
            data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 8)
            if not data or len(fds) != 3:
                os._exit(0)  # the zygote is ending (or sent nothing usable): no trial ran here
            sock.close()
            job = _Job(json.loads(data))  # the zygote parsed it already: this cannot fail
        except BaseException:
            os._exit(127)  # never back into the serve loop
        self._in_child(job, lambda: self._set_up(job, fds))
        return job

    def _drop_spare(self) -> None:
        if self.spare is not None:
            pid, ours = self.spare
            self.spare = None
            ours.close()  # it reads end-of-file and exits
            _reap_quietly(pid)

    def _reap(self, pidfd: int, pid: int) -> None:
        self.sel.unregister(pidfd)
        os.close(pidfd)
        del self.children[pidfd]
        # Kill what is left of the group before reaping: the leader's pid, the group id, stays
        # reserved until then, so the signal cannot reach a new process.
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _, status = os.waitpid(pid, 0)
        self.send({"op": "exited", "pid": pid, "status": status})

    def _become_child(self, job: _Job, fds: List[int], parent: int) -> None:
        self._detach(parent)
        self._set_up(job, fds)

    def _detach(self, parent: int) -> None:
        """A fork's own session, death with the zygote, none of the zygote's descriptors."""
        os.setsid()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the zygote died before prctl took effect
            os._exit(128 + signal.SIGKILL)
        for pidfd in list(self.children):
            os.close(pidfd)
        self.children.clear()
        if self.spare is not None:
            self.spare[1].close()
            self.spare = None
        self.sel.close()
        self.sock.close()

    def _set_up(self, job: _Job, fds: List[int]) -> None:
        """Becomes the trial: its stdio, working directory, environment, sys.path and argv."""
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(job.cwd)
        coerced_ctype = os.environ.get("LC_CTYPE")
        os.environ.clear()
        os.environ.update(job.env)
        # What a cold start adds: the agent's /bin/sh wrapper sets PWD, and the interpreter sets
        # LC_CTYPE when it coerces a C locale (the zygote did, for the same locale variables).
        os.environ["PWD"] = os.getcwd()
        if coerced_ctype is not None and "LC_CTYPE" not in job.env:
            os.environ["LC_CTYPE"] = coerced_ctype
        if job.module is not None:
            path0 = os.getcwd()
        elif job.script is not None and os.path.isfile(job.script):
            path0 = os.path.dirname(os.path.realpath(job.script))
        else:
            _exec_cold(job)  # a directory, a zip or a missing file: let python say
        new_path = [path0] + _dedup(_pythonpath_entries(job.env.get("PYTHONPATH", "")) +
                                    self.base_path)
        shadowed = _shadowed_module(new_path, self.base_modules)
        if shadowed:
            os.write(2, f"warm start: {shadowed}; starting a fresh interpreter\n".encode())
            _exec_cold(job)
        sys.path[:] = new_path
        sys.argv = [job.script] + job.args if job.module is None else [job.module] + job.args
        sys.orig_argv = list(job.argv)
        sys.executable = job.executable
        if "numpy" in sys.modules:  # its global RNG was seeded once, in the zygote
            sys.modules["numpy"].random.seed()


def _reap_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _prefault() -> None:
    """Copies now, in the spare, the pages a trial's first steps would copy on write (reference
    counts of the zygote's objects): the cost moves off the trial's start. Python-visible state
    is unchanged (counts go up and back down; the frozen set is frozen again)."""
    gc.unfreeze()
    objects = gc.get_objects()
    del objects
    gc.freeze()


def _exec_cold(job: _Job) -> None:
    os.execve(job.executable, job.argv, job.env)


def _bare_interpreter_modules() -> Set[str]:
    """Top-level modules a cold `python3` has imported before it runs the trial's code."""
    out = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return {m.split(".")[0] for m in out.stdout.split()}


def _pythonpath_entries(value: str) -> List[str]:
    # As the interpreter: each entry made absolute (an empty one is the working directory).
    return [os.path.abspath(p) for p in value.split(os.pathsep)] if value else []


def _path_without_pythonpath(path: List[str], pythonpath: str) -> List[str]:
    own = set(_pythonpath_entries(pythonpath))
    return [p for p in path if p not in own]


def _dedup(path: List[str]) -> List[str]:
    seen: Set[str] = set()
    out = []
    for p in path:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


_MODULE_SUFFIXES = tuple(importlib.machinery.SOURCE_SUFFIXES +
                         importlib.machinery.BYTECODE_SUFFIXES +
                         importlib.machinery.EXTENSION_SUFFIXES)


def _importable_name(entry: str, name: str) -> Optional[str]:
    """The module name `entry/name` would be imported as, or None when no import finds it there.
    Only a module file or a regular package shadows: other files (a `random.yaml` beside
    train.py) are no module, and a directory without __init__ is a namespace portion, which a
    module found later on the path still wins over."""
    for suffix in _MODULE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    if "." not in name:
        package = os.path.join(entry, name)
        for suffix in _MODULE_SUFFIXES:
            if os.path.isfile(os.path.join(package, "__init__" + suffix)):
                return name
    return None


def _names_in(entry: str, cache: Dict[str, Set[str]]) -> Set[str]:
    if entry not in cache:
        names = set()
        try:
            for name in os.listdir(entry):
                module = _importable_name(entry, name)
                if module is not None:
                    names.add(module)
        except OSError:
            pass
        cache[entry] = names
    return cache[entry]


def _shadowed_module(path: List[str], base_modules: Set[str]) -> Optional[str]:
    """A module the zygote imported (beyond a bare interpreter's) that `path` would find
    somewhere else first, described; None when every one resolves to the file it came from."""
    cache: Dict[str, Set[str]] = {}
    for name, module in list(sys.modules.items()):
        if "." in name or name in base_modules or name in sys.builtin_module_names:
            continue
        origin = getattr(module, "__file__", None)
        if not origin:
            continue
        origin = os.path.abspath(origin)
        for entry in path:
            if origin.startswith(entry.rstrip("/") + "/"):
                break
            if name in _names_in(entry, cache):
                return f"{name!r} would come from {entry}, not {origin}"
    return None


def _run(job: _Job) -> int:
    """Runs the trial in this interpreter as `python3 script.py` / `python3 -m module` would;
    returns the exit status (or ends the process with SIGINT, as an uncaught
    KeyboardInterrupt does)."""
    try:
        if job.module is not None:
            sys.modules["__main__"] = types.ModuleType("__main__")
            sys.modules["__main__"].__dict__["__annotations__"] = {}
            runpy._run_module_as_main(job.module, alter_argv=True)  # what `python -m` calls
        else:
            path = os.path.abspath(job.script)
            main = types.ModuleType("__main__")
            main.__dict__.update({"__file__": path, "__cached__": None, "__annotations__": {},
                                  "__loader__": importlib.machinery.SourceFileLoader("__main__",
                                                                                      path)})
            sys.modules["__main__"] = main
            with open(path, "rb") as f:
                code = compile(f.read(), path, "exec")
            exec(code, main.__dict__)
        return 0
    except SystemExit as e:
        return _system_exit_status(e)
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in (_THIS_FILE, runpy.__file__):
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return -signal.SIGINT if isinstance(e, KeyboardInterrupt) else 1


def _system_exit_status(e: SystemExit) -> int:
    # As the interpreter: None is 0, an int is itself, anything else is printed and is 1.
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    try:
        print(e.code, file=sys.stderr)
    except Exception:
        pass
    return 1


def _finish(status: int, preloaded: Set[str]) -> None:
    """Ends the child as interpreter shutdown would, without tearing down what the zygote
    imported: tearing that down writes to every page shared with the zygote (copy-on-write),
    which cost more than the fork saved."""
    import atexit
    import gc
    import threading

    threading._shutdown()  # type: ignore  # joins non-daemon threads, as shutdown does first
    atexit._run_exitfuncs()
    # Objects the trial's own modules hold are finalized (files flushed, __del__ run) as module
    # teardown would.
    for name, module in list(sys.modules.items()):
        if name not in preloaded and module is not None and name not in sys.builtin_module_names:
            try:
                module.__dict__.clear()
            except Exception:
                pass
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = 120 if status == 0 else status  # what a failed flush at exit gives
    if status == -signal.SIGINT:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python3 -m determined.exec.zygote")
    parser.add_argument("--preload", default="determined",
                        help="comma-separated modules to import once (default: determined)")
    args = parser.parse_args()
    zygote = _Zygote([m for m in args.preload.split(",") if m])
    preloaded = set(sys.modules)
    gc.freeze()  # children's collections skip (and do not write to) what the zygote imported
    job = zygote.serve()
    if job is None:
        sys.exit(0)
    preloaded.discard("__main__")
    _finish(_run(job), preloaded)


if __name__ == "__main__":
    main()
