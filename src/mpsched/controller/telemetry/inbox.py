"""The switches' path and RTT reports, taken in under the controller's lock a batch at a time.

Every agent's thread (and a benchmark's feeder) hands its switch's reports over as they
arrive, tens of thousands a second on a large fabric. Taking the controller's lock for each
one made every report handler queue on it while a control step held it, and made the step
wait for the lock behind a stream of short holders. Here the thread that finds no one taking
reports in becomes the taker: it takes the lock and its own report in, then the reports the
other threads queued meanwhile (at most `BATCH` per hold, and none while a control step waits
for the lock: src/mpsched/controller/runtime/steplock.py) until the queue is empty, while the other
threads append theirs to the queue and return at once (flat combining). A report is taken in by the
thread that handed it over or by the taker of the moment, in the order handed over; a report
handed over with no taker at work is taken in before `put` returns, as before.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

BATCH = 500  # reports taken in per hold of the controller's lock
Report = TypeVar("Report")


class Inbox(Generic[Report]):
    """Reports handed over by many threads (`put`), each taken in by `take` under `hold()`, a
    batch at a time. A report that `take` raises on is logged and the others go on."""

    def __init__(self, hold: Callable[[], AbstractContextManager[Any]],
                 take: Callable[[Report], None]) -> None:
        self.hold = hold  # the lock for one batch (the controller's: after a waiting step)
        self.take = take
        self._queued: deque[Report] = deque()
        self._guard = threading.Lock()  # the queue's end and the taker's flag together
        self._taking = False
        self.batches = 0  # holds of the lock so far (one per batch)

    def put(self, report: Report) -> None:
        with self._guard:
            if self._taking:
                self._queued.append(report)
                return
            self._taking = True  # and the queue is empty: its taker left none behind
        try:
            with self.hold():
                self.batches += 1
                self._take_one(report)
            self._take_all()
        except BaseException:
            with self._guard:
                self._taking = False
            raise

    def _take_all(self) -> None:
        """Batches until the queue is empty; the taker's flag falls with the last look at it
        (under the guard), so no report is left behind."""
        while True:
            with self._guard:
                if not self._queued:
                    self._taking = False
                    return
                batch = [self._queued.popleft() for _ in range(min(BATCH, len(self._queued)))]
            with self.hold():
                self.batches += 1
                for report in batch:
                    self._take_one(report)

    def _take_one(self, report: Report) -> None:
        try:
            self.take(report)
        except Exception:
            log.exception("report not taken in: %r", report)
