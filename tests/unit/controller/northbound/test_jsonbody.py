"""northbound/jsonbody.py: strict JSON request bodies, refused with the field named."""

from __future__ import annotations

import pytest
from webob import Request

from mpsched.controller.northbound.jsonbody import HttpError, read_json_object


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
