"""An opt-in memory diagnostic: where does the controller's resident memory go?

Off unless the environment sets `MPSCHED_MEMTRACE_S` (seconds between samples, > 0): then
`start_from_env` starts tracemalloc and a daemon thread that logs, every that many seconds,
one line (logger `mpsched.controller.runtime.memtrace`, level INFO)::

    memtrace rss_kb=... traced_kb=... tracemalloc_kb=... malloc_used_kb=... malloc_free_kb=...
             mmap_kb=... arena_kb=... malloc_arenas=... threads=... smaps_heap_kb=...
             smaps_marena_kb=... smaps_stack_kb=... smaps_anon1m_kb=... smaps_anon_kb=...
             smaps_file_kb=... smaps_other_kb=... py_blocks=... py_arenas=... py_arenas_total=...
             py_used_kb=... py_avail_kb=...

then the allocation sites (file:line) whose traced size grew most since the first sample,
then `memtrace gc_objects=N` (the objects the collector tracks, gc.get_objects()), the
object types whose count grew most since the first sample (`memtrace type NAME +N (M)`) and
the containers whose length grew most since first seen (`memtrace container TYPE
Class.attribute len=N +D`; src/mpsched/controller/runtime/memobjects.py).
The figures tell a growth of the Python heap (traced_kb rises with rss_kb) from native growth
(malloc_used_kb rises, traced_kb does not: gRPC's C core, protobuf's C++ messages) and from
the allocator keeping freed memory (malloc_free_kb rises: fragmentation, more arenas);
tracemalloc_kb is tracemalloc's own bookkeeping (in malloc_used_kb, not in
traced_kb); malloc's figures are glibc's mallinfo2, summed over every arena (absent elsewhere),
malloc_arenas how many arenas there are (malloc_info, src/mpsched/controller/runtime/memarenas.py).
The smaps_*_kb figures are the resident kB of /proc/self/smaps by kind of mapping
(src/mpsched/controller/runtime/memmaps.py: the brk heap, malloc's thread arenas, thread stacks,
anonymous mappings of whole MiBs such as CPython's object arenas, other anonymous ones, files); the
py_* ones CPython's small-object allocator's (sys.getallocatedblocks; from
sys._debugmallocstats: its 1 MiB arenas now and ever allocated, kB in blocks in use and in
free blocks of its pools; absent while tracemalloc runs, which stands in for the
allocator): a growth of anon1m with py_arenas and py_used_kb flat is not the Python heap.
`MPSCHED_MEMTRACE_TOP` sets how many sites (default 8); 0 leaves tracemalloc off and logs
the other figures only, at no cost to the Python heap (tracemalloc's snapshots themselves
leave the allocator tens of MB it keeps, `malloc_free_kb`: a run to measure RSS uses 0).
`MPSCHED_MEMTRACE_TYPES` sets how many object types and containers (default 8; 0: no walk
of the objects).
docs/results/fabric-soak.md tells what the fabric soak found with it.

Off, it costs one look-up of the environment at start; on, tracemalloc slows every Python
allocation (about 2x) and each sample takes a snapshot: a diagnostic, not for production.
sys._debugmallocstats writes to the C stderr: for the few milliseconds it takes, file
descriptor 2 points to a temporary file, so anything another thread writes to stderr then
is in the sample's figures' place and lost.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import re
import sys
import tempfile
import threading
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mpsched.controller.runtime import memarenas, memmaps, memobjects

log = logging.getLogger("mpsched.controller.runtime.memtrace")

ENV_PERIOD = "MPSCHED_MEMTRACE_S"
ENV_TOP = "MPSCHED_MEMTRACE_TOP"
ENV_TYPES = "MPSCHED_MEMTRACE_TYPES"
DEFAULT_TOP = 8
_STDERR_LOCK = threading.Lock()
OBMALLOC_FIGURES = {  # key: the line of sys._debugmallocstats (CPython 3.8 to 3.13)
    "py_arenas": "# arenas allocated current",
    "py_arenas_total": "# arenas allocated total",
    "py_used_kb": "# bytes in allocated blocks",
    "py_avail_kb": "# bytes in available blocks",
}


class _MallInfo2(ctypes.Structure):
    """glibc's struct mallinfo2 (malloc.h, glibc >= 2.33): every field a size_t."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


@dataclass(frozen=True)
class MallocFigures:
    """In kB: bytes malloc got from the system by brk/arenas (`arena`), in use (`used`),
    free but kept (`free`), in mmapped chunks (`mmap`)."""

    arena: int
    used: int
    free: int
    mmap: int


@functools.cache
def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c")).mallinfo2
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype = _MallInfo2
    return fn


