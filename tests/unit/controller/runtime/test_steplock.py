"""src/mpsched/controller/runtime/steplock.py: a mutex whose control step goes before the streams of
short
holds."""

from __future__ import annotations

import threading
import time

import pytest

from mpsched.controller.runtime.steplock import StepFirstLock

WAIT_S = 5.0


def _until(check, timeout: float = WAIT_S) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.001)


def test_it_is_a_mutex():
    lock = StepFirstLock()
    with lock:
        assert lock.locked() and not lock.acquire(blocking=False)
    assert not lock.locked()
    assert lock.acquire(timeout=1)
    lock.release()
    with lock.first():
        assert lock.locked()
    with lock.after_step():
        assert lock.locked()
    assert not lock.locked()


def test_a_waiting_step_goes_before_holders_that_come_after_it():
    lock = StepFirstLock()
    order: list[str] = []
    lock.acquire()  # a plain holder

    def step():
        with lock.first():
            order.append("step")

    def stream():
        with lock.after_step():
            order.append("stream")

    s = threading.Thread(target=step)
    s.start()
    _until(lambda: lock._first == 1)
    b = threading.Thread(target=stream)
    b.start()
    time.sleep(0.05)  # the stream is waiting for the step, not for the lock
    lock.release()
    s.join(WAIT_S)
    b.join(WAIT_S)
    assert order == ["step", "stream"]


def test_a_stream_of_holds_lets_a_waiting_step_in_after_the_current_one():
    """The reports' taker goes from hold to hold; a step that starts waiting gets the lock
    after at most the hold in progress (a plain lock lets the taker take it back first)."""
    lock = StepFirstLock()
    holds = 0
    stop = threading.Event()
    waiting_since: list[int] = []
    got_at: list[int] = []

    def taker():
        nonlocal holds
        while not stop.is_set():
            with lock.after_step():
                holds += 1
                time.sleep(0.002)

    t = threading.Thread(target=taker)
    t.start()
    _until(lambda: holds >= 3)
    for _ in range(5):
        waiting_since.append(holds)
        with lock.first():
            got_at.append(holds)
        _until(lambda n=holds: holds > n + 1)
    stop.set()
    t.join(WAIT_S)
    assert all(got - since <= 1 for since, got in zip(waiting_since, got_at, strict=True))


def test_a_step_that_raises_leaves_the_lock_free():
    lock = StepFirstLock()
    with pytest.raises(RuntimeError), lock.first():
        raise RuntimeError("step failed")
    assert not lock.locked() and lock._first == 0
    with lock.after_step():
        pass
