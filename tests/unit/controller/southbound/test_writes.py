"""southbound/writes.py: batched writes with their fallbacks, and waiting for switches; the
upserts against the fake P4Runtime server (tests/fake_p4rt.py), counting its Writes."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from mpsched.controller.model.errors import UnavailableError
from mpsched.controller.southbound.writes import (
    await_all,
    delete_all,
    insert_all,
    insert_sessions,
    upsert_all,
    upsert_forwarding,
    write_pins,
)
from mpsched.p4rt.client import CloneSession, P4RuntimeClient, P4RuntimeError, param_value
from mpsched.p4rt.p4info import decode_uint
from mpsched.p4rt.pipeline import ACTION_SET_PATH_PORT, TABLE_NEXTHOP, Pipeline

NOT_FOUND = P4RuntimeError("write failed", ["update 1: NOT_FOUND"])


class Client:
    """Fails the first batch of an operation with `first`, records what it applied."""

    def __init__(self, first: dict[str, P4RuntimeError]) -> None:
        self.first = dict(first)
        self.applied: list[tuple[str, str]] = []
        self.gone = {"b"}  # entries the switch does not have

    def _op(self, op: str, entries: tuple) -> None:
        if len(entries) > 1 and op in self.first:
            raise self.first.pop(op)
        for e in entries:
            if op in ("modify", "delete") and e in self.gone:
                raise NOT_FOUND
            self.applied.append((op, e))

    def modify(self, *entries):
        self._op("modify", entries)

    def insert(self, *entries):
        self._op("insert", entries)

    def delete(self, *entries):
        self._op("delete", entries)


@pytest.fixture
def fake(server, p4info, tmp_path):
    """A client on the fake server with a pipeline, and the server's Write count."""
    json_file = tmp_path / "p.json"
    json_file.write_text("{}")
    with P4RuntimeClient(server.address, 1, p4info) as client:
        client.set_pipeline(str(json_file))
        yield client, server.servicer


def _nexthops(p4info, ports: dict[int, int]) -> list:
    """path_nexthop entries towards edge 2: path id -> port."""
    pipeline = Pipeline(p4info)
    return [pipeline.path_nexthop(2, path, port) for path, port in ports.items()]


def _held(client: P4RuntimeClient) -> dict[int, int]:
    """The switch's path_nexthop entries: path id -> port (the action's only parameter)."""
    (port,) = client.p4info.action_params(ACTION_SET_PATH_PORT)
    return {decode_uint(e.match[-1].exact.value): param_value(e, port.id)
            for e in client.read_table(TABLE_NEXTHOP)}


def test_upsert_all_inserts_new_entries_in_one_more_write(fake, p4info):
    """Two Writes for any number of new entries (a MODIFY batch, then one INSERT of those it
    did not find), one when every entry is there; the switch ends up holding them all."""
    client, servicer = fake
    before = servicer.writes
    upsert_all(client, _nexthops(p4info, {1: 2, 2: 3, 3: 4, 4: 5}))
    assert servicer.writes - before == 2
    upsert_all(client, _nexthops(p4info, {1: 6, 2: 7}))  # all present: one MODIFY
    assert servicer.writes - before == 3
    upsert_all(client, _nexthops(p4info, {3: 8}) + _nexthops(p4info, {5: 9}))  # one new
    assert servicer.writes - before == 5
    assert _held(client) == {1: 6, 2: 7, 3: 8, 4: 5, 5: 9}


def test_insert_all_modifies_what_exists_in_one_more_write(fake, p4info):
    client, servicer = fake
    upsert_all(client, _nexthops(p4info, {1: 2, 2: 3}))
    before = servicer.writes
    insert_all(client, _nexthops(p4info, {1: 4, 2: 5, 3: 6}))
    assert servicer.writes - before == 2
    assert _held(client) == {1: 4, 2: 5, 3: 6}


def test_upsert_all_raises_other_errors_after_inserting_the_new_ones():
    client = Client({"modify": P4RuntimeError(
        "bad", ["update 0: INVALID_ARGUMENT", "update 1: NOT_FOUND"])})
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        upsert_all(client, ["a", "b"])
    assert client.applied == [("insert", "b")]


def test_an_error_naming_no_update_falls_back_to_one_entry_at_a_time():
    client = Client({"modify": P4RuntimeError("write failed", ["NOT_FOUND somewhere"])})
    upsert_all(client, ["a", "b"])
    assert client.applied == [("modify", "a"), ("insert", "b")]
    client = Client({"modify": P4RuntimeError("write failed (UNAVAILABLE)")})
    with pytest.raises(P4RuntimeError, match="UNAVAILABLE"):
        upsert_all(client, ["a", "b"])


