"""A run's receivers ready before its senders start: every sink (``mpsched.traffic.gen
sink``) and every capture (tcpdump) writes a line with `READY` to its log once its ports or
its capture are open; the runner waits for all of them (`wait_ready`) with a deadline. On a
busy machine, or on a second server reached over ssh, a start takes longer than any fixed
guess: a sender that connects before its sink listens is refused and its pair carries
nothing."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from mpsched.traffic.gen.sink import READY

TIMEOUT_S = 60.0  # a start on a saturated machine, over ssh to a second server
POLL_S = 0.05
TAIL_CHARS = 500  # of a log that never said it was ready, in the error


class NotReadyError(RuntimeError):
    """A receiver exited, or did not get ready in time; the message names it."""


def _log_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def is_ready(log: Path) -> bool:
    """Whether the log says its process is ready (a log not written yet: not ready)."""
    return READY in _log_text(log)


def wait_ready(receivers: Mapping[str, tuple[subprocess.Popen, Path]],
               timeout: float = TIMEOUT_S, poll: float = POLL_S) -> None:
    """Until the log of every receiver (name -> its process and log) says it is ready.
    Raises `NotReadyError` naming the first that exited, or every one still not ready after
    `timeout` s, with the tail of its log."""
    waiting = dict(receivers)
    deadline = time.monotonic() + timeout
    while True:
        waiting = {name: pl for name, pl in waiting.items() if not is_ready(pl[1])}
        if not waiting:
            return
        for name, (proc, log) in waiting.items():
            if proc.poll() is not None:
                raise NotReadyError(f"{name} exited ({proc.returncode}) before it was ready: "
                                    f"{_log_text(log)[-TAIL_CHARS:].strip()!r}")
        if time.monotonic() >= deadline:
            told = "; ".join(f"{name}: {_log_text(log)[-TAIL_CHARS:].strip()!r}"
                             for name, (_, log) in waiting.items())
            raise NotReadyError(f"not ready after {timeout:g} s: {told}")
        time.sleep(poll)
