"""Give the memory malloc keeps free back to the system, every `--malloc-trim-s` seconds
(off by default).

glibc's malloc keeps the chunks a process frees in its arenas (one per thread that allocated,
up to 8 per core) and returns memory to the system only from the top of a heap; a process
whose threads allocate and free medium blocks all the time (the controller's gRPC threads,
REST workers and loop) keeps free holes resident. `malloc_trim(0)` (glibc >= 2.8) walks
every arena and returns the free whole pages inside them (madvise), not only the top; a call
takes a few milliseconds and holds each arena's lock briefly, hence a thread of its own, off
the control loop. On the fabric soak it gave back 0.3 to 0.8 MB a minute but left the
controller's RSS slope where it was (docs/results/fabric-soak.md): a lever to tell
the allocator's free space from memory in use, not a fix, hence off unless asked for. What
levelled the slope is fewer arenas (`--malloc-arenas`, src/mpsched/controller/runtime/memarenas.py).

Elsewhere than glibc (no `malloc_trim`) the trimmer does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

MALLOC_TRIM_S = 0.0  # default period: never (module docstring)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def available() -> bool:
    """True where the C library has malloc_trim (glibc)."""
    return _malloc_trim() is not None


def trim() -> bool:
    """Return malloc's free pages to the system now; True if any memory was released."""
    fn = _malloc_trim()
    return bool(fn(0)) if fn is not None else False


class Trimmer:
    """A daemon thread that calls `trim` every `period_s` until `stop`."""

    def __init__(self, period_s: float) -> None:
        self.period_s = period_s
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="malloc-trim", daemon=True)
        self.trims = 0

    def start(self) -> Trimmer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()

    def _run(self) -> None:
        while not self.stopping.wait(self.period_s):
            trim()
            self.trims += 1


def start(period_s: float) -> Trimmer | None:
    """A started Trimmer, or None with `period_s` <= 0 (off) or without malloc_trim."""
    if period_s <= 0:
        return None
    if not available():
        log.info("no malloc_trim in this C library: --malloc-trim-s ignored")
        return None
    return Trimmer(period_s).start()
