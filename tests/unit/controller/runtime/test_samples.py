"""src/mpsched/controller/runtime/samples.py: the latest N floats in memory allocated once."""

from __future__ import annotations

from collections import deque

import pytest

from mpsched.controller.runtime.samples import Samples


def test_it_keeps_the_latest_like_a_bounded_deque():
    ring, reference = Samples(4), deque(maxlen=4)
    assert list(ring) == [] and len(ring) == 0
    for x in range(11):
        ring.append(x * 0.5)
        reference.append(x * 0.5)
        assert list(ring) == list(reference) and len(ring) == len(reference)
    ring.clear()
    assert list(ring) == [] and len(ring) == 0
    ring.append(7.0)
    assert list(ring) == [7.0]


def test_its_memory_is_allocated_at_once():
    ring = Samples(10_000)
    before = ring._values.buffer_info()
    for x in range(25_000):
        ring.append(float(x))
    assert ring._values.buffer_info() == before and ring.capacity == 10_000
    assert list(ring)[:2] == [15_000.0, 15_001.0]


def test_a_ring_holds_at_least_one():
    with pytest.raises(ValueError, match="capacity must be >= 1"):
        Samples(0)