def malloc_figures() -> MallocFigures | None:
    """glibc's mallinfo2 summed over the arenas, or None where there is no such call."""
    fn = _mallinfo2()
    if fn is None:
        return None
    m = fn()
    return MallocFigures(m.arena // 1024, m.uordblks // 1024, m.fordblks // 1024,
                         m.hblkhd // 1024)


def proc_status(field: str, path: Path = Path("/proc/self/status")) -> int:
    """An integer field of /proc/self/status (VmRSS in kB, Threads), -1 where unreadable."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return -1


def obmalloc_text() -> str:
    """What sys._debugmallocstats writes to the C stderr (module docstring), '' without it."""
    stats = getattr(sys, "_debugmallocstats", None)
    if stats is None:
        return ""
    with _STDERR_LOCK, tempfile.TemporaryFile(mode="w+") as tmp:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            stats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read()


def obmalloc_figures(text: str) -> dict[str, int]:
    """OBMALLOC_FIGURES read from sys._debugmallocstats' text (bytes as kB)."""
    out: dict[str, int] = {}
    for key, label in OBMALLOC_FIGURES.items():
        m = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        if m:
            value = int(m.group(1).replace(",", ""))
            out[key] = value // 1024 if key.endswith("_kb") else value
    return out


def sample_line() -> str:
    """The figures of one sample (module docstring), key=value."""
    parts = [f"rss_kb={proc_status('VmRSS')}"]
    if tracemalloc.is_tracing():
        traced, _peak = tracemalloc.get_traced_memory()
        parts += [f"traced_kb={traced // 1024}",
                  f"tracemalloc_kb={tracemalloc.get_tracemalloc_memory() // 1024}"]
    m = malloc_figures()
    if m is not None:
        parts += [f"malloc_used_kb={m.used}", f"malloc_free_kb={m.free}",
                  f"mmap_kb={m.mmap}", f"arena_kb={m.arena}",
                  f"malloc_arenas={memarenas.arena_count()}"]
    parts.append(f"threads={proc_status('Threads')}")
    parts += [f"smaps_{kind}_kb={kb}" for kind, kb in memmaps.kinds().items()]
    parts.append(f"py_blocks={sys.getallocatedblocks()}")
    parts += [f"{k}={v}" for k, v in obmalloc_figures(obmalloc_text()).items()]
    return "memtrace " + " ".join(parts)


def growth_lines(base: tracemalloc.Snapshot, now: tracemalloc.Snapshot, top: int) -> list[str]:
    """The `top` sites whose traced size grew most from `base` to `now`."""
    filters = [tracemalloc.Filter(False, tracemalloc.__file__)]
    stats = now.filter_traces(filters).compare_to(base.filter_traces(filters), "lineno")
    grown = sorted((s for s in stats if s.size_diff > 0), key=lambda s: -s.size_diff)[:top]
    return [f"memtrace site {s.traceback[0].filename}:{s.traceback[0].lineno} "
            f"+{s.size_diff // 1024} kB ({s.size // 1024} kB, {s.count_diff:+d} blocks)"
            for s in grown]


class MemTrace:
    """The sampling thread (module docstring)."""

    def __init__(self, period_s: float, top: int = DEFAULT_TOP, types: int = DEFAULT_TOP
                 ) -> None:
        self.period_s, self.top, self.types = period_s, top, types
        self.stopping = threading.Event()
        self.base: tracemalloc.Snapshot | None = None
        self.objects = memobjects.ObjectWatch()
        self.thread = threading.Thread(target=self._run, name="memtrace", daemon=True)

    def start(self) -> None:
        if self.top > 0 and not tracemalloc.is_tracing():
            tracemalloc.start()
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()

    def sample(self) -> None:
        log.info("%s", sample_line())
        self._sample_types()
        if self.top <= 0:
            return
        snap = tracemalloc.take_snapshot()
        if self.base is None:
            self.base = snap
            return
        for line in growth_lines(self.base, snap, self.top):
            log.info("%s", line)

    def _sample_types(self) -> None:
        if self.types > 0:
            for line in self.objects.sample(self.types):
                log.info("%s", line)

    def _run(self) -> None:
        while not self.stopping.wait(self.period_s):
            try:
                self.sample()
            except Exception:  # a diagnostic never takes the controller down
                log.exception("memtrace: sample failed")


def start_from_env(env: Mapping[str, str] = os.environ) -> MemTrace | None:
    """A started MemTrace if `env` asks for one (module docstring), else None."""
    value = env.get(ENV_PERIOD)
    if not value:
        return None
    try:
        period = float(value)
        top = int(env.get(ENV_TOP) or DEFAULT_TOP)
        types = int(env.get(ENV_TYPES) or DEFAULT_TOP)
    except ValueError:
        log.warning("%s=%r: not a number of seconds; no memory trace", ENV_PERIOD, value)
        return None
    if period <= 0:
        log.warning("%s=%r: must be > 0; no memory trace", ENV_PERIOD, value)
        return None
    trace = MemTrace(period, top, types)
    trace.start()
    log.info("memtrace: every %g s (%s)", period, ENV_PERIOD)
    return trace
