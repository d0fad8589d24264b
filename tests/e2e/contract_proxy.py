"""A recording HTTP proxy in front of a master: clients (`det`, the Python SDK) talk to it, it
forwards each request to the master, answers with the master's answer, and keeps every
exchange for api/contract_check.py to check against api/openapi.yaml."""

import http.client
import http.server
import json
import pathlib
import sys
import threading
import urllib.parse
from typing import Any, List, Optional

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "api"))

from contract_check import Exchange  # noqa: E402

# Hop-by-hop headers, not forwarded (the proxy answers with a Content-Length of its own).
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-authorization", "proxy-authenticate", "content-length", "host"}
_TEXT_TYPES = ("application/json", "application/x-ndjson", "text/")


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


class RecordingProxy:
    def __init__(self, target_url: str) -> None:
        parsed = urllib.parse.urlsplit(target_url)
        self.target_host = parsed.hostname
        self.target_port = parsed.port
        self.exchanges: List[Exchange] = []
        self.lock = threading.Lock()
        self._server: Optional[_Server] = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "RecordingProxy":
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn = http.client.HTTPConnection(proxy.target_host, proxy.target_port,
                                                  timeout=300)
                try:
                    conn.request(self.command, self.path, body=raw or None, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                    status, resp_headers = resp.status, resp.getheaders()
                finally:
                    conn.close()
                proxy._record(self.command, self.path, raw, self.headers.get("Content-Type", ""),
                              status, dict((k.lower(), v) for k, v in resp_headers), data)
                self.send_response(status)
                for k, v in resp_headers:
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        self._server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _record(self, method: str, path: str, raw: bytes, req_type: str, status: int,
                headers: dict, data: bytes) -> None:
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = raw.decode(errors="replace")
        ctype = headers.get("content-type", "")
        text = data.decode(errors="replace") if ctype.startswith(_TEXT_TYPES) else ""
        with self.lock:
            self.exchanges.append(Exchange(method, path, body, status, ctype, text,
                                           req_type or "application/json"))

    def take(self) -> List[Exchange]:
        """The exchanges so far, forgetting them."""
        with self.lock:
            out, self.exchanges = self.exchanges, []
        return out
