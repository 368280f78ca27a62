"""northbound/bodies.py: request bodies and query parameters, refused with the field named."""

from __future__ import annotations

import pytest
from webob import Request

from mpsched.controller.northbound.bodies import (
    MAX_DECISIONS,
    HttpError,
    parse_admin,
    parse_weight,
    query_limit,
    query_since,
    read_json_object,
)


def put(body: bytes, content_type: str = "application/json") -> Request:
    return Request.blank("/", method="PUT", body=body, content_type=content_type)


def test_a_json_object_is_read_and_nan_refused_naming_its_field():
    assert read_json_object(put(b'{"weight": 3}')) == {"weight": 3}
    with pytest.raises(HttpError) as raised:
        read_json_object(put(b'{"a": {"b": NaN}}'))
    assert (raised.value.status, raised.value.field) == (400, "a.b")


def test_other_media_types_are_415():
    with pytest.raises(HttpError) as raised:
        read_json_object(put(b"{}", "application/xml"))
    assert raised.value.status == 415


def test_weight_and_admin_bodies():
    assert parse_weight({"weight": 0}) == 0 and parse_admin({"state": "down"}) is False
    with pytest.raises(HttpError, match="unknown field 'x'"):
        parse_weight({"weight": 1, "x": 2})
    with pytest.raises(HttpError):
        parse_weight({"weight": True})


def test_query_since_and_limit():
    assert query_since(Request.blank("/?since=1.5")) == 1.5
    assert query_limit(Request.blank("/")) == 100
    for bad in ("0", str(MAX_DECISIONS + 1), "x"):
        with pytest.raises(HttpError) as raised:
            query_limit(Request.blank(f"/?limit={bad}"))
        assert raised.value.field == "limit"
