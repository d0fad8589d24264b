"""Checks HTTP requests and answers against the REST contract, api/openapi.yaml.

Used by the e2e tests (answers of a real master, requests of `det` and the Python SDK) and by
the harness tests (requests of the Python package against the fake master). Needs PyYAML and
jsonschema (Debian: python3-yaml, python3-jsonschema); OpenAPI 3.1 schemas are JSON Schema
2020-12, so one validator checks them, with "$ref"s resolved inside the document.

Every problem is a line "METHOD /path -> STATUS: where: what (rule)", `where` being the JSON
path in the body (`$.experiment.state`) or the query parameter.
"""

import json
import pathlib
import re
import urllib.parse
from typing import Any, Dict, Iterable, List, Optional, Tuple

import jsonschema
import yaml

CONTRACT = pathlib.Path(__file__).resolve().parent / "openapi.yaml"
METHODS = ("get", "put", "post", "delete", "patch")


def _json_path(path: Iterable[Any]) -> str:
    out = "$"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


class Operation:
    def __init__(self, method: str, template: str, spec: Dict[str, Any],
                 path_params: List[Dict[str, Any]]) -> None:
        self.method = method
        self.template = template
        self.spec = spec
        self.params = {p["name"]: p for p in path_params}
        for p in spec.get("parameters", []):
            self.params[p["name"]] = p
        # A template segment {x} matches one segment; a prefix route's {path} (the web UI)
        # matches the rest of the path.
        parts = []
        for seg in template.strip("/").split("/"):
            if seg == "{path}" and template.endswith("/{path}"):
                parts.append(".+")
            elif seg.startswith("{") and seg.endswith("}"):
                parts.append("[^/]+")
            else:
                parts.append(re.escape(seg))
        self.regex = re.compile("^/" + "/".join(parts) + "$")
        self.literal_segments = sum(1 for s in template.split("/") if s and not s.startswith("{"))

    def __repr__(self) -> str:
        return f"{self.method} {self.template}"


