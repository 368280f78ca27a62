"""Which mappings of a process hold its resident memory (`/proc/PID/smaps`), by kind.

RSS alone cannot tell the Python heap from gRPC's C core, malloc's thread arenas or pages of
shared libraries touched for the first time. `kinds` reads /proc/self/smaps and sums the
resident kB (the `Rss:` line) of every mapping into one of these kinds:

- `heap`: the `[heap]` mapping (glibc's main arena, grown by brk);
- `marena`: anonymous mappings inside glibc's per-thread malloc heaps (reserved 64 MiB at a
  64 MiB-aligned address, HEAP_MAX_SIZE in glibc's arena.c; a thread's allocations land
  there, gRPC's threads' among them);
- `stack`: an anonymous read-write mapping right after a no-access guard page of its own
  (pthread stacks, 8 MiB by default) and `[stack]`;
- `anon1m`: an anonymous read-write mapping whose size is a multiple of 1 MiB: CPython's
  object arenas (1 MiB each on 64-bit since 3.10, mmap'd one by one, merged by the kernel
  where they are adjacent), and whatever else maps whole MiBs;
- `anon`: every other anonymous mapping (malloc's mmap'd chunks of 128 kB and more, gRPC's
  and the libraries' own);
- `file`: mappings of files (shared libraries, their data), `other`: the rest ([vdso], ...).

A sample of these beside RSS tells which kind grows; docs/results/fabric-soak.md tells what
the fabric soak found with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SMAPS = Path("/proc/self/smaps")
KINDS = ("heap", "marena", "stack", "anon1m", "anon", "file", "other")
MALLOC_HEAP_ALIGN = 64 << 20  # glibc's HEAP_MAX_SIZE on 64-bit (2 * DEFAULT_MMAP_THRESHOLD_MAX)


@dataclass(frozen=True)
class Mapping:
    """One mapping of smaps: its address range, permissions, path ('' if anonymous), Rss."""

    start: int
    end: int
    perms: str
    path: str
    rss_kb: int


def parse(lines: Iterable[str]) -> list[Mapping]:
    """The mappings of smaps text (a header line `start-end perms offset dev inode [path]`
    then `Field: value kB` lines)."""
    out: list[Mapping] = []
    head: list[str] | None = None
    rss = 0
    for line in lines:
        first = line.split(maxsplit=1)[0] if line.strip() else ""
        if "-" in first and not first.endswith(":"):
            if head is not None:
                out.append(_mapping(head, rss))
            head, rss = line.split(maxsplit=5), 0
        elif first == "Rss:":
            rss = int(line.split()[1])
    if head is not None:
        out.append(_mapping(head, rss))
    return out


def _mapping(head: list[str], rss_kb: int) -> Mapping:
    lo, hi = head[0].split("-")
    path = head[5].strip() if len(head) > 5 else ""
    return Mapping(int(lo, 16), int(hi, 16), head[1], path, rss_kb)


def classify(maps: list[Mapping]) -> list[str]:
    """The kind (module docstring) of each mapping, in order."""
    kinds: list[str] = []
    heap_end = 0  # the end of the 64 MiB malloc heap reservation the scan is in, if any
    for i, m in enumerate(maps):
        anon = m.path == "" or m.path.startswith("[anon")
        if anon and m.start % MALLOC_HEAP_ALIGN == 0 and _reserves_a_malloc_heap(maps, i):
            heap_end = m.start + MALLOC_HEAP_ALIGN
        if m.path == "[heap]":
            kinds.append("heap")
        elif m.path == "[stack]":
            kinds.append("stack")
        elif anon and m.end <= heap_end:
            kinds.append("marena")
        elif anon and "w" in m.perms and i > 0 and _is_guard(maps[i - 1], m):
            kinds.append("stack")
        elif anon and "w" in m.perms and (m.end - m.start) % (1 << 20) == 0:
            kinds.append("anon1m")
        elif anon:
            kinds.append("anon")
        elif m.path.startswith("/"):
            kinds.append("file")
        else:
            kinds.append("other")
    return kinds


def _reserves_a_malloc_heap(maps: list[Mapping], i: int) -> bool:
    """Mappings from maps[i] on make up one 64 MiB reservation (rw part, then ---p rest)."""
    end = maps[i].start + MALLOC_HEAP_ALIGN
    j = i
    while j < len(maps) and maps[j].end <= end and (j == i or maps[j].start == maps[j - 1].end):
        if maps[j].end == end:
            return True
        j += 1
    return False


def _is_guard(prev: Mapping, m: Mapping) -> bool:
    """`prev` is a no-access page (or a few) right below `m`: a thread stack's guard."""
    return (prev.perms.startswith("---") and prev.end == m.start and prev.path == ""
            and prev.end - prev.start <= 64 << 10)


def kinds(path: Path = SMAPS) -> dict[str, int]:
    """Resident kB per kind (module docstring) of the process whose smaps `path` is; empty
    where unreadable (not Linux)."""
    try:
        maps = parse(path.read_text().splitlines())
    except (OSError, ValueError, IndexError):
        return {}
    totals = dict.fromkeys(KINDS, 0)
    for m, kind in zip(maps, classify(maps), strict=True):
        totals[kind] += m.rss_kb
    return totals
