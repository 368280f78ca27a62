"""REST validation against a fake backend (pure logic, no switch)."""

import json
import re

import pytest
import yaml
from webob import Request

from mpsched import addressing as ap
from mpsched.controller.app.core import NotFoundError, UnavailableError
from mpsched.controller.model.errors import FieldError
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.scheduling.classes import (
    TrafficClass,
    class_to_dict,
    classes_from_list,
    policy_to_dict,
)

POLICIES = ("ecmp", "static", "llhd", "adaptive")


class FakeBackend:
    """The controller's REST-facing methods over plain state; records what it was given."""

    def __init__(self):
        self.weights = {1: 1, 2: 1}
        self.admin = {1: "up", 2: "up"}
        self.down = False
        self.class_table: list[TrafficClass] = classes_from_list([{"id": 0, "name": "default"}])
        self.params_state = {
            "control_period_ms": 100,
            "lm3": {"sigma": 0.5, "epsilon": 0.5},
            "policies": {"llhd": {"beta": 0.001}},
        }
        self.calls: list[tuple] = []

    def _write(self):
        if self.down:
            raise UnavailableError("s1: timed out")

    def path(self, path_id):
        if path_id not in self.weights:
            raise NotFoundError(f"no path {path_id}")
        return {"id": path_id, "weight": self.weights[path_id], "admin": self.admin[path_id],
                "packets": 0, "bytes": 0, "rate_bps": 0.0}

    def paths(self):
        return [self.path(p) for p in sorted(self.weights)]

    def switches(self):
        return [{"name": "s1", "state": "ready"}]

    def telemetry(self, path_id):
        self.path(path_id)
        return {"id": path_id, "directions": {}}

    def telemetry_since(self, since, direction=None):
        self.since, self.direction = since, direction
        return {"now": 100.0, "paths": {}}

    def set_weight(self, path_id, weight):
        self.path(path_id)
        self._write()
        self.weights[path_id] = weight
        return self.path(path_id)

    def set_admin(self, path_id, up):
        self.path(path_id)
        self._write()
        self.calls.append(("set_admin", path_id, up))
        self.admin[path_id] = "up" if up else "down"
        return self.path(path_id)

    def classes(self):
        return [class_to_dict(c) for c in self.class_table]

    def _class(self, class_id):
        for c in self.class_table:
            if c.id == class_id:
                return c
        raise NotFoundError(f"no class {class_id}")

    def set_classes(self, classes):
        self.calls.append(("set_classes", classes))
        for i, c in enumerate(classes):
            if c.policy.name not in POLICIES:
                raise FieldError(f"classes[{i}].policy.name", f"no policy {c.policy.name!r}")
        self._write()
        self.class_table = list(classes)
        return self.classes()

    def traffic_class(self, class_id):
        return class_to_dict(self._class(class_id))

    def class_policy(self, class_id):
        return policy_to_dict(self._class(class_id).policy)

    def set_class_policy(self, class_id, changes):
        self.calls.append(("set_class_policy", class_id, changes))
        old = self._class(class_id)
        if changes.get("name", old.policy.name) not in POLICIES:
            raise FieldError("policy.name", f"no policy {changes['name']!r}")
        self._write()
        new = TrafficClass(old.id, old.name, old.priority, old.match, old.policy.updated(changes))
        self.class_table = [new if c.id == class_id else c for c in self.class_table]
        return policy_to_dict(new.policy)

    def adaptive(self, class_id):
        c = self._class(class_id)
        if c.policy.name != "adaptive":
            raise NotFoundError(f"class {class_id} runs {c.policy.name!r}, not the adaptive policy")
        return {"class_id": class_id, "policy": policy_to_dict(c.policy),
                "switches": {"s1": {"arm": "ecmp", "table": {}}}}

    def params(self):
        return json.loads(json.dumps(self.params_state))

    def set_params(self, changes):
        self.calls.append(("set_params", changes))

        def merge(into, new, where):
            for key, value in new.items():
                name = f"{where}.{key}" if where else key
                if key not in into:
                    raise FieldError(name, "unknown parameter")
                if isinstance(into[key], dict):
                    if not isinstance(value, dict):
                        raise FieldError(name, "must be an object")
                    merge(into[key], value, name)
                else:
                    into[key] = value

        state = self.params()
        merge(state, changes, "")
        self._write()
        self.params_state = state
        return self.params()

    def decisions(self, since, limit, pair=None):
        self.calls.append(("decisions", since, limit) + ((pair,) if pair else ()))
        entry = {"t": 10.0, "class_id": 0, "policy": "ecmp", "weights": {"1": 1, "2": 1},
                 "active": [1, 2], "mode": "weighted", "scores": {}, "reason": "start"}
        return {"now": 11.0, "decisions": [entry] if since < 10.0 else []}

    CONNECTION = {"id": 1, "since": 5.0, "server_token": "cd266215", "client_token": None,
                  "subflows": [{"src": ap.H1_IP, "sport": 40000, "dst": ap.H2_IP,
                                "dport": 5201, "initial": True, "addr_id": 0, "path_id": 2,
                                "packets": 10, "idle_s": 0.1, "fin_from": []}]}

    def mptcp_connections(self):
        return {"steering": True, "connections": [self.CONNECTION]}

    LINKS = {"leaf1-spine1": ("leaf1", "spine1")}

    def links(self):
        return [{"name": n, "a": a, "b": b, "admin": self.admin.get(n, "up")}
                for n, (a, b) in self.LINKS.items()]

    def set_link_admin(self, name, up):
        self._write()
        if name not in self.LINKS:
            raise NotFoundError(f"no link {name}")
        self.calls.append(("link_admin", name, up))
        self.admin[name] = "up" if up else "down"
        return next(link for link in self.links() if link["name"] == name)

    def pairs(self):
        return [self.pair("leaf1->leaf2")]

    def pair(self, key):
        if key != "leaf1->leaf2":
            raise NotFoundError(f"no pair {key}")
        return {"id": key, "ingress": "leaf1", "egress": "leaf2", "dst_edge": 2, "paths": [],
                "placement": {}, "telemetry": {}}

    def mptcp_connection(self, conn_id):
        if conn_id != 1:
            raise NotFoundError(f"no MPTCP connection {conn_id}")
        return self.CONNECTION


