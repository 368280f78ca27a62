"""mpsched.p4rt.reconcile: canonical comparison of table entries and the difference to write."""

from __future__ import annotations

import pytest
from p4.v1 import p4runtime_pb2

from mpsched.p4rt.reconcile import Diff, canonical_bytes, config_cookie, diff, entry_key

INSERT, MODIFY, DELETE = (
    p4runtime_pb2.Update.INSERT,
    p4runtime_pb2.Update.MODIFY,
    p4runtime_pb2.Update.DELETE,
)


def entry(table: int, key: bytes, port: bytes, priority: int = 0) -> p4runtime_pb2.TableEntry:
    e = p4runtime_pb2.TableEntry(table_id=table, priority=priority)
    e.match.add(field_id=1).exact.value = key
    e.action.action.action_id = 7
    e.action.action.params.add(param_id=1, value=port)
    return e


def test_canonical_bytes():
    assert canonical_bytes(b"\x00\x00\x01\x02") == b"\x01\x02"
    assert canonical_bytes(b"\x00\x00") == b"\x00"
    assert canonical_bytes(b"") == b"\x00"
    assert canonical_bytes(b"\x10\x00") == b"\x10\x00"


def test_an_entry_read_back_in_short_encoding_is_the_same_entry():
    written = entry(1, b"\x00\x01", b"\x00\x02")
    read = entry(1, b"\x01", b"\x02")
    assert entry_key(written) == entry_key(read)
    d = diff([written], [read])
    assert (d.insert, d.modify, d.delete, d.unchanged) == ([], [], [], 1)


def test_missing_changed_and_stray_entries():
    wanted = [entry(1, b"\x01", b"\x02"), entry(1, b"\x02", b"\x03"), entry(2, b"\x01", b"\x01")]
    held = [entry(1, b"\x02", b"\x04"), entry(2, b"\x01", b"\x01"), entry(2, b"\x09", b"\x01")]
    d = diff(wanted, held)
    assert [entry_key(e) for e in d.insert] == [entry_key(wanted[0])]
    assert d.modify == [wanted[1]]  # same key, another action parameter
    assert [entry_key(e) for e in d.delete] == [entry_key(held[2])]
    assert d.unchanged == 1
    assert d.summary() == "1 inserted, 1 modified, 1 deleted, 1 kept"


def test_priority_is_part_of_the_key():
    d = diff([entry(1, b"\x01", b"\x02", priority=5)], [entry(1, b"\x01", b"\x02", priority=6)])
    assert len(d.insert) == 1 and len(d.delete) == 1


def test_default_entries_read_back_are_never_deleted():
    default = p4runtime_pb2.TableEntry(table_id=1, is_default_action=True)
    assert diff([], [default]).delete == []


def test_updates_insert_then_modify_then_delete_without_action_on_delete():
    d = Diff(
        insert=[entry(1, b"\x01", b"\x01")],
        modify=[entry(1, b"\x02", b"\x01")],
        delete=[entry(1, b"\x03", b"\x01")],
    )
    updates = d.updates()
    assert [kind for kind, _ in updates] == [INSERT, MODIFY, DELETE]
    assert not updates[2][1].table_entry.HasField("action")
    assert updates[0][1].table_entry.HasField("action")


def test_two_desired_entries_with_one_key_are_refused():
    with pytest.raises(ValueError, match="two desired entries"):
        diff([entry(1, b"\x01", b"\x01"), entry(1, b"\x00\x01", b"\x02")], [])


def test_the_cookie_names_the_program():
    a = config_cookie(b"p4info", b"{json}")
    assert a == config_cookie(b"p4info", b"{json}")
    assert 0 <= a < 2**64
    assert a != config_cookie(b"p4info", b"{json2}")
    assert a != config_cookie(b"p4infox", b"{json}")
    assert config_cookie(b"ab", b"c") != config_cookie(b"a", b"bc")  # the boundary counts
