"""A star-shaped TCP transport for DistributedContext's collectives (standard library only).

The chief (rank 0) listens on (bind address, port); every other worker connects once, says
which rank it is, and keeps the connection. Messages are pickled objects behind an 8-byte
length. All collectives (global and *_local) go through the chief, so a job needs exactly one
reachable address: the chief's (DET_CHIEF_IP / MASTER_ADDR) and one port.
"""

import os
import pickle
import socket
import struct
import threading
import time
from typing import Any, Dict, List, Optional

_HDR = struct.Struct("!Q")


def _timeout() -> float:
    try:
        return float(os.environ.get("DET_DIST_TIMEOUT", "600"))
    except ValueError:
        return 600.0


def _send(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HDR.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("a distributed peer closed its connection (did another worker exit?)")
        buf += chunk
    return bytes(buf)


def _recv(sock: socket.socket) -> Any:
    (n,) = _HDR.unpack(_recv_exact(sock, _HDR.size))
    return pickle.loads(_recv_exact(sock, n))


class ChiefServer:
    """Accepts one connection from each of ranks 1..size-1."""

    def __init__(self, size: int, bind_addr: str, port: int) -> None:
        self._size = size
        self._conns: Dict[int, socket.socket] = {}
        self._cond = threading.Condition()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind((bind_addr, port))
        except OSError as e:
            self._listener.close()
            raise OSError(f"the chief cannot listen on {bind_addr}:{port} for the other workers: {e}") from e
        self._listener.listen(max(16, size))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="determined-dist-accept", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            try:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.settimeout(_timeout())
                rank = _recv(conn)
            except Exception:  # noqa: BLE001 - a stray connection
                conn.close()
                continue
            with self._cond:
                self._conns[int(rank)] = conn
                self._cond.notify_all()
            if len(self._conns) >= self._size - 1:
                return

    def conns(self) -> Dict[int, socket.socket]:
        deadline = time.monotonic() + _timeout()
        with self._cond:
            while len(self._conns) < self._size - 1:
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = sorted(set(range(1, self._size)) - set(self._conns))
                    raise TimeoutError(f"workers {missing} never connected to the chief on port {self.port}")
                self._cond.wait(min(left, 1.0))
            return self._conns

    def close(self) -> None:
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass
        for c in list(self._conns.values()):
            try:
                c.close()
            except OSError:
                pass


def connect_to_chief(rank: int, addr: str, port: int) -> socket.socket:
    deadline = time.monotonic() + _timeout()
    delay = 0.01
    while True:
        try:
            sock = socket.create_connection((addr, port), timeout=10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(_timeout())
            _send(sock, rank)
            return sock
        except OSError as e:
            if time.monotonic() > deadline:
                raise ConnectionError(f"worker {rank} could not reach the chief at {addr}:{port}: {e}") from e
            time.sleep(delay)  # retry backoff while the chief starts listening
            delay = min(delay * 2, 0.5)


class Transport:
    """Chief side: exchange(rank_values) semantics built from gather and per-rank sends."""

    def __init__(self, rank: int, size: int, chief_addr: str, port: int, bind_addr: str) -> None:
        self.rank = rank
        self.size = size
        self._server: Optional[ChiefServer] = None
        self._sock: Optional[socket.socket] = None
        if rank == 0:
            self._server = ChiefServer(size, bind_addr, port)
        else:
            self._sock = connect_to_chief(rank, chief_addr, port)

    # Chief: receive one object from every worker, in rank order (chief's own first).
    def chief_gather(self, own: Any) -> List[Any]:
        assert self._server is not None
        conns = self._server.conns()
        return [own] + [_recv(conns[r]) for r in range(1, self.size)]

    def chief_send(self, per_rank: List[Any]) -> Any:
        assert self._server is not None
        conns = self._server.conns()
        for r in range(1, self.size):
            _send(conns[r], per_rank[r])
        return per_rank[0]

    def worker_send(self, obj: Any) -> None:
        assert self._sock is not None
        _send(self._sock, obj)

    def worker_recv(self) -> Any:
        assert self._sock is not None
        return _recv(self._sock)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
