"""The REST API under abuse and load: bad requests answered as documented, and concurrent
writes all answered with a consistent final state.

`CASES` is a table of bad requests (method, path, body bytes, headers, expected status and
`field` of the ``{"error": ..., "field": ...}`` body): invalid JSON, wrong types, NaN and
infinities, booleans where numbers belong, huge and deeply nested bodies, unknown ids,
missing and wrong tokens, wrong methods and Content-Types. `run_cases` sends each on a
connection of its own and checks the answer, then that none of them changed anything
(paths' weights and admin states, classes, parameters). `concurrent_writes` sends
``PUT /paths/{id}/weight`` from many clients at once (a new connection per request) and
checks that every request is answered 200 and that what ``GET /paths`` returns afterwards
is a value some write could have left last: no write acknowledged before it was sent.

Runs against any server (the tests' one with a fake backend, or a real controller; ids
of paths are read from ``GET /paths``, the first path is used for writes). Against a
controller the weight writes make the default class run ``wcmp`` (as any weight write
does); the weights are put back afterwards.

    python -m mpsched.bench.restabuse --url http://127.0.0.1:8080 [--token-file F]

ends with ``rest_abuse_cases=`` (cases run, the state check included),
``rest_abuse_failures=`` (cases not answered as expected) and ``rest_concurrent_failed=``
(writes not acknowledged with 200, plus 1 if the final state is inconsistent).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger("mpsched.bench.restabuse")

UNKNOWN_ID = 999
TIMEOUT_S = 60.0
NAN, INF = float("nan"), float("inf")


@dataclass(frozen=True)
class Case:
    """One request and the answer it must get. In `path`, ``{path}`` is the first path's
    id. `auth`: "token" sends the right token, "none" sends no Authorization header (the
    case then needs a server with a token), "headers" leaves it to `headers`. With `raw`,
    those bytes are sent as they are instead (HTTP the client library would not write)."""

    name: str
    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()
    status: int = 400
    field: str | None = None
    allow: str | None = None  # expected Allow header (405)
    auth: str = "token"
    raw: bytes | None = None

    @property
    def needs_token(self) -> bool:
        return self.auth != "token"


@dataclass(frozen=True)
class CaseResult:
    case: Case
    status: int | None  # None: no answer (refused, reset, timed out)
    field: str | None
    problem: str = ""  # empty: answered as expected

    @property
    def ok(self) -> bool:
        return not self.problem


@dataclass
class Write:
    path_id: int
    weight: int
    sent: float = 0.0
    acked: float = 0.0
    status: int | None = None
    error: str = ""


# -- the cases -----------------------------------------------------------------


def _json(value: Any) -> bytes:
    """JSON text; NaN and infinities come out as Python's json writes them."""
    return json.dumps(value).encode()


def _nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"x": value}
    return value


def _classes(**class1: Any) -> bytes:
    c1: dict[str, Any] = {"id": 1, "name": "abuse", "priority": 10, "match": {"proto": "udp"}}
    c1.update(class1)
    return _json({"classes": [{"id": 0, "name": "default"}, c1]})


def _match(**match: Any) -> bytes:
    return _classes(match=match)


WEIGHT = "/paths/{path}/weight"
ADMIN = "/paths/{path}/admin"
POLICY = "/classes/0/policy"
JSON_CT = (("Content-Type", "application/json"),)


def _put(name: str, path: str, body: bytes, field: str | None = "body", status: int = 400,
         headers: tuple[tuple[str, str], ...] = JSON_CT, **kw: Any) -> Case:
    return Case(name, "PUT", path, body, headers, status, field, **kw)


def _get(name: str, path: str, status: int = 404, field: str | None = None) -> Case:
    return Case(name, "GET", path, None, (), status, field)


def _method(method: str, path: str, allow: str) -> Case:
    return Case(f"method {method} {path}", method, path, b"{}", JSON_CT, 405, None, allow)


def _raw(name: str, data: bytes, status: int = 400, field: str | None = None) -> Case:
    return Case(name, "RAW", "-", status=status, field=field, raw=data)