@pytest.fixture
def api():
    backend = FakeBackend()
    return RestApi(backend), backend


def call(app, method, path, body=None, raw=None, headers=None):
    request = Request.blank(path, method=method, headers=headers or {})
    if body is not None or raw is not None:
        request.body = raw if raw is not None else json.dumps(body).encode()
        request.content_type = "application/json"
    response = request.get_response(app)
    return response.status_int, json.loads(response.body) if response.body else None


def test_get_paths(api):
    app, _ = api
    status, body = call(app, "GET", "/paths")
    assert status == 200 and [p["id"] for p in body] == [1, 2]


def test_put_weight_applies(api):
    app, backend = api
    status, body = call(app, "PUT", "/paths/2/weight", {"weight": 0})
    assert status == 200 and body["weight"] == 0 and backend.weights[2] == 0


@pytest.mark.parametrize(
    ("payload", "raw", "field"),
    [
        ({"weight": 256}, None, "weight"),
        ({"weight": -1}, None, "weight"),
        ({"weight": "3"}, None, "weight"),
        ({"weight": 1.5}, None, "weight"),
        ({"weight": True}, None, "weight"),
        ({}, None, "weight"),
        ({"weight": 1, "wieght": 2}, None, "wieght"),
        (None, b"{not json", "body"),
        ([1, 2], None, "body"),
        (None, b"\xff\xfe", "body"),
    ],
)
def test_bad_body_is_400_naming_the_field(api, payload, raw, field):
    app, backend = api
    status, body = call(app, "PUT", "/paths/1/weight", payload, raw)
    assert status == 400 and body["field"] == field, body
    assert backend.weights == {1: 1, 2: 1}


def test_unknown_path_is_404(api):
    app, _ = api
    assert call(app, "PUT", "/paths/9/weight", {"weight": 1})[0] == 404
    assert call(app, "GET", "/paths/9")[0] == 404
    assert call(app, "GET", "/paths/x")[0] == 404
    assert call(app, "GET", "/nothing")[0] == 404


def test_wrong_method_is_405_with_allow(api):
    app, _ = api
    response = Request.blank("/paths", method="DELETE").get_response(app)
    assert response.status_int == 405 and response.headers["Allow"] == "GET"


