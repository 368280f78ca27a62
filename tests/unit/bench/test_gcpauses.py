"""src/mpsched/bench/gcpauses.py: the collector's passes recorded by generation."""

from __future__ import annotations

import gc

from mpsched.bench.gcpauses import GcPauses


def test_a_full_collection_is_recorded_and_the_callback_removed():
    before = list(gc.callbacks)
    with GcPauses() as pauses:
        gc.collect()
        gc.collect(0)
    assert gc.callbacks == before
    assert len(pauses.pauses[2]) == 1 and len(pauses.pauses[0]) >= 1
    assert pauses.line().startswith("gc: 1 full collections (longest ")
    assert "young ones" in GcPauses().line() and "0 full collections," in GcPauses().line()
