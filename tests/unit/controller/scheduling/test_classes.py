"""Traffic classes and the write token (pure logic)."""

import os
import stat

import pytest

from mpsched import addressing as ap
from mpsched.controller.model.errors import FieldError
from mpsched.controller.northbound import auth
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    MAX_CLASSES,
    ClassPolicy,
    Match,
    TrafficClass,
    class_from_dict,
    class_to_dict,
    classes_from_list,
    policy_changes,
    policy_from_dict,
    policy_to_dict,
)

DEFAULT = {"id": 0, "name": "default"}
VIDEO = {
    "id": 3,
    "name": "video",
    "priority": 10,
    "match": {
        "dscp": 34,
        "src": "10.0.0.0/8",
        "dst": ap.host_ip(1, 2),
        "proto": "udp",
        "src_port": 5004,
        "dst_port": [6000, 6100],
    },
    "policy": {"name": "llhd", "params": {"beta": 0.001}, "lm3": True, "flowlet_gap_us": 200},
}


def field_of(fn, *args):
    with pytest.raises(FieldError) as info:
        fn(*args)
    return info.value.field


def test_constants():
    assert MAX_CLASSES == 64 and DEFAULT_CLASS_ID == 0


def test_class_from_dict_normalises():
    c = class_from_dict(VIDEO)
    assert c.match == Match(
        dscp=34, src="10.0.0.0/8", dst=ap.host_prefix(1, 2), proto=17,
        src_port=(5004, 5004), dst_port=(6000, 6100),
    )
    assert c.policy.name == "llhd" and c.policy.params == {"beta": 0.001}
    assert c.policy.lm3 is True and c.policy.flowlet_gap_us == 200
    assert c.priority == 10


def test_defaults():
    c = class_from_dict({"id": 1, "name": "bulk"})
    assert c.priority == 1 and c.match == Match() and c.policy == ClassPolicy()
    assert ClassPolicy().name == "ecmp" and ClassPolicy().flowlet_gap_us == 0  # automatic
    assert class_from_dict(DEFAULT).priority == 0
    assert TrafficClass(0, "default").priority == 0


def test_round_trip_and_hashable():
    classes = classes_from_list([DEFAULT, VIDEO])
    again = classes_from_list([class_to_dict(c) for c in classes])
    assert again == classes
    assert len({*classes, *again}) == 2
    as_dict = class_to_dict(classes[1])
    assert as_dict["match"]["src_port"] == [5004, 5004] and as_dict["match"]["proto"] == 17
    assert class_to_dict(classes[0])["match"] == {}


def test_params_are_frozen():
    policy = policy_from_dict({"name": "x", "params": {"a": {"b": [1, 2]}}})
    with pytest.raises(TypeError):
        policy.params["a"] = 1  # type: ignore[index]
    assert policy_to_dict(policy)["params"] == {"a": {"b": [1, 2]}}
    assert hash(policy) == hash(policy_from_dict(policy_to_dict(policy)))
    assert ClassPolicy(params={"k": 1}).params == {"k": 1}


def test_policy_updated_keeps_missing_keys():
    policy = policy_from_dict(VIDEO["policy"])
    changed = policy.updated(policy_changes({"lm3": False}))
    assert changed.lm3 is False and changed.name == "llhd" and changed.flowlet_gap_us == 200


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"id": 1}, "name"),
        ({"name": "x"}, "id"),
        ({"id": 64, "name": "x"}, "id"),
        ({"id": -1, "name": "x"}, "id"),
        ({"id": True, "name": "x"}, "id"),
        ({"id": 1.0, "name": "x"}, "id"),
        ({"id": "1", "name": "x"}, "id"),
        ({"id": 1, "name": ""}, "name"),
        ({"id": 1, "name": "a" * 33}, "name"),
        ({"id": 1, "name": "with space"}, "name"),
        ({"id": 1, "name": "x", "priority": 0}, "priority"),
        ({"id": 1, "name": "x", "priority": 1001}, "priority"),
        ({"id": 1, "name": "x", "priority": False}, "priority"),
        ({"id": 0, "name": "x", "priority": 5}, "priority"),
        ({"id": 1, "name": "x", "colour": "red"}, "colour"),
        ({"id": 1, "name": "x", "match": []}, "match"),
        ({"id": 1, "name": "x", "match": {"dscp": 64}}, "match.dscp"),
        ({"id": 1, "name": "x", "match": {"dscp": True}}, "match.dscp"),
        ({"id": 1, "name": "x", "match": {"src": "10.0.0.1/8"}}, "match.src"),
        ({"id": 1, "name": "x", "match": {"src": "10.0.0.0/33"}}, "match.src"),
        ({"id": 1, "name": "x", "match": {"dst": "300.0.0.0"}}, "match.dst"),
        ({"id": 1, "name": "x", "match": {"dst": "::1"}}, "match.dst"),
        ({"id": 1, "name": "x", "match": {"dst": 167772160}}, "match.dst"),
        ({"id": 1, "name": "x", "match": {"proto": 256}}, "match.proto"),
        ({"id": 1, "name": "x", "match": {"proto": "sctp"}}, "match.proto"),
        ({"id": 1, "name": "x", "match": {"src_port": 65536}}, "match.src_port"),
        ({"id": 1, "name": "x", "match": {"src_port": [10, 5]}}, "match.src_port"),
        ({"id": 1, "name": "x", "match": {"src_port": [1, 2, 3]}}, "match.src_port"),
        ({"id": 1, "name": "x", "match": {"dst_port": "80"}}, "match.dst_port"),
        ({"id": 1, "name": "x", "match": {"vlan": 3}}, "match.vlan"),
        ({"id": 1, "name": "x", "policy": "llhd"}, "policy"),
        ({"id": 1, "name": "x", "policy": {"name": 3}}, "policy.name"),
        ({"id": 1, "name": "x", "policy": {"lm3": 1}}, "policy.lm3"),
        ({"id": 1, "name": "x", "policy": {"flowlet_gap_us": -1}}, "policy.flowlet_gap_us"),
        ({"id": 1, "name": "x", "policy": {"flowlet_gap_us": 10_000_001}},
         "policy.flowlet_gap_us"),
        ({"id": 1, "name": "x", "policy": {"params": [1]}}, "policy.params"),
        ({"id": 1, "name": "x", "policy": {"params": {"b": float("inf")}}}, "policy.params.b"),
        ({"id": 1, "name": "x", "policy": {"gap": 3}}, "policy.gap"),
    ],
)
def test_class_from_dict_rejects_naming_the_field(data, field):
    assert field_of(class_from_dict, data, "classes[2]") == f"classes[2].{field}"