def test_huge_body_is_413(api):
    app, _ = api
    status, body = call(app, "PUT", "/paths/1/weight", raw=b" " * (70 * 1024))
    assert status == 413 and body["field"] == "body"


def test_switch_not_acknowledging_is_503(api):
    app, backend = api
    backend.down = True
    status, body = call(app, "PUT", "/paths/1/weight", {"weight": 3})
    assert status == 503 and "timed out" in body["error"]


def openapi_path(template: str) -> str:
    """``/paths/{path_id}/weight`` -> ``/paths/{id}/weight``."""
    return re.sub(r"\{\w+\}", "{id}", template)


def test_openapi_is_served_and_lists_every_route(api):
    app, _ = api
    response = Request.blank("/openapi.yaml").get_response(app)
    assert response.status_int == 200
    spec = yaml.safe_load(response.body)
    described = spec["paths"]
    writes = 0
    for route in app.routes:
        path = openapi_path(route.template)
        assert path in described, path
        for method in route.methods:
            operation = described[path].get(method.lower())
            assert operation is not None, (method, path)
            if method != "GET":
                writes += 1
                assert operation.get("security") == [{"bearerAuth": []}], (method, path)
                assert "401" in operation["responses"] and "403" in operation["responses"]
    assert writes == len(WRITES)
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    for schema in ("TrafficClass", "Match", "ClassPolicy", "ParamsView", "DecisionsView", "Error"):
        assert schema in spec["components"]["schemas"]


def test_telemetry_routes(api):
    app, backend = api
    status, body = call(app, "GET", "/paths/1/telemetry")
    assert status == 200 and body["id"] == 1
    assert call(app, "GET", "/paths/9/telemetry")[0] == 404
    status, body = call(app, "GET", "/telemetry?since=12.5")
    assert status == 200 and (backend.since, backend.direction) == (12.5, None)
    status, body = call(app, "GET", "/telemetry?since=1&direction=leaf1-%3Eleaf3")
    assert status == 200 and (backend.since, backend.direction) == (1, "leaf1->leaf3")
    for bad in ("x", "-1", "nan"):
        status, body = call(app, "GET", f"/telemetry?since={bad}")
        assert status == 400 and body["field"] == "since", bad


def test_index_lists_the_resources(api):
    app, _ = api
    status, body = call(app, "GET", "/")
    assert status == 200
    assert {"paths", "telemetry", "switches", "classes", "params", "decisions", "openapi"} <= set(
        body
    )


def test_non_ascii_digit_id_is_404(api):
    app, _ = api
    assert call(app, "GET", "/paths/%C2%B2")[0] == 404
    assert call(app, "GET", "/classes/%C2%B2")[0] == 404


# -- path admin ----------------------------------------------------------------


def test_put_admin(api):
    app, backend = api
    status, body = call(app, "PUT", "/paths/2/admin", {"state": "down"})
    assert status == 200 and body["admin"] == "down"
    status, body = call(app, "PUT", "/paths/2/admin", {"state": "up"})
    assert status == 200 and body["admin"] == "up"
    assert backend.calls == [("set_admin", 2, False), ("set_admin", 2, True)]


@pytest.mark.parametrize(
    ("payload", "field"),
    [({}, "state"), ({"state": "UP"}, "state"), ({"state": True}, "state"),
     ({"state": "up", "why": 1}, "why"), ([], "body")],
)
def test_put_admin_bad_body(api, payload, field):
    app, backend = api
    status, body = call(app, "PUT", "/paths/1/admin", payload)
    assert status == 400 and body["field"] == field
    assert backend.calls == []


def test_put_admin_unknown_path_and_unavailable(api):
    app, backend = api
    assert call(app, "PUT", "/paths/9/admin", {"state": "up"})[0] == 404
    assert call(app, "PUT", "/paths/x/admin", {"state": "up"})[0] == 404
    backend.down = True
    assert call(app, "PUT", "/paths/1/admin", {"state": "down"})[0] == 503


# -- classes -------------------------------------------------------------------

VIDEO = {"id": 5, "name": "video", "priority": 7, "match": {"dscp": 34, "proto": "udp"},
         "policy": {"name": "llhd", "params": {"beta": 0.01}, "lm3": True}}


