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


def netcfg_line(proc, timeout: float = 120.0) -> list[str]:
    """The lines `mpsched topo` (`proc`, stdout a text pipe) printed up to and including its
    `netcfg:` line, which comes once the testbed is up; lines before it (a warning) are kept
    for the test's message. Stops at end of output or after `timeout` seconds, never blocking
    on a testbed that keeps running (the caller kills it)."""
    import queue
    import threading

    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in proc.stdout:
            lines.put(line)
            if line.startswith("netcfg:"):
                return
        lines.put("")

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line or "(end of output)\n")
        if not line or line.startswith("netcfg:"):
            return seen
    return [*seen, f"(no netcfg: line within {timeout:g} s)\n"]
