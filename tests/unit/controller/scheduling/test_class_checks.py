"""src/mpsched/controller/scheduling/class_checks.py: the field checks of traffic classes (each
error names
the field), the frozen parameters' equality and hashing, and thawing them back to JSON types."""

from __future__ import annotations

import math

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.scheduling.class_checks import (
    FrozenParams,
    check_bool,
    check_int,
    check_name,
    check_params,
    check_port_range,
    check_prefix,
    check_proto,
    check_target,
    thaw,
)


def test_frozen_params_are_immutable_hashable_and_equal_to_their_json():
    p = FrozenParams({"a": {"b": [1, 2]}, "c": 0.5})
    assert isinstance(p["a"], FrozenParams) and p["a"]["b"] == (1, 2)
    assert p == {"a": {"b": [1, 2]}, "c": 0.5}
    assert hash(p) == hash(FrozenParams({"c": 0.5, "a": {"b": [1, 2]}}))  # key order aside
    assert p != FrozenParams({"a": {"b": [1, 3]}, "c": 0.5})
    assert len(p) == 2 and list(p) == ["a", "c"]
    with pytest.raises(TypeError):
        p["c"] = 1  # type: ignore[index]
    assert thaw(p) == {"a": {"b": [1, 2]}, "c": 0.5}
    assert type(thaw(p)["a"]["b"]) is list


@pytest.mark.parametrize(
    ("check", "value", "message"),
    [
        (lambda v: check_int(v, "f", 0, 7), True, "must be an integer 0..7, got True"),
        (lambda v: check_int(v, "f", 0, 7), 8, "must be an integer 0..7, got 8"),
        (lambda v: check_bool(v, "f"), 1, "must be true or false"),
        (lambda v: check_name(v, "f"), "a b", "1..32 characters"),
        (lambda v: check_name(v, "f"), "x" * 33, "1..32 characters"),
        (lambda v: check_prefix(v, "f"), "10.0.0.1/24", "host bits must be zero"),
        (lambda v: check_prefix(v, "f"), "10.0.0", "IPv4 prefix"),
        (lambda v: check_proto(v, "f"), "sctp", "one of ['icmp', 'tcp', 'udp']"),
        (lambda v: check_proto(v, "f"), 256, "0..255"),
        (lambda v: check_port_range(v, "f"), [9, 8], "is empty (lo > hi)"),
        (lambda v: check_port_range(v, "f"), "80", "a port 0..65535 or a range"),
        (lambda v: check_target(v, "f", 0.0, 1.0), 1.5, "must be a number 0..1, got 1.5"),
        (lambda v: check_target(v, "f", 0.0, 1.0), True, "must be a number 0..1 or null"),
        (lambda v: check_target(v, "f", 0.0, 1.0), math.nan, "must be a number 0..1"),
    ],
)
def test_bad_values_name_the_field(check, value, message):
    with pytest.raises(FieldError) as err:
        check(value)
    assert err.value.field == "f"
    assert message in err.value.message


def test_good_values_are_normalised():
    assert check_int(7, "f", 0, 7) == 7
    assert check_name("video.hd-1", "f") == "video.hd-1"
    assert check_prefix("10.0.1.0/24", "f") == "10.0.1.0/24"
    assert check_prefix("10.0.1.7", "f") == "10.0.1.7/32"
    assert (check_proto("UDP", "f"), check_proto(6, "f")) == (17, 6)
    assert check_port_range(80, "f") == (80, 80)
    assert check_port_range([1000, 2000], "f") == (1000, 2000)
    target = check_target(1, "f", 0.0, 1.0)
    assert target == 1.0 and isinstance(target, float)


def test_params_are_json_objects_and_errors_name_the_nested_field():
    assert check_params({"a": [1, {"b": None}]}, "params") == {"a": [1, {"b": None}]}
    cases = [
        ([1], "params", "must be a JSON object"),
        ({"": 1}, "params", "keys must be non-empty strings"),
        ({"a": [1, math.inf]}, "params.a[1]", "must be a finite number"),
        ({"a": {"b": object()}}, "params.a.b", "unsupported value of type object"),
    ]
    for value, field, message in cases:
        with pytest.raises(FieldError) as err:
            check_params(value, "params")
        assert (err.value.field, err.value.message) == (field, message)
