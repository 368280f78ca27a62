"""How many malloc arenas the controller's threads share
(src/mpsched/controller/runtime/memarenas.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mpsched.controller.runtime import memarenas

glibc = pytest.mark.skipif(memarenas.malloc_info() is None, reason="no malloc_info (not glibc)")

# eight threads that malloc at once (bytearrays beyond pymalloc's 512 bytes), then the arenas
THREADS = """
import sys, threading
from mpsched.controller.runtime import memarenas
memarenas.limit(int(sys.argv[1]))
both = threading.Barrier(9)
def work():
    both.wait()
    kept = [bytearray(1000) for _ in range(2000)]
    both.wait()
workers = [threading.Thread(target=work) for _ in range(8)]
for w in workers:
    w.start()
both.wait()
both.wait()
for w in workers:
    w.join()
print(memarenas.arena_count())
"""


def arenas_with(limit: int) -> int:
    out = subprocess.run([sys.executable, "-c", THREADS, str(limit)], capture_output=True,
                         text=True, check=True, timeout=60)
    return int(out.stdout.split()[-1])


@glibc
def test_the_limit_caps_the_arenas_of_many_threads():
    assert arenas_with(2) <= 2
    # glibc's default (8 per core) gives each of the threads an arena of its own up to it
    assert arenas_with(0) > 2


@glibc
def test_arena_count_reads_malloc_info():
    assert memarenas.arena_count() >= 1
    xml = '<malloc version="1"><heap nr="0"></heap><heap nr="1"></heap></malloc>'
    assert memarenas.arena_count(xml) == 2


def test_zero_or_less_leaves_the_default():
    assert memarenas.limit(0) is None
    assert memarenas.limit(-3) is None