CASES: tuple[Case, ...] = (
    # invalid JSON
    _put("json: not JSON", WEIGHT, b"{not json"),
    _put("json: truncated", WEIGHT, b'{"weight": 1'),
    _put("json: empty body", WEIGHT, b""),
    _put("json: not UTF-8", WEIGHT, b"\xff\xfe{}"),
    _put("json: UTF-8 BOM", WEIGHT, b'\xef\xbb\xbf{"weight": 1}'),
    _put("json: trailing data", WEIGHT, b'{"weight": 1} {}'),
    _put("json: single quotes", WEIGHT, b"{'weight': 1}"),
    _put("json: array", WEIGHT, b"[1]"),
    _put("json: string", WEIGHT, b'"weight"'),
    _put("json: null", WEIGHT, b"null"),
    _put("json: duplicate key", WEIGHT, b'{"weight": 1, "weight": 300}', "weight"),
    # wrong types and values
    _put("type: weight string", WEIGHT, _json({"weight": "3"}), "weight"),
    _put("type: weight float", WEIGHT, _json({"weight": 1.5}), "weight"),
    _put("type: weight null", WEIGHT, _json({"weight": None}), "weight"),
    _put("type: weight list", WEIGHT, _json({"weight": [1]}), "weight"),
    _put("type: weight object", WEIGHT, _json({"weight": {}}), "weight"),
    _put("range: weight -1", WEIGHT, _json({"weight": -1}), "weight"),
    _put("range: weight 256", WEIGHT, _json({"weight": 256}), "weight"),
    _put("range: weight 10^20", WEIGHT, _json({"weight": 10**20}), "weight"),
    _put("range: weight 40 digits", WEIGHT, b'{"weight": ' + b"9" * 40 + b"}", "weight"),
    _put("range: weight 5000 digits", WEIGHT, b'{"weight": ' + b"9" * 5000 + b"}", "weight"),
    _put("field: missing weight", WEIGHT, _json({}), "weight"),
    _put("field: unknown", WEIGHT, _json({"weight": 1, "wieght": 1}), "wieght"),
    _put("type: admin state 1", ADMIN, _json({"state": 1}), "state"),
    _put("type: admin state UP", ADMIN, _json({"state": "UP"}), "state"),
    _put("type: admin state long", ADMIN, _json({"state": "x" * 60000}), "state"),
    _put("type: classes object", "/classes", _json({"classes": {}}), "classes"),
    _put("type: classes[0] number", "/classes", _json({"classes": [1]}), "classes[0]"),
    _put("field: classes unknown", "/classes", _json({"classes": [], "extra": 1}), "extra"),
    _put("type: class id string", "/classes", _classes(id="1"), "classes[1].id"),
    _put("type: class name number", "/classes", _classes(name=5), "classes[1].name"),
    _put("type: class priority string", "/classes", _classes(priority="10"),
         "classes[1].priority"),
    _put("type: match dscp string", "/classes", _match(dscp="1"), "classes[1].match.dscp"),
    _put("type: match src number", "/classes", _match(src=10), "classes[1].match.src"),
    _put("type: match src_port mixed", "/classes", _match(src_port=[1, "2"]),
         "classes[1].match.src_port"),
    _put("type: class lm3 string", "/classes", _classes(policy={"lm3": "yes"}),
         "classes[1].policy.lm3"),
    _put("type: class gap float", "/classes", _classes(policy={"flowlet_gap_us": 1.5}),
         "classes[1].policy.flowlet_gap_us"),
    _put("type: policy lm3 number", POLICY, _json({"lm3": 1}), "policy.lm3"),
    _put("type: policy gap string", POLICY, _json({"flowlet_gap_us": "0"}),
         "policy.flowlet_gap_us"),
    _put("type: policy params list", POLICY, _json({"params": []}), "policy.params"),
    _put("type: policy name number", POLICY, _json({"name": 5}), "policy.name"),
    _put("field: policy unknown param", POLICY, _json({"name": "llhd", "params": {"nope": 1}}),
         "policy.params.nope"),
    _put("type: control_period_ms string", "/params", _json({"control_period_ms": "100"}),
         "control_period_ms"),
    _put("range: control_period_ms 5", "/params", _json({"control_period_ms": 5}),
         "control_period_ms"),
    _put("type: lm3 list", "/params", _json({"lm3": []}), "lm3"),
    _put("type: llhd beta string", "/params", _json({"policies": {"llhd": {"beta": "x"}}}),
         "policies.llhd.beta"),
    _put("field: params unknown", "/params", _json({"nope": 1}), "nope"),
    _put("field: params unknown policy", "/params", _json({"policies": {"nope": {}}}),
         "policies.nope"),
    # NaN, infinities, numbers out of range
    _put("nan: weight NaN", WEIGHT, _json({"weight": NAN}), "weight"),
    _put("nan: weight Infinity", WEIGHT, _json({"weight": INF}), "weight"),
    _put("nan: weight -Infinity", WEIGHT, _json({"weight": -INF}), "weight"),
    _put("nan: weight 1e999", WEIGHT, b'{"weight": 1e999}', "weight"),
    _put("nan: weight -1e999", WEIGHT, b'{"weight": -1e999}', "weight"),
    _put("nan: body NaN", WEIGHT, b"NaN"),
    _put("nan: unknown field NaN", WEIGHT, b'{"weight": 1, "x": NaN}', "x"),
    _put("nan: control_period_ms", "/params", _json({"control_period_ms": NAN}),
         "control_period_ms"),
    _put("nan: llhd beta Infinity", "/params", _json({"policies": {"llhd": {"beta": INF}}}),
         "policies.llhd.beta"),
    _put("nan: lm3 sigma -Infinity", "/params", _json({"lm3": {"sigma": -INF}}), "lm3.sigma"),
    _put("nan: mptcp idle_timeout_s", "/params", _json({"mptcp": {"idle_timeout_s": NAN}}),
         "mptcp.idle_timeout_s"),
    _put("nan: qos max_delay_ms", "/params", _json({"policies": {"qos": {"max_delay_ms": NAN}}}),
         "policies.qos.max_delay_ms"),
    _put("nan: policy params beta", POLICY, _json({"name": "llhd", "params": {"beta": NAN}}),
         "policy.params.beta"),
    _put("nan: policy gap Infinity", POLICY, _json({"flowlet_gap_us": INF}),
         "policy.flowlet_gap_us"),
    _put("nan: class params beta", "/classes",
         _classes(policy={"name": "llhd", "params": {"beta": -INF}}),
         "classes[1].policy.params.beta"),
    _put("nan: match dscp", "/classes", _match(dscp=NAN), "classes[1].match.dscp"),
    _put("nan: match src_port[0]", "/classes", _match(src_port=[NAN, 2]),
         "classes[1].match.src_port[0]"),
    # booleans where numbers belong
    _put("bool: weight true", WEIGHT, _json({"weight": True}), "weight"),
    _put("bool: weight false", WEIGHT, _json({"weight": False}), "weight"),
    _put("bool: admin state true", ADMIN, _json({"state": True}), "state"),
    _put("bool: control_period_ms", "/params", _json({"control_period_ms": True}),
         "control_period_ms"),
    _put("bool: lm3 sigma", "/params", _json({"lm3": {"sigma": True}}), "lm3.sigma"),
    _put("bool: lm3 blocking_threshold", "/params",
         _json({"lm3": {"blocking_threshold": False}}), "lm3.blocking_threshold"),
    _put("bool: llhd beta", "/params", _json({"policies": {"llhd": {"beta": True}}}),
         "policies.llhd.beta"),
    _put("bool: fdmvqs peaks_k", "/params", _json({"policies": {"fdmvqs": {"peaks_k": True}}}),
         "policies.fdmvqs.peaks_k"),
    _put("bool: mptcp idle_timeout_s", "/params", _json({"mptcp": {"idle_timeout_s": True}}),
         "mptcp.idle_timeout_s"),
    _put("bool: policy gap", POLICY, _json({"flowlet_gap_us": True}), "policy.flowlet_gap_us"),
    _put("bool: policy params beta", POLICY, _json({"name": "llhd", "params": {"beta": True}}),
         "policy.params.beta"),
    _put("bool: class id", "/classes", _classes(id=True), "classes[1].id"),
    _put("bool: class priority", "/classes", _classes(priority=True), "classes[1].priority"),
    _put("bool: default class priority", "/classes",
         _json({"classes": [{"id": 0, "name": "default", "priority": False}]}),
         "classes[0].priority"),
    _put("bool: match dscp", "/classes", _match(dscp=True), "classes[1].match.dscp"),
    _put("bool: match proto", "/classes", _match(proto=True), "classes[1].match.proto"),
    _put("bool: match src_port", "/classes", _match(src_port=True), "classes[1].match.src_port"),
    _put("bool: match dst_port range", "/classes", _match(dst_port=[True, 5]),
         "classes[1].match.dst_port"),
    _put("bool: class gap", "/classes", _classes(policy={"flowlet_gap_us": True}),
         "classes[1].policy.flowlet_gap_us"),
    _put("bool: class params beta", "/classes",
         _classes(policy={"name": "llhd", "params": {"beta": False}}),
         "classes[1].policy.params.beta"),
    _get("query: since=true", "/telemetry?since=true", 400, "since"),
    _get("query: decisions since=false", "/decisions?since=false", 400, "since"),
    _get("query: limit=true", "/decisions?limit=true", 400, "limit"),
    _get("query: since=NaN", "/telemetry?since=NaN", 400, "since"),
    _get("query: since=inf", "/telemetry?since=inf", 400, "since"),
    _get("query: since=1e999", "/decisions?since=1e999", 400, "since"),
    _get("query: since=-1", "/telemetry?since=-1", 400, "since"),
    _get("query: limit=0", "/decisions?limit=0", 400, "limit"),
    _get("query: limit=1.5", "/decisions?limit=1.5", 400, "limit"),
    _get("query: limit=NaN", "/decisions?limit=NaN", 400, "limit"),
    _get("query: limit 30 digits", "/decisions?limit=" + "9" * 30, 400, "limit"),
    _get("query: not UTF-8", "/telemetry?since=%ff", 400),
    # huge and deeply nested bodies
    _put("huge: 70 KiB", WEIGHT, b'{"weight": 1' + b" " * (70 * 1024) + b"}", status=413),
    _put("huge: 512 KiB", WEIGHT, b'{"weight": 1' + b" " * (512 * 1024) + b"}", status=413),
    _put("huge: 2 MiB", WEIGHT, b'{"weight": 1' + b" " * (2 * 1024 * 1024) + b"}", status=413),
    _put("huge: 5000 keys", WEIGHT, _json({f"k{i:04d}": 0 for i in range(5000)}), "k0000"),
    _put("deep: 40 levels", WEIGHT, _json({"weight": _nested(40)})),
    _put("deep: params 40 levels", "/params",
         _json({"policies": {"llhd": {"beta": _nested(40)}}})),
    _put("deep: 20000 arrays", WEIGHT, b'{"weight": ' + b"[" * 20000 + b"]" * 20000 + b"}"),
    _put("deep: 60000 unclosed", WEIGHT, b"[" * 60000),
    _put("deep: params nest valid depth", POLICY,
         _json({"name": "llhd", "params": {"x": _nested(10)}}), "policy.params.x"),
    # unknown ids and resources
    _get("id: GET unknown path", f"/paths/{UNKNOWN_ID}"),
    _put("id: PUT unknown path weight", f"/paths/{UNKNOWN_ID}/weight", _json({"weight": 1}),
         None, 404),
    _put("id: PUT unknown path admin", f"/paths/{UNKNOWN_ID}/admin", _json({"state": "up"}),
         None, 404),
    _get("id: unknown path telemetry", f"/paths/{UNKNOWN_ID}/telemetry"),
    _get("id: path not a number", "/paths/abc"),
    _get("id: path negative", "/paths/-1"),
    _get("id: path superscript two", "/paths/%C2%B2"),
    _get("id: path 30 digits", "/paths/" + "1" * 30),
    _get("id: path 5000 digits", "/paths/" + "1" * 5000),
    _get("id: path not UTF-8", "/paths/%ff", 400),
    _get("id: class 64", "/classes/64"),
    _get("id: class x policy", "/classes/x/policy"),
    _put("id: PUT policy of class 64", "/classes/64/policy", _json({"lm3": False}), None, 404),
    _get("id: unknown MPTCP connection", f"/mptcp/connections/{UNKNOWN_ID}"),
    _get("id: no such resource", "/nothing/here"),
    # the write token
    _put("token: missing", WEIGHT, _json({"weight": 1}), None, 401, auth="none"),
    _put("token: missing, bad body", WEIGHT, b"{not json", None, 401, auth="none"),
    _put("token: wrong", WEIGHT, _json({"weight": 1}), None, 403,
         headers=(*JSON_CT, ("Authorization", "Bearer wrong-token")), auth="headers"),
    _put("token: Basic scheme", WEIGHT, _json({"weight": 1}), None, 401,
         headers=(*JSON_CT, ("Authorization", "Basic dXNlcjpwYXNz")), auth="headers"),
    _put("token: empty Bearer", WEIGHT, _json({"weight": 1}), None, 401,
         headers=(*JSON_CT, ("Authorization", "Bearer")), auth="headers"),
    _put("token: missing on classes", "/classes", _classes(), None, 401, auth="none"),
    _put("token: wrong on params", "/params", _json({}), None, 403,
         headers=(*JSON_CT, ("Authorization", "Bearer wrong-token")), auth="headers"),
    _put("token: missing on policy", POLICY, _json({"lm3": False}), None, 401, auth="none"),
    # wrong methods
    _method("DELETE", "/paths", "GET"),
    _method("POST", WEIGHT, "PUT"),
    _method("GET", WEIGHT, "PUT"),
    _method("PATCH", "/classes", "GET, PUT"),
    _method("DELETE", "/params", "GET, PUT"),
    _method("OPTIONS", "/paths", "GET"),
    _method("PUT", "/paths", "GET"),
    _method("POST", "/decisions", "GET"),
    _method("FOO", "/switches", "GET"),
    # Content-Type
    _put("content-type: XML", WEIGHT, _json({"weight": 1}), None, 415,
         headers=(("Content-Type", "application/xml"),)),
    _put("content-type: multipart", WEIGHT, _json({"weight": 1}), None, 415,
         headers=(("Content-Type", "multipart/form-data; boundary=x"),)),
    _put("content-type: latin-1 charset", WEIGHT, _json({"weight": 1}), None, 415,
         headers=(("Content-Type", "application/json; charset=latin-1"),)),
    # the HTTP server's own limits and malformed HTTP
    Case("http: 70 KiB header", "GET", "/paths", None, (("X-Big", "a" * 70_000),), 431, None),
    _raw("http: malformed start line", b"GARBAGE\r\n\r\n"),
    _raw("http: invalid header line", b"GET /paths HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n"),
    _raw("http: bad chunk size", b"PUT /paths/1/weight HTTP/1.1\r\nHost: x\r\n"
         b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
    _raw("http: two Content-Lengths", b"PUT /paths/1/weight HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 5\r\nContent-Length: 7\r\n\r\n12345"),
    _raw("http: Content-Length 1 GiB", b"PUT /paths/1/weight HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 1073741824\r\n\r\n", 413, "body"),
)


# -- running -------------------------------------------------------------------


def _split(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"url must be http://host[:port], got {base_url!r}")
    return parts.hostname, parts.port or 80


def request(
    base_url: str,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: Sequence[tuple[str, str]] = (),
    timeout: float = TIMEOUT_S,
) -> tuple[int, dict[str, str], bytes]:
    """One request on a connection of its own: (status, headers, body). OSError (refused,
    reset, timed out) and http.client.HTTPException propagate."""
    host, port = _split(base_url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for key, value in headers:
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.putheader("Connection", "close")
        conn.endheaders()
        if body:
            # the server may answer (and close) before reading it all
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                conn.send(body)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


def raw_request(
    base_url: str, data: bytes, timeout: float = TIMEOUT_S
) -> tuple[int, dict[str, str], bytes]:
    """`data` sent as it is on a connection of its own; the answer as from `request`."""
    with socket.create_connection(_split(base_url), timeout=timeout) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def _get_json(base_url: str, path: str) -> Any:
    status, _, data = request(base_url, "GET", path)
    if status != 200:
        raise RuntimeError(f"GET {path}: {status} {data[:200]!r}")
    return json.loads(data)


def _auth(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("Authorization", f"Bearer {token}"),) if token else ()


def check_case(base_url: str, token: str | None, case: Case, path_id: int) -> CaseResult:
    headers = case.headers + (_auth(token) if case.auth == "token" else ())
    path = case.path.replace("{path}", str(path_id))
    try:
        if case.raw is not None:
            status, got_headers, data = raw_request(base_url, case.raw)
        else:
            status, got_headers, data = request(base_url, case.method, path, case.body, headers)
    except (OSError, http.client.HTTPException) as error:
        return CaseResult(case, None, None, f"no answer: {error!r}")
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if not (isinstance(body, dict) and set(body) == {"error", "field"}
            and isinstance(body["error"], str) and body["error"]):
        return CaseResult(case, status, None, f"{status}: not an error body: {data[:120]!r}")
    problems = []
    if status != case.status:
        problems.append(f"status {status}, expected {case.status} ({body['error'][:120]})")
    if body["field"] != case.field:
        problems.append(f"field {body['field']!r}, expected {case.field!r}")
    if case.allow is not None and got_headers.get("allow") != case.allow:
        problems.append(f"Allow {got_headers.get('allow')!r}, expected {case.allow!r}")
    if status == 401 and "www-authenticate" not in got_headers:
        problems.append("401 without WWW-Authenticate")
    return CaseResult(case, status, body["field"], "; ".join(problems))


def snapshot(base_url: str) -> dict[str, Any]:
    """What a refused request must not change: paths' weight and admin state, classes
    (without their placements, which the control loop changes), parameters."""
    paths = {p["id"]: (p["weight"], p["admin"]) for p in _get_json(base_url, "/paths")}
    classes = [{k: v for k, v in c.items() if k != "placement"}
               for c in _get_json(base_url, "/classes")]
    params = _get_json(base_url, "/params")
    return {"paths": paths, "classes": classes, "params": params}


def run_cases(
    base_url: str, token: str | None, cases: Sequence[Case] = CASES
) -> list[CaseResult]:
    """Every case that applies (those about the token need a server with one), then a
    last result "state unchanged" comparing `snapshot` before and after."""
    paths = _get_json(base_url, "/paths")
    if not paths:
        raise RuntimeError("the server has no paths")
    path_id = paths[0]["id"]
    before = snapshot(base_url)
    results = [
        check_case(base_url, token, case, path_id)
        for case in cases
        if token is not None or not case.needs_token
    ]
    after = snapshot(base_url)
    changed = [key for key in before if before[key] != after[key]]
    final = Case("state unchanged", "GET", "/paths /classes /params", status=200)
    problem = f"changed by refused requests: {', '.join(changed)}" if changed else ""
    results.append(CaseResult(final, 200, None, problem))
    return results


# -- concurrent writes -----------------------------------------------------------


def plan_writes(path_ids: Sequence[int], writes: int) -> list[Write]:
    """Write k goes to path k mod n; the weights written to a path differ (1..255, cycling
    only beyond 255 writes per path), so the final value tells which write was last."""
    n = len(path_ids)
    return [Write(path_ids[k % n], 1 + (k // n) % 255) for k in range(writes)]


def possible_last(writes: Sequence[Write], path_id: int, initial: int) -> set[int]:
    """The weights `path_id` may hold after `writes` (linearisability of a register): any
    write acknowledged (200) unless another acknowledged write to it was sent after it was
    acknowledged, and any unacknowledged one (it may have been applied); the initial
    weight if no write was acknowledged."""
    mine = [w for w in writes if w.path_id == path_id]
    acked = [w for w in mine if w.status == 200]
    out = {w.weight for w in mine if w.status != 200}
    out |= {w.weight for w in acked if not any(o.sent > w.acked for o in acked)}
    if not acked:
        out.add(initial)
    return out


def concurrent_writes(
    base_url: str, token: str | None, clients: int = 50, writes: int = 200
) -> tuple[int, int, bool]:
    """`writes` weight writes from `clients` threads at once, each on a new connection:
    (answered: requests that got an HTTP answer, failed: requests not acknowledged with
    200, final_state_ok: every path's weight read afterwards is one that some write could
    have left last, see `possible_last`). The weights are put back afterwards."""
    initial = {p["id"]: p["weight"] for p in _get_json(base_url, "/paths")}
    plan = plan_writes(sorted(initial), writes)
    headers = (*JSON_CT, *_auth(token))
    start = threading.Barrier(clients)

    def client(mine: list[Write]) -> None:
        start.wait()
        for w in mine:
            w.sent = time.monotonic()
            try:
                w.status, _, data = request(
                    base_url, "PUT", f"/paths/{w.path_id}/weight",
                    _json({"weight": w.weight}), headers,
                )
                if w.status != 200:
                    w.error = data[:200].decode(errors="replace")
            except (OSError, http.client.HTTPException) as error:
                w.error = repr(error)
            w.acked = time.monotonic()

    threads = [
        threading.Thread(target=client, args=(plan[c::clients],), name=f"abuse-client-{c}")
        for c in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answered = sum(1 for w in plan if w.status is not None)
    failed = sum(1 for w in plan if w.status != 200)
    for w in plan:
        if w.status != 200:
            log.warning("PUT /paths/%d/weight: %s %s", w.path_id, w.status, w.error)
    final_ok = True
    try:
        final = {p["id"]: p["weight"] for p in _get_json(base_url, "/paths")}
    except (OSError, http.client.HTTPException, RuntimeError, ValueError) as error:
        log.warning("GET /paths after the writes: %r", error)
        return answered, failed, False
    for path_id, weight in sorted(final.items()):
        allowed = possible_last(plan, path_id, initial.get(path_id, weight))
        if weight not in allowed:
            log.warning("path %d: weight %d after the writes; possible: %s",
                        path_id, weight, sorted(allowed))
            final_ok = False
    for path_id, weight in initial.items():
        status, _, _ = request(base_url, "PUT", f"/paths/{path_id}/weight",
                               _json({"weight": weight}), headers)
        if status != 200:
            log.warning("could not put path %d's weight back to %d: %d", path_id, weight, status)
    return answered, failed, final_ok


# -- command line ------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.bench.restabuse",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--url", default="http://127.0.0.1:8080",
                   help="the REST API (default: %(default)s)")
    p.add_argument("--token", default=None, help="the write token")
    p.add_argument("--token-file", type=Path, default=None,
                   help="file holding the write token (default: $MPSCHED_TOKEN, else the "
                   "controller's token file for the port of --url)")
    p.add_argument("--clients", type=int, default=50, help="concurrent clients (default: 50)")
    p.add_argument("--writes", type=int, default=200, help="weight writes (default: 200)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(name)s: %(message)s")
    from mpsched.client.ctl import UsageError, resolve_token

    try:
        _split(args.url)
        token, source = resolve_token(args)
    except (ValueError, UsageError) as error:
        print(f"restabuse: {error}", file=sys.stderr)
        return 2
    log.info("token: %s", source)
    if args.clients < 1 or args.writes < 1:
        print("restabuse: --clients and --writes must be >= 1", file=sys.stderr)
        return 2
    try:
        results = run_cases(args.url, token)
        answered, failed, final_ok = concurrent_writes(args.url, token, args.clients, args.writes)
    except (OSError, http.client.HTTPException, RuntimeError, ValueError) as error:
        print(f"restabuse: {args.url}: {error}", file=sys.stderr)
        return 1
    for r in results:
        if args.verbose or not r.ok:
            mark = "ok  " if r.ok else "FAIL"
            print(f"{mark} {r.case.name:40s} {r.status} {r.field!r} {r.problem}")
    failures = sum(1 for r in results if not r.ok)
    print(f"concurrent: {args.writes} writes from {args.clients} clients: {answered} answered, "
          f"{failed} not acknowledged, final state {'consistent' if final_ok else 'INCONSISTENT'}")
    if token is None:
        print("(no token: the cases about the token were skipped)")
    print(f"rest_abuse_cases={len(results)}")
    print(f"rest_abuse_failures={failures}")
    print(f"rest_concurrent_failed={failed + (0 if final_ok else 1)}")
    return 0 if failures == 0 and failed == 0 and final_ok else 1


if __name__ == "__main__":
    sys.exit(main())
