#!/usr/bin/python3
"""Writes the router fuzzer's seed corpus from api/openapi.yaml: one request per route and
method (path parameters filled with a real id, a body with the fields its schema names), as the
admin, and again as a non-admin user and without a token. Usage: make_router_corpus.py OPENAPI DIR
"""
import json
import os
import re
import sys

import yaml

METHODS = ("get", "post", "put", "patch", "delete")
SAMPLE = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}


def deref(spec, node, depth=0):
    if depth > 8 or not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return deref(spec, target, depth + 1)
    return node


def sample_body(spec, op):
    content = (op.get("requestBody") or {}).get("content") or {}
    schema = deref(spec, (content.get("application/json") or {}).get("schema") or {})
    props = schema.get("properties") or {}
    body = {}
    for name, prop in props.items():
        prop = deref(spec, prop)
        kind = prop.get("type", "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        body[name] = SAMPLE.get(kind, "x")
    return body


def main():
    openapi, out_dir = sys.argv[1], sys.argv[2]
    with open(openapi) as f:
        spec = yaml.safe_load(f)
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    for path, ops in (spec.get("paths") or {}).items():
        target = re.sub(r"\{[^}]*\}", "1", path)
        for method in METHODS:
            op = ops.get(method)
            if op is None:
                continue
            body = json.dumps(sample_body(spec, op)) if method != "get" else ""
            for who in ("Bearer @admin", "Bearer @user", ""):
                headers = f"authorization: {who}\n" if who else ""
                request = f"{method.upper()} {target}\n{headers}content-type: application/json\n\n{body}"
                n += 1
                with open(os.path.join(out_dir, f"seed-{n:04d}"), "w") as f:
                    f.write(request)
    print(f"{n} router seeds in {out_dir}")


if __name__ == "__main__":
    main()