def test_classes_get_and_put(api):
    app, backend = api
    status, body = call(app, "GET", "/classes")
    assert status == 200 and [c["id"] for c in body] == [0]
    status, body = call(app, "PUT", "/classes", {"classes": [{"id": 0, "name": "default"}, VIDEO]})
    assert status == 200 and [c["id"] for c in body] == [0, 5]
    assert body[1]["match"] == {"dscp": 34, "proto": 17}
    (_, given), = backend.calls
    assert all(isinstance(c, TrafficClass) for c in given) and given[1].policy.lm3
    status, body = call(app, "GET", "/classes/5")
    assert status == 200 and body["name"] == "video" and body["priority"] == 7


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ([], "body"),
        ({}, "classes"),
        ({"classes": [], "extra": 1}, "extra"),
        ({"classes": {}}, "classes"),
        ({"classes": []}, "classes"),
        ({"classes": [{"id": 1, "name": "x"}]}, "classes"),
        ({"classes": [{"id": 0, "name": "d"}, {"id": 0, "name": "e"}]}, "classes[1].id"),
        ({"classes": [{"id": 0, "name": "d"}, {"id": 1, "name": "d"}]}, "classes[1].name"),
        ({"classes": [{"id": 0, "name": "d", "match": {"dscp": 1}}]}, "classes[0].match"),
        ({"classes": [{"id": 0, "name": "d"}, {**VIDEO, "match": {"src_port": [9, 1]}}]},
         "classes[1].match.src_port"),
        ({"classes": [{"id": 0, "name": "d"}, {**VIDEO, "policy": {"flowlet_gap_us": -1}}]},
         "classes[1].policy.flowlet_gap_us"),
    ],
)
def test_put_classes_bad_body_is_400_naming_the_field(api, payload, field):
    app, backend = api
    status, body = call(app, "PUT", "/classes", payload)
    assert status == 400 and body["field"] == field, body
    assert backend.calls == []


def test_put_classes_refused_by_the_backend(api):
    app, backend = api
    bad = {**VIDEO, "policy": {"name": "nosuch"}}
    status, body = call(app, "PUT", "/classes", {"classes": [{"id": 0, "name": "d"}, bad]})
    assert status == 400 and body["field"] == "classes[1].policy.name"
    assert "nosuch" in body["error"]
    backend.down = True
    status, body = call(app, "PUT", "/classes", {"classes": [{"id": 0, "name": "d"}]})
    assert status == 503


@pytest.mark.parametrize("class_id", ["1", "64", "x", "-1", "1.0"])
def test_unknown_class_is_404(api, class_id):
    app, _ = api
    assert call(app, "GET", f"/classes/{class_id}")[0] == 404
    assert call(app, "GET", f"/classes/{class_id}/policy")[0] == 404
    assert call(app, "PUT", f"/classes/{class_id}/policy", {"lm3": True})[0] == 404


def test_class_policy_get_and_partial_put(api):
    app, backend = api
    status, body = call(app, "GET", "/classes/0/policy")
    assert status == 200 and body == {"name": "ecmp", "params": {}, "lm3": False,
                                      "flowlet_gap_us": 0}
    status, body = call(app, "PUT", "/classes/0/policy", {"lm3": True, "flowlet_gap_us": 900})
    assert status == 200 and body["lm3"] is True and body["flowlet_gap_us"] == 900
    assert body["name"] == "ecmp"
    assert backend.calls == [("set_class_policy", 0, {"lm3": True, "flowlet_gap_us": 900})]
    status, body = call(app, "PUT", "/classes/0/policy", {"name": "llhd", "params": {"beta": 1}})
    assert status == 200 and body["name"] == "llhd" and body["params"] == {"beta": 1}
    assert body["lm3"] is True


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ([], "body"),
        ({"gap": 1}, "policy.gap"),
        ({"name": ""}, "policy.name"),
        ({"name": 7}, "policy.name"),
        ({"params": []}, "policy.params"),
        ({"params": {"beta": float("nan")}}, "policy.params.beta"),
        ({"lm3": "yes"}, "policy.lm3"),
        ({"flowlet_gap_us": -1}, "policy.flowlet_gap_us"),
        ({"flowlet_gap_us": 1.5}, "policy.flowlet_gap_us"),
        ({"flowlet_gap_us": True}, "policy.flowlet_gap_us"),
    ],
)
def test_put_class_policy_bad_body(api, payload, field):
    app, backend = api
    status, body = call(app, "PUT", "/classes/0/policy", payload)
    assert status == 400 and body["field"] == field, body
    assert backend.calls == []


