#!/usr/bin/env python3
"""A tiny stand-in for determined-master, for manual smoke tests of `det` (not used by CTest).

Usage: python3 cli/testdata/fake_master.py PORT
Serves the few routes of api/README.md that `det` calls, with blank-password users
`determined` and `admin`, one agent, and experiments that get one trial with canned logs.
"""
import base64
import hashlib
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SALT = "GubPEmmotfiK9TMD6Zdw"
PASSWORDS = {"determined": "", "admin": ""}
TOKENS = {}
EXPERIMENTS = {}
NOW = "2024-01-02T03:04:05.123456Z"


def err(code, reason, msg):
    return {"error": {"code": code, "reason": reason, "error": msg}}


def trial(exp):
    return {"id": exp["id"], "experimentId": exp["id"], "state": "STATE_COMPLETED",
            "hparams": {"lr": 0.1, "layers": 2}, "restarts": 0, "startTime": NOW,
            "endTime": NOW, "totalBatchesProcessed": 200}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def user(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return None, (401, err(16, "Unauthenticated", "token missing"))
        tok = auth[len("Bearer "):]
        if tok not in TOKENS:
            return None, (401, err(16, "Unauthenticated", "invalid credentials"))
        return TOKENS[tok], None

    def body(self):
        n = int(self.headers.get("Content-Length", "0") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self):
        url = urlparse(self.path)
        q = parse_qs(url.query)
        p = url.path
        if p in ("/info", "/api/v1/master"):
            return self.send(200, {"version": "0.38.1", "masterId": "m1", "clusterId": "c1",
                                   "clusterName": "fake"})
        user, e = self.user()
        if e:
            return self.send(*e)
        if p == "/api/v1/me":
            return self.send(200, {"user": {"id": 1, "username": user}})
        if p == "/api/v1/agents":
            return self.send(200, {"agents": [{
                "id": "agent-1", "resourcePool": "default", "registeredTime": NOW,
                "slots": {"0": {"id": "0", "enabled": True, "container": None}},
                "enabled": True, "hostname": "localhost", "connected": True}]})
        if p == "/api/v1/experiments":
            exps = sorted(EXPERIMENTS.values(), key=lambda e: e["id"])
            off = int(q.get("offset", ["0"])[0])
            lim = int(q.get("limit", ["100"])[0])
            page = exps[off:off + lim]
            return self.send(200, {"experiments": page, "pagination": {
                "offset": off, "limit": lim, "startIndex": off, "endIndex": off + len(page),
                "total": len(exps)}})
        parts = p.strip("/").split("/")
        if len(parts) >= 4 and parts[2] == "experiments":
            exp = EXPERIMENTS.get(int(parts[3]))
            if exp is None:
                return self.send(404, err(5, "NotFound", f"experiment not found: {parts[3]}"))
            if len(parts) == 4:
                return self.send(200, {"experiment": exp, "jobSummary": None})
            if parts[4] == "trials":
                trials = [trial(exp)] if exp["state"] != "STATE_PAUSED" else []
                return self.send(200, {"trials": trials, "pagination": {
                    "offset": 0, "limit": 1000, "startIndex": 0, "endIndex": len(trials),
                    "total": len(trials)}})
        if len(parts) >= 4 and parts[2] == "trials":
            tid = int(parts[3])
            exp = EXPERIMENTS.get(tid)
            if exp is None:
                return self.send(404, err(5, "NotFound", f"trial not found: {tid}"))
            if len(parts) == 4:
                return self.send(200, {"trial": trial(exp)})
            if parts[4] == "workloads":
                wls = [
                    {"training": {"totalBatches": 100, "endTime": NOW,
                                  "metrics": {"avgMetrics": {"loss": 0.5}}}},
                    {"validation": {"totalBatches": 100, "endTime": NOW,
                                    "metrics": {"avgMetrics": {"accuracy": 0.91234567}}}},
                    {"checkpoint": {"uuid": "abc-123", "totalBatches": 100,
                                    "state": "STATE_COMPLETED", "endTime": NOW}},
                    {"training": {"totalBatches": 200, "endTime": NOW,
                                  "metrics": {"avgMetrics": {"loss": 0.25}}}},
                ]
                return self.send(200, {"workloads": wls, "pagination": {
                    "offset": 0, "limit": 1000, "startIndex": 0, "endIndex": 4, "total": 4}})
            if parts[4] == "logs":
                lines = [f"[{NOW}] abcdef12 || INFO: line {i}\n" for i in range(1, 6)]
                entries = [{"id": i + 1, "trialId": tid, "message": m} for i, m in enumerate(lines)]
                if q.get("orderBy") == ["ORDER_BY_DESC"]:
                    entries.reverse()
                if "limit" in q:
                    entries = entries[:int(q["limit"][0])]
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for ent in entries:
                    chunk = (json.dumps({"result": ent}) + "\n").encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    if q.get("follow") == ["true"]:
                        time.sleep(0.05)
                self.wfile.write(b"0\r\n\r\n")
                return
        return self.send(404, err(5, "NotFound", f"no route {p}"))

    def do_POST(self):
        p = urlparse(self.path).path
        body = self.body()
        if p == "/api/v1/auth/login":
            u = body.get("username")
            pw = body.get("password", "")
            if u not in PASSWORDS:
                return self.send(401, err(16, "Unauthenticated", "invalid credentials"))
            want = "" if PASSWORDS[u] == "" else hashlib.sha512((SALT + PASSWORDS[u]).encode()).hexdigest()
            if pw != want:
                return self.send(401, err(16, "Unauthenticated", "invalid credentials"))
            tok = "tok-%s-%d" % (u, len(TOKENS))
            TOKENS[tok] = u
            return self.send(200, {"token": tok, "user": {"id": 1, "username": u}})
        user, e = self.user()
        if e:
            return self.send(*e)
        if p == "/api/v1/auth/logout":
            TOKENS.pop(self.headers["Authorization"][7:], None)
            return self.send(200, {})
        if p == "/api/v1/experiments":
            total = sum(len(base64.b64decode(f["content"])) for f in body["modelDefinition"])
            eid = len(EXPERIMENTS) + 1
            EXPERIMENTS[eid] = {
                "id": eid, "name": "exp-%d" % eid, "description": "", "labels": ["b", "a"],
                "state": "STATE_ACTIVE" if body.get("activate", True) else "STATE_PAUSED",
                "archived": False, "progress": 0.5, "startTime": NOW, "endTime": None,
                "username": user, "resourcePool": "default", "parentId": None,
                "numTrials": 1, "config": {}, "originalConfig": body["config"],
                "files": [f["path"] for f in body["modelDefinition"]], "bytes": total}
            sys.stderr.write("config received:\n%s\n" % body["config"])
            return self.send(200, {"experiment": EXPERIMENTS[eid], "config": {}, "warnings": []})
        parts = p.strip("/").split("/")
        if len(parts) == 5 and parts[2] == "experiments":
            return self.send(200, {})
        return self.send(404, err(5, "NotFound", f"no route {p}"))


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
