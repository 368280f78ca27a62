"""src/mpsched/controller/model/placement.py: placements compare equal exactly when the switch
need not be written, and read as maps."""

from __future__ import annotations

from mpsched.controller.model.decision import CaCost
from mpsched.controller.model.placement import Change, Placement


def test_equal_placements_need_no_write():
    a = Placement(((1, 255), (2, 0)), "flowlet", 500)
    assert a == Placement(((1, 255), (2, 0)), "flowlet", 500)
    assert a != Placement(((1, 255), (2, 1)), "flowlet", 500)
    assert a != Placement(((1, 255), (2, 0)), "flowlet", 500, syn_copy=True)
    assert a != Placement(((1, 255), (2, 0)), "ca", 500, ca=CaCost())


def test_maps():
    pl = Placement(((1, 10), (2, 0)), "vq", 500, vq=((1, (100, 2000, 30, 1024)),))
    assert pl.weight_map() == {1: 10, 2: 0}
    assert pl.vq_map() == {1: (100, 2000, 30, 1024)}


def test_a_change_without_a_previous_placement():
    pl = Placement(((1, 255),), "hash", 0)
    assert Change("s1", 0, pl).previous is None