def test_put_class_policy_unknown_policy_is_400(api):
    app, _ = api
    status, body = call(app, "PUT", "/classes/0/policy", {"name": "nosuch"})
    assert status == 400 and body["field"] == "policy.name"


# -- params and decisions --------------------------------------------------------


def test_params_get_and_partial_put(api):
    app, backend = api
    status, body = call(app, "GET", "/params")
    assert status == 200 and body["policies"]["llhd"]["beta"] == 0.001
    status, body = call(app, "PUT", "/params", {"policies": {"llhd": {"beta": 0.01}}})
    assert status == 200 and body["policies"]["llhd"]["beta"] == 0.01
    assert body["control_period_ms"] == 100
    assert backend.calls == [("set_params", {"policies": {"llhd": {"beta": 0.01}}})]


def test_params_bad_bodies(api):
    app, _ = api
    assert call(app, "PUT", "/params", [1])[1]["field"] == "body"
    assert call(app, "PUT", "/params", raw=b"{")[1]["field"] == "body"
    status, body = call(app, "PUT", "/params", {"lm3": {"gamma": 1}})
    assert status == 400 and body["field"] == "lm3.gamma"


def test_mptcp_connections_and_one_connection(api):
    app, _ = api
    status, body = call(app, "GET", "/mptcp/connections")
    assert status == 200 and body["steering"] is True
    assert body["connections"][0]["subflows"][0]["path_id"] == 2
    status, body = call(app, "GET", "/mptcp/connections/1")
    assert status == 200 and body["server_token"] == "cd266215"
    for bad in ("2", "x", "-1"):
        status, body = call(app, "GET", f"/mptcp/connections/{bad}")
        assert status == 404, bad
    status, _ = call(app, "PUT", "/mptcp/connections", {})
    assert status == 405


def test_decisions(api):
    app, backend = api
    status, body = call(app, "GET", "/decisions")
    assert status == 200 and body["decisions"][0]["policy"] == "ecmp"
    status, body = call(app, "GET", "/decisions?since=10.5&limit=1000")
    assert status == 200 and body["decisions"] == []
    assert backend.calls == [("decisions", 0.0, 100), ("decisions", 10.5, 1000)]


@pytest.mark.parametrize(
    ("query", "field"),
    [("since=x", "since"), ("since=-1", "since"), ("since=nan", "since"), ("since=inf", "since"),
     ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=x", "limit"), ("limit=1.5", "limit"),
     ("limit=-3", "limit"), ("limit=", "limit")],
)
def test_decisions_bad_query(api, query, field):
    app, backend = api
    status, body = call(app, "GET", f"/decisions?{query}")
    assert status == 400 and body["field"] == field
    assert backend.calls == []


# -- the write token ---------------------------------------------------------------

WRITES = [
    ("PUT", "/paths/1/weight", {"weight": 2}),
    ("PUT", "/paths/1/admin", {"state": "down"}),
    ("PUT", "/classes", {"classes": [{"id": 0, "name": "default"}]}),
    ("PUT", "/classes/0/policy", {"lm3": True}),
    ("PUT", "/params", {"control_period_ms": 50}),
    ("PUT", "/links/leaf1-spine1/admin", {"state": "down"}),
]
READS = ["/", "/paths", "/paths/1", "/paths/1/telemetry", "/telemetry", "/switches", "/classes",
         "/classes/0", "/classes/0/policy", "/params", "/decisions", "/openapi.yaml", "/links",
         "/pairs", "/pairs/leaf1-%3Eleaf2"]


@pytest.fixture
def guarded():
    backend = FakeBackend()
    return RestApi(backend, token="s3cret"), backend


@pytest.mark.parametrize(("method", "path", "payload"), WRITES)
def test_write_without_token_is_401(guarded, method, path, payload):
    app, backend = guarded
    request = Request.blank(path, method=method, body=json.dumps(payload).encode())
    response = request.get_response(app)
    assert response.status_int == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert json.loads(response.body)["error"]
    assert backend.calls == [] and backend.weights[1] == 1