def test_field_without_prefix():
    assert field_of(class_from_dict, {"id": 1, "name": "x", "match": {"dscp": -1}}) == "match.dscp"
    assert field_of(policy_from_dict, {"flowlet_gap_us": "5"}, "policy") == "policy.flowlet_gap_us"
    assert field_of(policy_changes, {"oops": 1}) == "policy.oops"


def test_null_match_fields_are_wildcards():
    assert class_from_dict({"id": 1, "name": "x", "match": {"dscp": None}}).match == Match()


def test_policy_changes_are_partial():
    assert policy_changes({}) == {}
    assert policy_changes({"params": {"beta": 0.1}, "lm3": True}) == {
        "params": {"beta": 0.1}, "lm3": True,
    }


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"classes": []}, "classes"),
        ([], "classes"),
        ([{"id": 1, "name": "x"}], "classes"),
        ([DEFAULT, {"id": 0, "name": "again"}], "classes[1].id"),
        ([DEFAULT, {"id": 1, "name": "default"}], "classes[1].name"),
        ([DEFAULT, VIDEO, {**VIDEO, "name": "other"}], "classes[2].id"),
        ([{**DEFAULT, "match": {"dscp": 1}}], "classes[0].match"),
        ([DEFAULT, {"id": 1, "name": "x", "match": {"src_port": [9, 1]}}],
         "classes[1].match.src_port"),
        ([DEFAULT, "video"], "classes[1]"),
    ],
)
def test_classes_from_list_rejects(data, field):
    assert field_of(classes_from_list, data) == field


def test_at_most_64_classes():
    many = [DEFAULT] + [{"id": i, "name": f"c{i}"} for i in range(1, 64)]
    assert len(classes_from_list(many)) == 64
    assert field_of(classes_from_list, [*many, {"id": 5, "name": "extra"}]) == "classes"


# -- the write token ---------------------------------------------------------


def test_token_created_private_then_reused(tmp_path):
    path = tmp_path / "run" / "token-8080"
    token = auth.load_or_create_token(path)
    assert len(token) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert auth.load_or_create_token(path) == token


def test_token_read_stripped_and_empty_refused(tmp_path):
    path = tmp_path / "token"
    path.write_text("  secret\n")
    assert auth.load_or_create_token(path) == "secret"
    path.write_text("\n")
    with pytest.raises(auth.TokenFileError):
        auth.load_or_create_token(path)


def test_default_token_path(monkeypatch, tmp_path):
    monkeypatch.delenv("MPSCHED_RUN_DIR", raising=False)
    assert str(auth.default_token_path(8080)) == "/run/mpsched/token-8080"
    monkeypatch.setenv("MPSCHED_RUN_DIR", os.fspath(tmp_path))
    assert auth.default_token_path(9) == tmp_path / "token-9"


@pytest.mark.parametrize(
    ("header", "status"),
    [(None, 401), ("", 401), ("secret", 401), ("Basic secret", 401), ("Bearer", 401),
     ("Bearer  ", 401), ("Bearer wrong", 403), ("Bearer secretX", 403), ("Bearer é", 403)],
)
def test_check_refuses(header, status):
    with pytest.raises(auth.AuthError) as info:
        auth.check(header, "secret")
    assert info.value.status == status
    assert ("WWW-Authenticate" in info.value.headers) == (status == 401)


def test_check_accepts():
    auth.check("Bearer secret", "secret")
    auth.check("bearer secret", "secret")