class Contract:
    def __init__(self, path: pathlib.Path = CONTRACT) -> None:
        self.doc = yaml.safe_load(path.read_text())
        self.resolver = jsonschema.RefResolver.from_schema(self.doc)
        self.operations: List[Operation] = []
        for template, item in self.doc["paths"].items():
            shared = [self._deref(p) for p in item.get("parameters", [])]
            for method in METHODS:
                if method in item:
                    op_spec = dict(item[method])
                    op_spec["parameters"] = [self._deref(p) for p in op_spec.get("parameters", [])]
                    self.operations.append(Operation(method.upper(), template, op_spec, shared))

    def _deref(self, node: Dict[str, Any]) -> Dict[str, Any]:
        while isinstance(node, dict) and "$ref" in node:
            _, node = self.resolver.resolve(node["$ref"])
        return node

    # -- matching -----------------------------------------------------------------------------
    def match(self, method: str, path: str) -> Optional[Operation]:
        """The operation of `method path` (a concrete path, no query); literal segments win over
        parameters, as in the master's router."""
        best = None
        for op in self.operations:
            if op.method == method and op.regex.match(path):
                if best is None or op.literal_segments > best.literal_segments:
                    best = op
        return best

    # -- validation ---------------------------------------------------------------------------
    def _errors(self, schema: Dict[str, Any], value: Any) -> List[str]:
        validator = jsonschema.Draft202012Validator(schema, resolver=self.resolver)
        out = []
        for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
            # oneOf/anyOf failures: name the branch errors, which say what is wrong.
            detail = e.message if len(e.message) < 300 else e.message[:300] + "..."
            if e.context:
                best = jsonschema.exceptions.best_match(e.context)
                detail += f" [best branch: {_json_path(best.absolute_path)}: {best.message[:200]}]"
            out.append(f"{_json_path(e.absolute_path)}: {detail} (rule: {e.validator})")
        return out

    def check_request(self, method: str, url_path: str, body: Any = None,
                      content_type: str = "application/json") -> List[str]:
        """Problems with a request: unknown route, unknown or ill-typed query parameters, or a
        JSON body that the operation's requestBody schema rejects."""
        parsed = urllib.parse.urlsplit(url_path)
        where = f"{method} {parsed.path}"
        op = self.match(method, parsed.path)
        if op is None:
            return [f"{where}: no operation of api/openapi.yaml matches (rule: paths)"]
        problems = []
        for name, value in urllib.parse.parse_qsl(parsed.query, keep_blank_values=True):
            param = op.params.get(name)
            if param is None or param.get("in") != "query":
                problems.append(f"{where}: query parameter {name!r} is not in the contract of {op} "
                                f"(rule: parameters)")
                continue
            schema = param.get("schema", {})
            item = schema.get("items", schema) if schema.get("type") == "array" else schema
            for err in self._errors(item, _query_value(value, item)):
                problems.append(f"{where}: query {name}={value!r}: {err}")
        spec = op.spec.get("requestBody")
        if spec is not None:
            spec = self._deref(spec)
        body = drop_nulls(body)
        if body is not None and spec is not None and content_type.startswith("application/json"):
            schema = spec.get("content", {}).get("application/json", {}).get("schema")
            if schema is not None:
                problems += [f"{where} request body: {e}" for e in self._errors(schema, body)]
        elif body is not None and spec is None and body not in ({}, ""):
            problems.append(f"{where}: sends a body, and {op} has no requestBody (rule: requestBody)")
        return problems

    def check_response(self, method: str, url_path: str, status: int, content_type: str,
                       text: str) -> List[str]:
        """Problems with an answer: a status the operation does not list, a content type it does
        not list, or a body its schema rejects (every line of an NDJSON stream)."""
        path = urllib.parse.urlsplit(url_path).path
        where = f"{method} {path} -> {status}"
        op = self.match(method, path)
        if op is None:
            return [f"{where}: no operation of api/openapi.yaml matches (rule: paths)"]
        responses = op.spec.get("responses", {})
        resp = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX")
        if resp is None:
            resp = responses.get("default")
        if resp is None:
            return [f"{where}: status {status} is not among {sorted(responses)} of {op} "
                    f"(rule: responses)"]
        resp = self._deref(resp)
        content = resp.get("content")
        if not content:
            return []
        media = (content_type or "").split(";")[0].strip()
        if media not in content and "*/*" in content:
            media = "*/*"
        if media not in content:
            return [f"{where}: content type {media!r} is not among {sorted(content)} "
                    f"(rule: content)"]
        schema = content[media].get("schema")
        if schema is None:
            return []
        if media.startswith("text/"):  # a CSV or plain-text answer is its schema's string
            return [f"{where}: {err}" for err in self._errors(schema, text)]
        if media == "application/x-ndjson":
            bodies = [line for line in text.split("\n") if line.strip()]
        else:
            bodies = [text]
        problems = []
        for i, raw in enumerate(bodies):
            label = f"{where} line {i + 1}" if media == "application/x-ndjson" else where
            try:
                value = json.loads(raw)
            except json.JSONDecodeError as e:
                problems.append(f"{label}: not JSON ({e}) (rule: content)")
                continue
            problems += [f"{label}: {err}" for err in self._errors(schema, value)]
        return problems


# Inside these, null is a value (api/README.md); elsewhere a null field means "absent".
_FREE_FORM = {"metadata", "metrics", "hparams", "settings"}  # route_helpers.cc


def drop_nulls(value: Any) -> Any:
    """A request body as the master reads it: null fields dropped at every depth, except
    inside free-form objects (Determined's generated client sends every unset field as null)."""
    if isinstance(value, dict):
        return {k: (v if k in _FREE_FORM else drop_nulls(v)) for k, v in value.items()
                if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def _query_value(value: str, schema: Dict[str, Any]) -> Any:
    """A query string value as the JSON value its schema describes (ints, booleans)."""
    t = schema.get("type")
    try:
        if t == "integer":
            return int(value)
        if t == "number":
            return float(value)
    except ValueError:
        return value
    if t == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def format_problems(problems: List[str], limit: int = 60) -> str:
    head = problems[:limit]
    more = f"\n... and {len(problems) - limit} more" if len(problems) > limit else ""
    return "\n".join(head) + more


class Exchange:
    """One recorded request and its answer."""

    def __init__(self, method: str, path: str, body: Any, status: int, content_type: str,
                 text: str, request_content_type: str = "application/json") -> None:
        self.method = method
        self.path = path
        self.body = body
        self.status = status
        self.content_type = content_type
        self.text = text
        self.request_content_type = request_content_type

    def __repr__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


def check_exchanges(contract: Contract, exchanges: List[Exchange]) -> Tuple[List[str], set]:
    """Problems of every exchange, and the set of operations they used."""
    problems: List[str] = []
    used = set()
    for x in exchanges:
        op = contract.match(x.method, urllib.parse.urlsplit(x.path).path)
        if op is not None:
            used.add((op.method, op.template))
        problems += contract.check_request(x.method, x.path, x.body, x.request_content_type)
        problems += contract.check_response(x.method, x.path, x.status, x.content_type, x.text)
    return problems, used
