"""southbound/writes.py: batched writes with their fallbacks, and waiting for switches."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from mpsched.controller.errors import UnavailableError
from mpsched.controller.southbound.writes import await_all, delete_all, upsert_all, write_pins
from mpsched.p4rt.client import P4RuntimeError

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


def test_upsert_all_inserts_what_the_switch_lacks():
    client = Client({"modify": NOT_FOUND})
    upsert_all(client, ["a", "b"])
    assert client.applied == [("modify", "a"), ("insert", "b")]


def test_upsert_all_raises_other_errors():
    client = Client({"modify": P4RuntimeError("bad", ["update 1: INVALID_ARGUMENT"])})
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        upsert_all(client, ["a", "b"])


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
