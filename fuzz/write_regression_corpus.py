#!/usr/bin/python3
"""Writes fuzz/corpus-router/: one router fuzz input per request shape that once broke the master
(issue #32), in router_fuzz.cc's input format (request line, headers, blank line, body; "@admin"
and "@user" stand for session tokens). make fuzz-smoke and make fuzz-router both run them, so a
regression is found on the first pass. The files are committed; rerun this after editing it.
Usage: write_regression_corpus.py [DIR]
"""
import json
import os
import sys

JSON = "content-type: application/json\n"
ADMIN = "authorization: Bearer @admin\n"
USER = "authorization: Bearer @user\n"


def request(method, target, headers="", body=""):
    return f"{method} {target}\n{headers}\n{body}"


def cases():
    deep = "[" * 60000 + "]" * 60000
    yield "login-nested-60000-levels", request("POST", "/api/v1/auth/login", JSON, deep)
    yield "login-nested-unclosed", request("POST", "/api/v1/auth/login", JSON,
                                           '{"username": ' + "[" * 20000)
    yield "login-huge-username", request(
        "POST", "/api/v1/auth/login", JSON,
        json.dumps({"username": "u" * 120000, "password": "p" * 1000}))
    yield "metadata-nested-objects", request(
        "POST", "/api/v1/checkpoints/x/metadata", ADMIN + JSON,
        '{"metadata": ' + '{"a": ' * 5000 + "1" + "}" * 5001)
    yield "experiment-config-deep-yaml", request(
        "POST", "/api/v1/experiments", ADMIN + JSON,
        json.dumps({"config": "- " * 900 + "x\n", "activate": False}))
    yield "template-self-alias-yaml", request(
        "POST", "/api/v1/templates/t", ADMIN + JSON,
        json.dumps({"name": "t", "config": "a: &a [x, *a]\n", "workspaceId": 1}))
    for method in ("GET", "DELETE"):
        yield f"experiment-id-nul-{method.lower()}", request(method, "/api/v1/experiments/1%00",
                                                            ADMIN)
    yield "experiment-id-nul-junk", request("POST", "/api/v1/experiments/1%00junk/kill", ADMIN)
    yield "experiment-id-bad-escape", request("GET", "/api/v1/experiments/1%zz", USER)
    yield "experiment-id-trailing-percent", request("GET", "/api/v1/experiments/1%", USER)
    yield "query-int-nul", request("GET", "/api/v1/experiments?limit=5%00&offset=0", USER)
    for name, uuid in (("traversal", "..%2F..%2F..%2Fetc"), ("absolute", "%2Fetc%2Fpasswd")):
        yield f"checkpoint-uuid-{name}-download", request("GET", f"/checkpoints/{uuid}", ADMIN)
        yield f"checkpoint-uuid-{name}-get", request("GET", f"/api/v1/checkpoints/{uuid}", ADMIN)
        yield f"checkpoint-uuid-{name}-metadata", request(
            "POST", f"/api/v1/checkpoints/{uuid}/metadata", ADMIN + JSON,
            json.dumps({"metadata": {"k": "v"}}))
        raw = uuid.replace("%2F", "/")
        yield f"checkpoint-uuid-{name}-report", request(
            "POST", "/api/v1/checkpoints", ADMIN + JSON,
            json.dumps({"checkpoint": {"uuid": raw, "taskId": "1.1", "allocationId": "1.1.1",
                                       "resources": {"../../x": 1, "/etc/passwd": 1}}}))
        yield f"checkpoint-uuid-{name}-delete", request(
            "DELETE", "/api/v1/checkpoints", ADMIN + JSON, json.dumps({"checkpointUuids": [raw]}))
    # A registration whose field has the wrong type threw inside the loop's decision, which was
    # then answered from a result never made (a double free on the loop thread).
    yield "agent-register-wrong-type", request("POST", "/agents/fuzz-agent/register", JSON,
                                               json.dumps({"resourcePool": 1, "slots": []}))
    yield "huge-flat-array", request("POST", "/api/v1/task/logs", ADMIN + JSON,
                                     "{\"logs\": [" + "0," * 60000 + "0]}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus-router")
    os.makedirs(out, exist_ok=True)
    n = 0
    for name, text in cases():
        with open(os.path.join(out, "issue32-" + name), "w") as f:
            f.write(text)
        n += 1
    print(f"{n} regression inputs in {out}")


if __name__ == "__main__":
    main()
