"""telemetry/inbox.py: reports taken in under the lock a batch at a time, none lost."""

from __future__ import annotations

import contextlib
import threading

import pytest

from mpsched.controller.telemetry import inbox as inbox_module
from mpsched.controller.telemetry.inbox import Inbox


def test_a_report_with_no_taker_at_work_is_taken_in_before_put_returns():
    lock = threading.Lock()
    taken: list[tuple[int, bool]] = []
    inbox = Inbox(lambda: lock, lambda r: taken.append((r, lock.locked())))
    inbox.put(1)
    inbox.put(2)
    assert taken == [(1, True), (2, True)] and inbox.batches == 2


def put_while_locked(reports: int) -> tuple[Inbox[int], list[int]]:
    """`reports` reports put while the lock is held: the first by a thread of its own, which
    becomes the taker and waits for the lock; the others from here, each returning at once.
    Then the lock is released and the taker joined."""
    lock = threading.Lock()
    taken: list[int] = []
    inbox: Inbox[int] = Inbox(lambda: lock, taken.append)
    lock.acquire()
    taker = threading.Thread(target=inbox.put, args=(0,))
    taker.start()
    while not inbox._taking:
        pass
    for r in range(1, reports):
        inbox.put(r)
    assert taken == []
    lock.release()
    taker.join(timeout=5)
    return inbox, taken


def test_reports_put_while_the_lock_is_held_wait_for_one_taker_and_keep_their_order():
    """While a step holds the lock, the first thread to put becomes the taker and waits for
    it; the others return at once; all is taken in, in order."""
    inbox, taken = put_while_locked(100)
    # one batch, or the taker's own report alone and then the 99 together
    assert taken == list(range(100))
    assert inbox.batches in (1, 2) and not inbox._taking


def test_a_batch_is_at_most_batch_reports(monkeypatch):
    monkeypatch.setattr(inbox_module, "BATCH", 10)
    inbox, taken = put_while_locked(25)
    # 10, 10 and 5; or the taker's own report alone (if it took its batch before the others
    # were put), then 10, 10 and 4
    assert taken == list(range(25)) and inbox.batches in (3, 4)


def test_a_report_that_raises_is_logged_and_the_others_go_on(caplog):
    taken: list[int] = []

    def take(r: int) -> None:
        if r == 2:
            raise ValueError("bad report")
        taken.append(r)

    inbox = Inbox(contextlib.nullcontext, take)
    for r in (1, 2, 3):
        inbox.put(r)
    assert taken == [1, 3] and "report not taken in: 2" in caplog.text


def test_the_taker_flag_falls_when_the_taker_is_interrupted():
    def take(r: int) -> None:
        raise KeyboardInterrupt

    inbox = Inbox(contextlib.nullcontext, take)
    with pytest.raises(KeyboardInterrupt):
        inbox.put(1)
    assert not inbox._taking


def test_many_threads_lose_nothing():
    lock = threading.Lock()
    taken: list[tuple[int, int]] = []
    inbox: Inbox[tuple[int, int]] = Inbox(lambda: lock, taken.append)

    def feed(t: int) -> None:
        for i in range(2000):
            inbox.put((t, i))

    threads = [threading.Thread(target=feed, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(taken) == 16000 and not inbox._queued
    for t in range(8):  # each thread's reports in its order
        assert [i for tt, i in taken if tt == t] == list(range(2000))