@pytest.mark.parametrize(("method", "path", "payload"), WRITES)
def test_write_with_wrong_or_malformed_token(guarded, method, path, payload):
    app, backend = guarded
    for header, status in [("Bearer nope", 403), ("Basic s3cret", 401), ("s3cret", 401),
                           ("Bearer ", 401)]:
        got, body = call(app, method, path, payload, headers={"Authorization": header})
        assert got == status and "error" in body, header
    assert backend.calls == [] and backend.weights[1] == 1


@pytest.mark.parametrize(("method", "path", "payload"), WRITES)
def test_write_with_token_is_200(guarded, method, path, payload):
    app, _ = guarded
    status, _ = call(app, method, path, payload, headers={"Authorization": "Bearer s3cret"})
    assert status == 200


def test_token_checked_before_the_body(guarded):
    app, _ = guarded
    status, _ = call(app, "PUT", "/paths/1/weight", raw=b"{bad")
    assert status == 401
    status, body = call(app, "PUT", "/paths/1/weight", raw=b"{bad",
                        headers={"Authorization": "Bearer s3cret"})
    assert status == 400 and body["field"] == "body"


@pytest.mark.parametrize("path", READS)
def test_reads_stay_open_with_a_token(guarded, path):
    app, _ = guarded
    assert Request.blank(path).get_response(app).status_int == 200


@pytest.mark.parametrize(("method", "path", "payload"), WRITES)
def test_writes_open_without_a_token(api, method, path, payload):
    app, _ = api
    assert call(app, method, path, payload)[0] == 200


def test_class_adaptive_view_and_qos_target(api):
    app, backend = api
    status, body = call(app, "GET", "/classes/0/adaptive")
    assert status == 404 and "not the adaptive policy" in body["error"]
    assert call(app, "GET", "/classes/9/adaptive")[0] == 404
    classes = [{"id": 0, "name": "default", "policy": {"name": "adaptive"},
                "qos_target": {"max_loss": 0.01, "min_goodput_frac": 0.8}}]
    status, body = call(app, "PUT", "/classes", {"classes": classes})
    assert status == 200 and body[0]["qos_target"]["max_loss"] == 0.01
    status, body = call(app, "GET", "/classes/0/adaptive")
    assert status == 200 and body["switches"]["s1"]["arm"] == "ecmp"
    assert call(app, "PUT", "/classes/0/adaptive", {})[0] == 405
    bad = [{"id": 0, "name": "default", "qos_target": {"max_loss": 1.5}}]
    status, body = call(app, "PUT", "/classes", {"classes": bad})
    assert status == 400 and body["field"] == "classes[0].qos_target.max_loss"


def test_links_and_their_admin_state(api):
    app, backend = api
    status, body = call(app, "GET", "/links")
    assert status == 200 and body == [{"name": "leaf1-spine1", "a": "leaf1", "b": "spine1",
                                       "admin": "up"}]
    status, body = call(app, "PUT", "/links/leaf1-spine1/admin", {"state": "down"})
    assert status == 200 and body["admin"] == "down"
    assert backend.calls[-1] == ("link_admin", "leaf1-spine1", False)
    assert call(app, "PUT", "/links/nope/admin", {"state": "up"})[0] == 404
    status, body = call(app, "PUT", "/links/leaf1-spine1/admin", {"state": "sideways"})
    assert status == 400 and body["field"] == "state"
    backend.down = True
    assert call(app, "PUT", "/links/leaf1-spine1/admin", {"state": "up"})[0] == 503


def test_pairs_by_their_id(api):
    app, _ = api
    status, body = call(app, "GET", "/pairs")
    assert status == 200 and [p["id"] for p in body] == ["leaf1->leaf2"]
    status, body = call(app, "GET", "/pairs/leaf1-%3Eleaf2")  # the id URL-encoded
    assert status == 200 and (body["ingress"], body["dst_edge"]) == ("leaf1", 2)
    assert call(app, "GET", "/pairs/leaf1->leaf2")[0] == 200  # as curl sends it
    assert call(app, "GET", "/pairs/leaf2->leaf1")[0] == 404


def test_decisions_of_one_pair(api):
    app, backend = api
    backend.calls.clear()
    assert call(app, "GET", "/decisions?pair=leaf1-%3Eleaf2")[0] == 200
    assert backend.calls == [("decisions", 0.0, 100, "leaf1->leaf2")]
