"""REST validation against a fake backend (pure logic, no switch)."""

import json

import pytest
from webob import Request

from mpsched.controller.core import NotFoundError, UnavailableError
from mpsched.controller.rest import RestApi


class FakeBackend:
    def __init__(self):
        self.weights = {1: 1, 2: 1}
        self.down = False

    def path(self, path_id):
        if path_id not in self.weights:
            raise NotFoundError(f"no path {path_id}")
        return {"id": path_id, "weight": self.weights[path_id], "packets": 0, "bytes": 0,
                "rate_bps": 0.0}

    def paths(self):
        return [self.path(p) for p in sorted(self.weights)]

    def switches(self):
        return [{"name": "s1", "state": "ready"}]

    def telemetry(self, path_id):
        self.path(path_id)
        return {"id": path_id, "directions": {}}

    def telemetry_since(self, since):
        self.since = since
        return {"now": 100.0, "paths": {}}

    def set_weight(self, path_id, weight):
        self.path(path_id)
        if self.down:
            raise UnavailableError("s1: timed out")
        self.weights[path_id] = weight
        return self.path(path_id)


@pytest.fixture
def api():
    backend = FakeBackend()
    return RestApi(backend), backend


def call(app, method, path, body=None, raw=None):
    request = Request.blank(path, method=method)
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


def test_openapi_is_served_and_lists_every_route(api):
    app, _ = api
    response = Request.blank("/openapi.yaml").get_response(app)
    text = response.body.decode()
    assert response.status_int == 200
    for route in ("/paths:", "/paths/{id}:", "/paths/{id}/weight:", "/paths/{id}/telemetry:",
                  "/telemetry:", "/switches:"):
        assert route in text


def test_telemetry_routes(api):
    app, backend = api
    status, body = call(app, "GET", "/paths/1/telemetry")
    assert status == 200 and body["id"] == 1
    assert call(app, "GET", "/paths/9/telemetry")[0] == 404
    status, body = call(app, "GET", "/telemetry?since=12.5")
    assert status == 200 and backend.since == 12.5
    for bad in ("x", "-1", "nan"):
        status, body = call(app, "GET", f"/telemetry?since={bad}")
        assert status == 400 and body["field"] == "since", bad
