"""Resident memory by kind of mapping (src/mpsched/controller/runtime/memmaps.py)."""

from __future__ import annotations

from pathlib import Path

from mpsched.controller.runtime import memmaps
from mpsched.controller.runtime.memtrace import proc_status

HEAP = 0x7F0000000000  # 64 MiB-aligned
SMAPS = f"""\
55d000000000-55d000100000 r-xp 00000000 fe:00 1234 /usr/bin/python3
Size:               1024 kB
Rss:                 900 kB
55d001000000-55d002000000 rw-p 00000000 00:00 0 [heap]
Rss:                8000 kB
{HEAP:x}-{HEAP + 0x300000:x} rw-p 00000000 00:00 0
Rss:                3000 kB
{HEAP + 0x300000:x}-{HEAP + 0x4000000:x} ---p 00000000 00:00 0
Rss:                   0 kB
7f1000000000-7f1000001000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000001000-7f1000801000 rw-p 00000000 00:00 0
Rss:                  40 kB
7f1000900000-7f1000b00000 rw-p 00000000 00:00 0
Rss:                1500 kB
7f1000c00000-7f1000c21000 rw-p 00000000 00:00 0
Rss:                 100 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]
Rss:                  60 kB
7ffc00100000-7ffc00102000 r-xp 00000000 00:00 0 [vdso]
Rss:                   8 kB
"""


def test_each_kind_of_mapping_is_told_apart(tmp_path: Path):
    path = tmp_path / "smaps"
    path.write_text(SMAPS)
    assert memmaps.kinds(path) == {
        "file": 900,
        "heap": 8000,
        "marena": 3000,  # the rw part of a 64 MiB malloc heap, and its reserved rest
        "stack": 40 + 60,  # after its guard page; [stack]
        "anon1m": 1500,  # 2 MiB of anonymous memory (CPython's arenas are 1 MiB)
        "anon": 100,
        "other": 8,
    }


def test_an_aligned_mapping_that_is_no_malloc_heap_is_plain_anonymous():
    maps = memmaps.parse(SMAPS.splitlines())
    lone = memmaps.Mapping(HEAP, HEAP + 0x100000, "rw-p", "", 10)  # 1 MiB, no reservation
    assert memmaps.classify([lone]) == ["anon1m"]
    assert memmaps.classify(maps)[2:4] == ["marena", "marena"]


def test_this_process_kinds_add_up_to_its_rss():
    totals = memmaps.kinds()
    if not totals:  # not Linux
        return
    rss = proc_status("VmRSS")
    assert set(totals) == set(memmaps.KINDS)
    assert abs(sum(totals.values()) - rss) <= max(2048, rss // 10)


def test_an_unreadable_smaps_gives_nothing(tmp_path: Path):
    assert memmaps.kinds(tmp_path / "missing") == {}
