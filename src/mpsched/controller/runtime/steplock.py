"""The controller's one lock, taken by the control step before the many short holders.

Every component shares one lock (core.py). Most holds are short and come in streams: the
switches' reports a batch at a time (telemetry/inbox.py), the recorder's chunks of snapshots
(telemetry/intake.py). A plain `threading.Lock` is not fair, and under CPython's global
interpreter lock a thread that releases it and asks for it again at once almost always gets
it back before the waiting thread has even run: the reports' taker went from batch to batch
while a control step waited behind it (at 64 leaves the step's wait for the lock reached
60-180 ms at its 99th percentile, docs/results/scale.md). Here the step asks with `first()`:
while it waits, a holder that asks with `after_step()` (the streams between their holds)
waits until the step has the lock, and then queues for the lock behind it. Every other use
is a plain hold (`with lock:`), as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType


class StepFirstLock:
    """A mutex (`with lock:`, `acquire`, `release`) whose `first()` holders go before the
    `after_step()` holders waiting at the same time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting = threading.Condition(threading.Lock())
        self._first = 0  # first() holders waiting for the lock
        self._after_step = _AfterStep(self)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._lock.release()

    @contextmanager
    def first(self) -> Iterator[None]:
        """Hold the lock; `after_step()` holders that come meanwhile wait until it is had."""
        with self._waiting:
            self._first += 1
        try:
            self._lock.acquire()
        finally:
            with self._waiting:
                self._first -= 1
                if not self._first:
                    self._waiting.notify_all()
        try:
            yield
        finally:
            self._lock.release()

    def after_step(self) -> _AfterStep:
        """Hold the lock once no `first()` holder is waiting for it."""
        return self._after_step


class _AfterStep:
    """`StepFirstLock.after_step()`: a context object, not a generator, since it is taken
    once per batch of reports (some 16 000 a second at 64 leaves, docs/results/scale.md).
    A waiting step is seen by reading the count alone: a step that starts waiting just
    after the read finds this holder ahead of it, as it would with the read under the
    condition."""

    __slots__ = ("_owner",)

    def __init__(self, owner: StepFirstLock) -> None:
        self._owner = owner

    def __enter__(self) -> None:
        owner = self._owner
        if owner._first:
            with owner._waiting:
                while owner._first:
                    owner._waiting.wait()
        owner._lock.acquire()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._owner._lock.release()


__all__ = ["StepFirstLock"]
