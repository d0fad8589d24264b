"""``python3 -m determined.launch.torch_distributed [[TORCH_OVERRIDES...] --] (--trial TRIAL)|(SCRIPT...)``

Starts one worker per slot itself (Debian's torch.distributed.run is broken on Python 3.11),
each wrapped in ``determined.launch.wrap_rank``, with the torch.distributed environment:
RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, GROUP_RANK,
CROSS_RANK, CROSS_SIZE, DET_CHIEF_IP and INTER_TRAIN_PROCESS_COMM_PORT_1 (the port of
DistributedContext's chief). If any worker exits non-zero the others are terminated and the
launcher exits with that code; it exits 0 when all workers do.

Slots per node: --nproc_per_node, else the length of DET_SLOT_IDS (JSON list), else 1.
Nodes (multi-host): DET_CONTAINER_ADDRS (JSON list of node addresses, the chief first) and
DET_CONTAINER_RANK (this node's index), or --nnodes/--node_rank/--master_addr overrides; the
chief address is the first address (or DET_CHIEF_IP when set).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

USAGE = "usage: python3 -m determined.launch.torch_distributed [[TORCH_OVERRIDES...] --] (--trial TRIAL)|(SCRIPT...)"
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")
KILL_GRACE_SECONDS = 10.0


def split_args(argv: List[str]) -> Tuple[List[str], List[str]]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return [], argv


def parse_overrides(overrides: List[str]) -> Dict[str, str]:
    """``--key=value`` / ``--key value`` / ``--flag`` torch.distributed.run arguments."""
    out: Dict[str, str] = {}
    i = 0
    while i < len(overrides):
        arg = overrides[i]
        if not arg.startswith("-"):
            raise ValueError(f"unexpected override argument {arg!r} (overrides must end with --)")
        key = arg.lstrip("-").replace("-", "_")
        if "=" in key:
            key, value = key.split("=", 1)
        elif i + 1 < len(overrides) and not overrides[i + 1].startswith("-"):
            value = overrides[i + 1]
            i += 1
        else:
            value = "true"
        out[key] = value
        i += 1
    return out


def worker_command(rest: List[str], python: str) -> List[str]:
    if not rest:
        raise ValueError("nothing to launch: give --trial TRIAL or a script")
    if rest[0] == "--trial":
        if len(rest) != 2:
            raise ValueError("--trial takes exactly one argument, module:Class")
        return [python, "-m", "determined.exec.harness", rest[1]]
    if rest[0].endswith(".py"):
        return [python] + rest
    return list(rest)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _slots_from_env(env: Optional[Dict[str, str]] = None) -> Optional[int]:
    raw = (os.environ if env is None else env).get("DET_SLOT_IDS")
    if not raw:
        return None
    try:
        ids = json.loads(raw)
    except json.JSONDecodeError:
        ids = [x for x in raw.strip("[]").split(",") if x.strip()]
    return max(1, len(ids))


def build_worker_envs(opts: Dict[str, str], base: Dict[str, str]) -> List[Dict[str, str]]:
    nproc_raw = opts.get("nproc_per_node")
    if nproc_raw not in (None, "auto", "gpu", "cpu"):
        nproc = int(nproc_raw)  # type: ignore[arg-type]
    else:
        nproc = _slots_from_env(base) or 1
    addrs: List[str] = []
    if base.get("DET_CONTAINER_ADDRS"):
        addrs = [str(a) for a in json.loads(base["DET_CONTAINER_ADDRS"])]
    nnodes = int(opts.get("nnodes", len(addrs) or 1))
    node_rank = int(opts.get("node_rank", base.get("DET_CONTAINER_RANK", "0")))
    master_addr = opts.get("master_addr")
    master_port = opts.get("master_port")
    if "rdzv_endpoint" in opts:
        host, _, port = opts["rdzv_endpoint"].rpartition(":")
        master_addr = master_addr or host
        master_port = master_port or port
    chief = base.get("DET_CHIEF_IP") or master_addr or (addrs[0] if addrs else "127.0.0.1")
    master_addr = master_addr or chief
    if nnodes > 1:
        master_port = master_port or base.get("C10D_PORT", "29400")
        comm_port = base.get("INTER_TRAIN_PROCESS_COMM_PORT_1", "12360")
    else:
        master_port = master_port or str(_free_port())
        comm_port = base.get("INTER_TRAIN_PROCESS_COMM_PORT_1") or str(_free_port())
    envs = []
    for local_rank in range(nproc):
        env = dict(base)
        env.update(
            RANK=str(node_rank * nproc + local_rank),
            WORLD_SIZE=str(nnodes * nproc),
            LOCAL_RANK=str(local_rank),
            LOCAL_WORLD_SIZE=str(nproc),
            GROUP_RANK=str(node_rank),
            GROUP_WORLD_SIZE=str(nnodes),
            CROSS_RANK=str(node_rank),
            CROSS_SIZE=str(nnodes),
            MASTER_ADDR=master_addr,
            MASTER_PORT=str(master_port),
            DET_CHIEF_IP=chief,
            INTER_TRAIN_PROCESS_COMM_PORT_1=str(comm_port),
            TORCHELASTIC_RUN_ID=base.get("DET_TRIAL_ID", "none"),
        )
        envs.append(env)
    return envs


def _terminate(procs: List[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            try:
                p.terminate()
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def launch(cmd: List[str], envs: List[Dict[str, str]], python: str) -> int:
    procs: List[subprocess.Popen] = []
    for env in envs:
        wrapped = [python, "-m", "determined.launch.wrap_rank", env["RANK"], "--"] + cmd
        procs.append(subprocess.Popen(wrapped, env=env))
    by_pid = {p.pid: p for p in procs}

    def forward(signum: int, _frame: object) -> None:
        for p in procs:
            if p.poll() is None:
                try:
                    p.send_signal(signum)
                except ProcessLookupError:
                    pass

    for name in _FORWARDED:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, forward)

    remaining = set(by_pid)
    while remaining:
        try:
            pid, status = os.waitpid(-1, 0)  # blocks until any worker exits
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid not in remaining:
            continue
        remaining.discard(pid)
        proc = by_pid[pid]
        proc.returncode = os.waitstatus_to_exitcode(status)
        rc = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        if rc != 0:
            print(f"determined.launch.torch_distributed: worker (pid {pid}) exited with code {rc}; "
                  "terminating the other workers", file=sys.stderr, flush=True)
            _terminate([by_pid[q] for q in remaining])
            return rc
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        print(__doc__)
        return 0
    overrides, rest = split_args(argv)
    python = os.environ.get("DET_PYTHON_EXECUTABLE") or sys.executable
    try:
        opts = parse_overrides(overrides)
        cmd = worker_command(rest, python)
        envs = build_worker_envs(opts, dict(os.environ))
    except (ValueError, json.JSONDecodeError) as e:
        print(f"{USAGE}\nerror: {e}", file=sys.stderr)
        return 2
    return launch(cmd, envs, python)


if __name__ == "__main__":
    sys.exit(main())
