"""src/mpsched/controller/runtime/gcfreeze.py: when the controller freezes its long-lived state out
of the garbage
collector's full collections, and that it unfreezes it again."""

from __future__ import annotations

import gc

import pytest

from mpsched.controller.runtime.gcfreeze import (
    FREEZE_MIN_PATHS,
    FROZEN_FULL_EVERY,
    Freezer,
    freeze_due,
)


def test_freezes_at_the_minimum_then_when_grown_by_half():
    assert not freeze_due(FREEZE_MIN_PATHS - 1, 0, FREEZE_MIN_PATHS)
    assert freeze_due(FREEZE_MIN_PATHS, 0, FREEZE_MIN_PATHS)
    assert not freeze_due(2999, 2000, 2000)
    assert freeze_due(3000, 2000, 2000)
    assert not freeze_due(10**6, 0, 0)  # 0: never


@pytest.fixture
def unfrozen():
    assert gc.get_freeze_count() == 0, "something in this process froze objects already"
    yield
    gc.unfreeze()


def test_a_freeze_moves_the_tracked_objects_out_and_release_brings_them_back(unfrozen):
    f = Freezer(min_paths=10)
    assert not f.maybe(9) and gc.get_freeze_count() == 0
    assert f.maybe(10) and f.frozen == gc.get_freeze_count() > 0
    assert not f.maybe(14)  # not grown by half
    f.release()
    assert gc.get_freeze_count() == 0 and f.last == 0
    f.release()  # nothing frozen: nothing to do


def test_full_collections_are_rarer_while_frozen_and_as_before_after_release(unfrozen):
    before = gc.get_threshold()
    f = Freezer(min_paths=10)
    f.maybe(10)
    assert gc.get_threshold() == (before[0], before[1], FROZEN_FULL_EVERY)
    f.maybe(20)  # a second freeze keeps the collector's thresholds of before the first
    f.release()
    assert gc.get_threshold() == before
