"""The bad requests of the REST abuse bench (restabuse.py): `CASES`, each a request and the
answer it must get.

Invalid JSON, wrong types, NaN and infinities, booleans where numbers belong, huge and deeply
nested bodies, unknown ids, missing and wrong tokens, wrong methods and Content-Types, Hosts that
are not the server's, and raw HTTP the client library would not write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

UNKNOWN_ID = 999
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


def json_body(value: Any) -> bytes:
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
    return json_body({"classes": [{"id": 0, "name": "default"}, c1]})


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
    _put("type: weight string", WEIGHT, json_body({"weight": "3"}), "weight"),
    _put("type: weight float", WEIGHT, json_body({"weight": 1.5}), "weight"),
    _put("type: weight null", WEIGHT, json_body({"weight": None}), "weight"),
    _put("type: weight list", WEIGHT, json_body({"weight": [1]}), "weight"),
    _put("type: weight object", WEIGHT, json_body({"weight": {}}), "weight"),
    _put("range: weight -1", WEIGHT, json_body({"weight": -1}), "weight"),
    _put("range: weight 256", WEIGHT, json_body({"weight": 256}), "weight"),
    _put("range: weight 10^20", WEIGHT, json_body({"weight": 10**20}), "weight"),
    _put("range: weight 40 digits", WEIGHT, b'{"weight": ' + b"9" * 40 + b"}", "weight"),
    _put("range: weight 5000 digits", WEIGHT, b'{"weight": ' + b"9" * 5000 + b"}", "weight"),
    _put("field: missing weight", WEIGHT, json_body({}), "weight"),
    _put("field: unknown", WEIGHT, json_body({"weight": 1, "wieght": 1}), "wieght"),
    _put("type: admin state 1", ADMIN, json_body({"state": 1}), "state"),
    _put("type: admin state UP", ADMIN, json_body({"state": "UP"}), "state"),
    _put("type: admin state long", ADMIN, json_body({"state": "x" * 60000}), "state"),
    _put("type: classes object", "/classes", json_body({"classes": {}}), "classes"),
    _put("type: classes[0] number", "/classes", json_body({"classes": [1]}), "classes[0]"),
    _put("field: classes unknown", "/classes", json_body({"classes": [], "extra": 1}), "extra"),
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
    _put("type: policy lm3 number", POLICY, json_body({"lm3": 1}), "policy.lm3"),
    _put("type: policy gap string", POLICY, json_body({"flowlet_gap_us": "0"}),
         "policy.flowlet_gap_us"),
    _put("type: policy params list", POLICY, json_body({"params": []}), "policy.params"),
    _put("type: policy name number", POLICY, json_body({"name": 5}), "policy.name"),
    _put("field: policy unknown param", POLICY, json_body({"name": "llhd", "params": {"nope": 1}}),
         "policy.params.nope"),
    _put("type: control_period_ms string", "/params", json_body({"control_period_ms": "100"}),
         "control_period_ms"),
    _put("range: control_period_ms 5", "/params", json_body({"control_period_ms": 5}),
         "control_period_ms"),
    _put("type: lm3 list", "/params", json_body({"lm3": []}), "lm3"),
    _put("type: llhd beta string", "/params", json_body({"policies": {"llhd": {"beta": "x"}}}),
         "policies.llhd.beta"),
    _put("field: params unknown", "/params", json_body({"nope": 1}), "nope"),
    _put("field: params unknown policy", "/params", json_body({"policies": {"nope": {}}}),
         "policies.nope"),
    # NaN, infinities, numbers out of range
    _put("nan: weight NaN", WEIGHT, json_body({"weight": NAN}), "weight"),
    _put("nan: weight Infinity", WEIGHT, json_body({"weight": INF}), "weight"),
    _put("nan: weight -Infinity", WEIGHT, json_body({"weight": -INF}), "weight"),
    _put("nan: weight 1e999", WEIGHT, b'{"weight": 1e999}', "weight"),
    _put("nan: weight -1e999", WEIGHT, b'{"weight": -1e999}', "weight"),
    _put("nan: body NaN", WEIGHT, b"NaN"),
    _put("nan: unknown field NaN", WEIGHT, b'{"weight": 1, "x": NaN}', "x"),
    _put("nan: control_period_ms", "/params", json_body({"control_period_ms": NAN}),
         "control_period_ms"),
    _put("nan: llhd beta Infinity", "/params", json_body({"policies": {"llhd": {"beta": INF}}}),
         "policies.llhd.beta"),
    _put("nan: lm3 sigma -Infinity", "/params", json_body({"lm3": {"sigma": -INF}}), "lm3.sigma"),
    _put("nan: mptcp idle_timeout_s", "/params", json_body({"mptcp": {"idle_timeout_s": NAN}}),
         "mptcp.idle_timeout_s"),
    _put("nan: qos max_delay_ms", "/params",
         json_body({"policies": {"qos": {"max_delay_ms": NAN}}}), "policies.qos.max_delay_ms"),
    _put("nan: policy params beta", POLICY, json_body({"name": "llhd", "params": {"beta": NAN}}),
         "policy.params.beta"),
    _put("nan: policy gap Infinity", POLICY, json_body({"flowlet_gap_us": INF}),
         "policy.flowlet_gap_us"),
    _put("nan: class params beta", "/classes",
         _classes(policy={"name": "llhd", "params": {"beta": -INF}}),
         "classes[1].policy.params.beta"),
    _put("nan: match dscp", "/classes", _match(dscp=NAN), "classes[1].match.dscp"),
    _put("nan: match src_port[0]", "/classes", _match(src_port=[NAN, 2]),
         "classes[1].match.src_port[0]"),
    # booleans where numbers belong
    _put("bool: weight true", WEIGHT, json_body({"weight": True}), "weight"),
    _put("bool: weight false", WEIGHT, json_body({"weight": False}), "weight"),
    _put("bool: admin state true", ADMIN, json_body({"state": True}), "state"),
    _put("bool: control_period_ms", "/params", json_body({"control_period_ms": True}),
         "control_period_ms"),
    _put("bool: lm3 sigma", "/params", json_body({"lm3": {"sigma": True}}), "lm3.sigma"),
    _put("bool: lm3 blocking_threshold", "/params",
         json_body({"lm3": {"blocking_threshold": False}}), "lm3.blocking_threshold"),
    _put("bool: llhd beta", "/params", json_body({"policies": {"llhd": {"beta": True}}}),
         "policies.llhd.beta"),
    _put("bool: fdmvqs peaks_k", "/params", json_body({"policies": {"fdmvqs": {"peaks_k": True}}}),
         "policies.fdmvqs.peaks_k"),
    _put("bool: mptcp idle_timeout_s", "/params", json_body({"mptcp": {"idle_timeout_s": True}}),
         "mptcp.idle_timeout_s"),
    _put("bool: policy gap", POLICY, json_body({"flowlet_gap_us": True}), "policy.flowlet_gap_us"),
    _put("bool: policy params beta", POLICY, json_body({"name": "llhd", "params": {"beta": True}}),
         "policy.params.beta"),
    _put("bool: class id", "/classes", _classes(id=True), "classes[1].id"),
    _put("bool: class priority", "/classes", _classes(priority=True), "classes[1].priority"),
    _put("bool: default class priority", "/classes",
         json_body({"classes": [{"id": 0, "name": "default", "priority": False}]}),
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
    _put("huge: 5000 keys", WEIGHT, json_body({f"k{i:04d}": 0 for i in range(5000)}), "k0000"),
    _put("deep: 40 levels", WEIGHT, json_body({"weight": _nested(40)})),
    _put("deep: params 40 levels", "/params",
         json_body({"policies": {"llhd": {"beta": _nested(40)}}})),
    _put("deep: 20000 arrays", WEIGHT, b'{"weight": ' + b"[" * 20000 + b"]" * 20000 + b"}"),
    _put("deep: 60000 unclosed", WEIGHT, b"[" * 60000),
    _put("deep: params nest valid depth", POLICY,
         json_body({"name": "llhd", "params": {"x": _nested(10)}}), "policy.params.x"),
    # unknown ids and resources
    _get("id: GET unknown path", f"/paths/{UNKNOWN_ID}"),
    _put("id: PUT unknown path weight", f"/paths/{UNKNOWN_ID}/weight", json_body({"weight": 1}),
         None, 404),
    _put("id: PUT unknown path admin", f"/paths/{UNKNOWN_ID}/admin", json_body({"state": "up"}),
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
    _put("id: PUT policy of class 64", "/classes/64/policy", json_body({"lm3": False}), None, 404),
    _get("id: unknown MPTCP connection", f"/mptcp/connections/{UNKNOWN_ID}"),
    _get("id: no such resource", "/nothing/here"),
    # the write token
    _put("token: missing", WEIGHT, json_body({"weight": 1}), None, 401, auth="none"),
    _put("token: missing, bad body", WEIGHT, b"{not json", None, 401, auth="none"),
    _put("token: wrong", WEIGHT, json_body({"weight": 1}), None, 403,
         headers=(*JSON_CT, ("Authorization", "Bearer wrong-token")), auth="headers"),
    _put("token: Basic scheme", WEIGHT, json_body({"weight": 1}), None, 401,
         headers=(*JSON_CT, ("Authorization", "Basic dXNlcjpwYXNz")), auth="headers"),
    _put("token: empty Bearer", WEIGHT, json_body({"weight": 1}), None, 401,
         headers=(*JSON_CT, ("Authorization", "Bearer")), auth="headers"),
    _put("token: missing on classes", "/classes", _classes(), None, 401, auth="none"),
    _put("token: wrong on params", "/params", json_body({}), None, 403,
         headers=(*JSON_CT, ("Authorization", "Bearer wrong-token")), auth="headers"),
    _put("token: missing on policy", POLICY, json_body({"lm3": False}), None, 401, auth="none"),
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
    _put("content-type: XML", WEIGHT, json_body({"weight": 1}), None, 415,
         headers=(("Content-Type", "application/xml"),)),
    _put("content-type: multipart", WEIGHT, json_body({"weight": 1}), None, 415,
         headers=(("Content-Type", "multipart/form-data; boundary=x"),)),
    _put("content-type: latin-1 charset", WEIGHT, json_body({"weight": 1}), None, 415,
         headers=(("Content-Type", "application/json; charset=latin-1"),)),
    # the HTTP server's own limits and malformed HTTP
    Case("http: 70 KiB header", "GET", "/paths", None, (("X-Big", "a" * 70_000),), 431, None),
    _raw("http: malformed start line", b"GARBAGE\r\n\r\n"),
    _raw("http: invalid header line", b"GET /paths HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n"),
    _raw("http: bad chunk size", b"PUT /paths/1/weight HTTP/1.1\r\nHost: x\r\n"
         b"Transfer-Encoding: chunked\r\n\r\nzz\r\n"),
    _raw("http: two Content-Lengths", b"PUT /paths/1/weight HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 5\r\nContent-Length: 7\r\n\r\n12345"),
    # the Host check (DNS rebinding) and a Host that is no host
    _raw("host: a foreign name", b"GET /paths HTTP/1.1\r\nHost: rebound.example\r\n"
         b"Connection: close\r\n\r\n", 421),
    _raw("host: two values", b"GET /paths HTTP/1.1\r\nHost: 127.0.0.1, rebound.example\r\n"
         b"Connection: close\r\n\r\n", 421),
    _raw("http: Content-Length 1 GiB", b"PUT /paths/1/weight HTTP/1.1\r\nHost: x\r\n"
         b"Content-Length: 1073741824\r\n\r\n", 413, "body"),
)