def test_failed_updates_by_index():
    error = P4RuntimeError("write failed", ["update 0: NOT_FOUND no such entry",
                                            "update 2: ALREADY_EXISTS entry exists"])
    assert error.failed_updates() == {0: "NOT_FOUND", 2: "ALREADY_EXISTS"}
    assert P4RuntimeError("x", ["garbled"]).failed_updates() is None
    assert P4RuntimeError("x").failed_updates() is None


def test_delete_all_skips_entries_already_gone():
    client = Client({"delete": NOT_FOUND})
    delete_all(client, ["a", "b", "c"])
    assert client.applied == [("delete", "a"), ("delete", "c")]


def test_write_pins_changes_then_inserts_then_deletes():
    client = Client({})
    write_pins(client, new=["n"], changed=["c"], gone=["g"])
    assert client.applied == [("modify", "c"), ("insert", "n"), ("delete", "g")]
    write_pins(client, [], [], [])  # nothing to write: no call
    assert len(client.applied) == 3


def test_await_all_names_every_switch_that_failed_or_timed_out():
    ok, bad, slow = Future(), Future(), Future()
    ok.set_result(None)
    bad.set_exception(P4RuntimeError("s2 is down"))
    await_all({"s1": ok}, timeout=0.1)
    with pytest.raises(UnavailableError) as raised:
        await_all({"s1": ok, "s2": bad, "s3": slow}, timeout=0.05)
    assert str(raised.value) == "s3: timed out; s2: s2 is down"


def _ports(servicer) -> dict[int, int]:
    return {sid: s.replicas[0].egress_port for sid, s in servicer.clone_sessions.items()}


def test_clone_sessions_are_inserted_or_else_modified(fake):
    """One Write when every session is new; the ones the switch holds already go in one
    more Write as MODIFYs (a reconciled switch, a re-route), the others as they were."""
    client, servicer = fake
    before = servicer.writes
    insert_sessions(client, [CloneSession(11, 2), CloneSession(12, 3)])
    assert servicer.writes - before == 1
    insert_sessions(client, [CloneSession(12, 4), CloneSession(13, 5)])
    assert servicer.writes - before == 3
    assert _ports(servicer) == {11: 2, 12: 4, 13: 5}
    insert_sessions(client, [])
    assert servicer.writes - before == 3


def test_a_reroutes_next_hops_move_their_clone_sessions(fake, p4info):
    """upsert_forwarding writes the next hops and, for each, the clone session of its
    (edge, path) with its port; other entries have no session."""
    client, servicer = fake
    pipeline = Pipeline(p4info)
    upsert_forwarding(client, [*_nexthops(p4info, {1: 2, 2: 3}), pipeline.report_config(2, 1, 0)],
                      pipeline=pipeline)
    upsert_forwarding(client, _nexthops(p4info, {2: 7}), pipeline=pipeline)
    assert _held(client) == {1: 2, 2: 7}
    assert _ports(servicer) == {pipeline.edge_path_index(2, 1): 2,
                                pipeline.edge_path_index(2, 2): 7}


def test_sessions_fall_back_to_one_at_a_time_when_the_error_names_no_update():
    """An ALREADY_EXISTS that names no update: each session is INSERTed alone, and MODIFYd
    where it exists; another error is raised."""

    class Sessions:
        held = {11}
        done: list[tuple[str, int]] = []

        def insert_clone_sessions(self, *sessions):
            if len(sessions) > 1 or sessions[0].session_id in self.held:
                raise P4RuntimeError("write failed: ALREADY_EXISTS")
            self.done.append(("insert", sessions[0].session_id))

        def modify_clone_sessions(self, *sessions):
            self.done += [("modify", s.session_id) for s in sessions]

    stub = Sessions()
    insert_sessions(stub, [CloneSession(11, 2), CloneSession(12, 3)])
    assert stub.done == [("modify", 11), ("insert", 12)]

    class Broken(Sessions):
        def insert_clone_sessions(self, *sessions):
            raise P4RuntimeError("write failed: RESOURCE_EXHAUSTED")

    with pytest.raises(P4RuntimeError, match="RESOURCE_EXHAUSTED"):
        insert_sessions(Broken(), [CloneSession(11, 2)])
