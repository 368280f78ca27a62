"""P4Runtime writes of the controller's changes, and waiting for the switches' answers.

The scheduler's entries are MODIFYs of entries every programmed switch has (`upsert_all`
INSERTs, in one more Write, any it lacks); clone sessions are INSERTed, or MODIFYd where the
switch has them (`insert_sessions`), and a re-route's next hops go with theirs
(`upsert_forwarding`); subflow pins come and go (`write_pins`). A change
goes to each switch as one job of its agent (southbound/agent.py); `await_all` waits for
them and names every switch that did not acknowledge.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TypeVar

from mpsched.controller.model.errors import UnavailableError
from mpsched.controller.southbound.forwarding import copy_sessions
from mpsched.p4rt.client import CloneSession, P4RuntimeClient, P4RuntimeError, TableEntry
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)

T = TypeVar("T")


def upsert(client: P4RuntimeClient, entry: TableEntry) -> None:
    """MODIFY the entry, or INSERT it if the switch does not have it yet."""
    try:
        client.modify(entry)
    except P4RuntimeError as error:
        if not error.not_found:
            raise
        client.insert(entry)


def upsert_all(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    """MODIFY every entry in one P4Runtime Write; the entries the switch does not have yet
    (NOT_FOUND) then go in one INSERT. The switch applies a Write's updates one by one and
    answers for each (P4Runtime spec, Batching and Ordering of Updates: CONTINUE_ON_ERROR), so
    two round trips at most, however many entries are new."""
    if not entries:
        return
    try:
        client.modify(*entries)
    except P4RuntimeError as error:
        _retry_failed(client, entries, error, "NOT_FOUND", insert_all, upsert)


def insert_sessions(client: P4RuntimeClient, sessions: list[CloneSession]) -> None:
    """INSERT the clone sessions in one Write; those the switch has already (a reconciled
    switch, a re-route: ALREADY_EXISTS) then go in one MODIFY, as `insert_all`."""
    _insert_then_modify(client, sessions, lambda c, s: c.insert_clone_sessions(*s),
                        lambda c, s: c.modify_clone_sessions(*s), _session_alone)


def _session_alone(client: P4RuntimeClient, session: CloneSession) -> None:
    """INSERT the session, or MODIFY it where it exists."""
    try:
        client.insert_clone_sessions(session)
    except P4RuntimeError as error:
        if "ALREADY_EXISTS" not in str(error):
            raise
        client.modify_clone_sessions(session)


def upsert_forwarding(client: P4RuntimeClient, entries: list[TableEntry],
                      pipeline: Pipeline) -> None:
    """`upsert_all`, then the clone sessions of the path next hops among `entries`
    (forwarding.copy_sessions: a moved path's SYN copies leave on its new port)."""
    upsert_all(client, entries)
    insert_sessions(client, copy_sessions(pipeline, entries))


def insert_all(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    """INSERT every entry in one Write; the ones that already exist (a switch reprogrammed
    meanwhile: ALREADY_EXISTS) then go in one MODIFY."""
    _insert_then_modify(client, entries, lambda c, e: c.insert(*e), lambda c, e: c.modify(*e),
                        upsert)


Batch = Callable[[P4RuntimeClient, list[T]], None]


def _insert_then_modify(client: P4RuntimeClient, items: list[T], insert: Batch[T],
                        modify: Batch[T], alone: Callable[[P4RuntimeClient, T], None]) -> None:
    """`insert` the items in one Write, then `modify` in one more those that exist
    (ALREADY_EXISTS; `_retry_failed`)."""
    if not items:
        return
    try:
        insert(client, items)
    except P4RuntimeError as error:
        _retry_failed(client, items, error, "ALREADY_EXISTS", modify, alone)


def _retry_failed(client: P4RuntimeClient, entries: list[T], error: P4RuntimeError,
                  code: str, retry: Batch[T],
                  alone: Callable[[P4RuntimeClient, T], None]) -> None:
    """After a batch failed with `error`: `retry` the entries whose update failed with `code`
    in one go, then raise `error` if any other update failed (the others were applied). An
    error that does not say which updates failed: each entry is written `alone`."""
    failed = error.failed_updates()
    if failed is None:
        if code not in str(error):
            raise error
        for entry in entries:
            alone(client, entry)
        return
    again = [entries[i] for i in sorted(failed) if failed[i] == code and i < len(entries)]
    if again:
        retry(client, again)
    if len(again) < len(failed):
        raise error


def delete_all(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    """DELETE every entry in one Write; entries already gone are skipped."""
    if not entries:
        return
    try:
        client.delete(*entries)
    except P4RuntimeError as error:
        if not error.not_found:
            raise
        for entry in entries:
            try:
                client.delete(entry)
            except P4RuntimeError as one:
                if not one.not_found:
                    raise


def write_pins(
    client: P4RuntimeClient,
    new: list[TableEntry],
    changed: list[TableEntry],
    gone: list[TableEntry],
) -> None:
    """Apply a switch's subflow pin changes (`PinManager.changes`)."""
    upsert_all(client, changed)
    insert_all(client, new)
    delete_all(client, gone)


def await_all(futures: dict[str, Future], timeout: float) -> None:
    """Wait for every switch's job; UnavailableError names each one that failed or did not
    answer within `timeout` seconds. The intended state stays: a switch that comes back is
    reprogrammed with it."""
    done, pending = wait(futures.values(), timeout=timeout)
    failed = [f"{name}: timed out" for name, f in futures.items() if f in pending]
    failed += [
        f"{name}: {f.exception()}"
        for name, f in futures.items()
        if f in done and f.exception() is not None
    ]
    if failed:
        raise UnavailableError("; ".join(failed))


def log_failure(future: Future) -> None:
    """Done-callback of a fire-and-forget write (MPTCP pins of a new subflow)."""
    if future.exception() is not None:
        log.warning("mptcp pin write failed: %s", future.exception())
