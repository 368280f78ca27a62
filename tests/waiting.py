"""Waiting for a condition instead of sleeping for a guess: tests poll what they need
(a socket listening, a frame seen, a counter reached) with a generous deadline, so a
busy machine makes them slower, not red."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeoutError(AssertionError):
    """The condition did not hold before the deadline (an assertion: the test fails)."""


def wait_until(predicate: Callable[[], T], timeout: float = 30.0, interval: float = 0.05,
               what: str = "condition") -> T:
    """Poll `predicate` until it returns something truthy, and return that; after
    `timeout` seconds raise WaitTimeoutError naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(f"timed out after {timeout:g}s waiting for {what} "
                              f"(last: {value!r})")
        time.sleep(interval)
