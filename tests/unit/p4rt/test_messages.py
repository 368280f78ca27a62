"""P4Runtime messages by P4Info names (src/mpsched/p4rt/messages.py), on the fake server's
synthetic P4Info (tests/fake_p4rt.py)."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from mpsched import addressing as ap
from mpsched.p4rt.messages import (
    TableEntry,
    decode_digest,
    encode_value,
    packet_out_message,
    param_value,
    set_field_match,
    table_entry_message,
)
from mpsched.p4rt.p4info import decode_uint
from mpsched.p4rt.pipeline import Pipeline


def test_values_encode_by_their_form() -> None:
    # canonical byte strings (P4Runtime §8.4: no leading zero bytes)
    assert encode_value(ap.H1_MAC, 48) == bytes.fromhex("0a000101")
    assert encode_value(ap.H1_IP, 32) == bytes([10, 0, 1, 1])
    assert encode_value(b"\x07", 8) == b"\x07"
    assert decode_uint(encode_value(300, 16)) == 300
    with pytest.raises(ValueError, match="cannot encode"):
        encode_value("nonsense", 8)


def test_match_kinds() -> None:
    fm = p4runtime_pb2.FieldMatch()
    set_field_match(fm, "LPM", (ap.H2_IP, 24), 32, "t.dst")
    assert fm.lpm.prefix_len == 24 and fm.lpm.value == bytes([10, 0, 2, 1])
    fm = p4runtime_pb2.FieldMatch()
    set_field_match(fm, "TERNARY", (1, 3), 8, "t.x")
    assert decode_uint(fm.ternary.mask) == 3
    with pytest.raises(ValueError, match="EXACT field t.x takes one value"):
        set_field_match(p4runtime_pb2.FieldMatch(), "EXACT", (1, 2), 8, "t.x")
    with pytest.raises(ValueError, match="LPM field t.x takes a pair"):
        set_field_match(p4runtime_pb2.FieldMatch(), "LPM", 1, 8, "t.x")
    with pytest.raises(ValueError, match="OPTIONAL of t.x not supported"):
        set_field_match(p4runtime_pb2.FieldMatch(), "OPTIONAL", 1, 8, "t.x")


def test_table_entry_by_names(p4info) -> None:
    entry = Pipeline(p4info).path_nexthop(2, 1, 5)
    message = table_entry_message(p4info, entry)
    assert message.table_id == p4info.table_id(entry.table)
    assert message.action.action.action_id == p4info.action_id(entry.action)
    (param,) = message.action.action.params
    assert param_value(message, param.param_id) == 5
    with pytest.raises(KeyError):
        param_value(message, 999)


def test_table_entry_parameters_checked(p4info) -> None:
    entry = Pipeline(p4info).path_nexthop(2, 1, 5)
    extra = TableEntry(entry.table, entry.match, entry.action, {**entry.params, "bogus": 1})
    with pytest.raises(ValueError, match=r"has no parameter\(s\) \['bogus'\]"):
        table_entry_message(p4info, extra)


def test_packet_out_needs_every_metadata_field(p4info) -> None:
    names = [f.name for f in p4info.packet_metadata("packet_out")]
    message = packet_out_message(p4info, b"x", dict.fromkeys(names, 1))
    assert message.packet.payload == b"x" and len(message.packet.metadata) == len(names)
    with pytest.raises(ValueError, match="packet_out needs metadata"):
        packet_out_message(p4info, b"x", {})
    with pytest.raises(ValueError, match="packet_out has no metadata"):
        packet_out_message(p4info, b"x", {**dict.fromkeys(names, 1), "bogus": 2})


def test_digest_of_another_id_refused(p4info) -> None:
    digest_list = p4runtime_pb2.DigestList(digest_id=12345)
    name = p4info.message.digests[0].preamble.name
    with pytest.raises(Exception, match="is not"):
        decode_digest(p4info, name, digest_list)
