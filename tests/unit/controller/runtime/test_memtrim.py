"""Giving malloc's free memory back (src/mpsched/controller/runtime/memtrim.py)."""

from __future__ import annotations

import threading

import pytest

from mpsched.controller.runtime import memtrim
from mpsched.controller.runtime.memtrace import proc_status

glibc = pytest.mark.skipif(not memtrim.available(), reason="no malloc_trim (not glibc)")


def _churn(kept: list[bytes]) -> None:
    """About 32 MB of 4 kB blocks (malloc's, not pymalloc's) from a thread of its own, every
    16th kept: the rest is free, in holes malloc does not give back by itself."""
    blocks = [bytes(4000) + bytes([i % 256]) for i in range(8000)]
    kept.extend(blocks[::16])
    blocks.clear()


@glibc
def test_trim_gives_back_what_churn_left_free():
    kept: list[bytes] = []
    before = proc_status("VmRSS")
    worker = threading.Thread(target=_churn, args=(kept,))
    worker.start()
    worker.join()
    churned = proc_status("VmRSS")
    assert churned - before > 16_000  # the holes stay resident: what the soak saw
    memtrim.trim()
    trimmed = proc_status("VmRSS")
    assert churned - trimmed > (churned - before) // 2
    assert len(kept) == 500


@glibc
def test_the_trimmer_trims_every_period_until_stopped():
    trimmer = memtrim.start(0.01)
    assert trimmer is not None
    try:
        assert threading.Event().wait(0.2) is False
    finally:
        trimmer.stop()
        trimmer.thread.join(5)
    assert not trimmer.thread.is_alive()
    assert trimmer.trims >= 2


def test_zero_is_off():
    assert memtrim.start(0) is None
