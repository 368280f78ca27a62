"""bench/ui_fabric.py: the --fabric shape, and the feeder's reports reach every pair's
estimators with the marked pair's path 1 carrying the marker."""

from __future__ import annotations

import pytest

from mpsched.bench.ui_fabric import FabricFeeder, parse_shape, section
from mpsched.controller.app.core import Controller, ControllerSettings
from tests.unit.controller.fakes import fabric
from tests.unit.controller.helpers import pipeline


def test_shapes_are_leaves_x_spines():
    assert parse_shape("8x4") == (8, 4)
    for bad in ("8", "1x2", "8x0", "x4", "8x4x1"):
        with pytest.raises(ValueError, match="LEAVESxSPINES"):
            parse_shape(bad)
    assert section(8, 4)["leaf_spine"]["leaves"] == 8


def test_the_feeder_reports_every_pair_and_marks_leaf1_to_leaf2_path_1():
    ctl = Controller(fabric(section(3, 2)), pipeline(), "x.json",
                     ControllerSettings(control=False))
    feeder = FabricFeeder(ctl, 2, seed=1)
    feeder.start()
    try:
        assert feeder.mark(1_000_000) > 0  # the controller holds it
    finally:
        feeder.halt.set()
        feeder.join()
    snaps = ctl.telemetry(1).directions
    assert set(snaps) == {f"leaf{a}->leaf{b}" for a in (1, 2, 3) for b in (1, 2, 3) if a != b}
    assert snaps["leaf1->leaf2"].current["inflight_bytes"] == 1_000_000
    assert snaps["leaf2->leaf1"].current["inflight_bytes"] % 2 == 1  # never a marker
