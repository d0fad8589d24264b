"""``python -m determined.launch.wrap_rank RANK [--no-redirect-stdio] -- cmd...``

Runs ``cmd`` and prefixes each line of its stdout/stderr with ``[rank=RANK] `` so the agent can
attribute log lines to a rank. RANK is a number or the name of an environment variable holding
one. Exits with the child's exit code (128+N when the child is killed by signal N).
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
from typing import BinaryIO, List, Optional

_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGWINCH")


def _resolve_rank(rank: str) -> str:
    if rank.isdigit():
        return rank
    value = os.environ.get(rank)
    if value is None:
        raise ValueError(f"rank {rank!r} is neither a number nor the name of a set environment variable")
    value = value.strip()
    if not value.isdigit():
        raise ValueError(f"environment variable {rank}={value!r} is not a rank number")
    return value


def _pump(src: BinaryIO, dst: BinaryIO, prefix: bytes) -> None:
    for line in iter(src.readline, b""):
        dst.write(prefix + line)
        if not line.endswith(b"\n"):
            dst.write(b"\n")
        dst.flush()
    src.close()


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m determined.launch.wrap_rank",
        usage="%(prog)s RANK [--no-redirect-stdio] -- CMD [ARG...]",
    )
    parser.add_argument("rank", help="a rank number or the name of an env var holding it")
    parser.add_argument("--no-redirect-stdio", action="store_true", help="do not prefix output")
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    cmd = args.cmd
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        parser.error("no command given (put it after --)")
    try:
        rank = _resolve_rank(args.rank)
    except ValueError as e:
        parser.error(str(e))

    if args.no_redirect_stdio:
        proc = subprocess.Popen(cmd)
        pumps: List[threading.Thread] = []
    else:
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            print(f"[rank={rank}] wrap_rank: cannot run {cmd[0]!r}: {e}", file=sys.stderr, flush=True)
            return 127
        prefix = f"[rank={rank}] ".encode()
        pumps = [
            threading.Thread(target=_pump, args=(proc.stdout, sys.stdout.buffer, prefix), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, sys.stderr.buffer, prefix), daemon=True),
        ]
        for t in pumps:
            t.start()

    def forward(signum: int, _frame: object) -> None:
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass

    for name in _FORWARDED:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, forward)

    rc = proc.wait()
    for t in pumps:
        t.join()
    if rc < 0:
        rc = 128 - rc
    return rc


if __name__ == "__main__":
    sys.exit(main())
