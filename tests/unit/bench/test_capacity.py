"""bench-capacity's pure parts: the scaled scenario and the capacity verdict."""

import math

import pytest
import yaml

from mpsched.bench.capacity import SHAPE, Step, capacity_mbps, scaled_shape
from mpsched.lab.scenario import parse


def test_scaled_shape_keeps_the_ratios_and_parses():
    data = yaml.safe_load(SHAPE.read_text())
    out = scaled_shape(data, 36, (3, 2, 1), "capacity-36")
    assert [p["rate_mbps"] for p in out["paths"]] == [18, 12, 6]
    assert out["name"] == "capacity-36"
    assert data["name"] == "mptcp-steered"  # the input is not changed
    sc = parse(out, source=SHAPE)
    assert [p.rate_at(0) for p in sc.topo.paths] == [18, 12, 6]
    four = parse(scaled_shape(data, 24, (1, 1, 1, 1), "c4"), source=SHAPE)
    assert len(four.topo.paths) == 4
    assert next(w for w in four.workload if w.mptcp).subflows == 4
    with pytest.raises(ValueError):
        scaled_shape(data, 0, (1,), "x")


def _step(mbps, fracs, bound=None):
    return Step(mbps, tuple(fracs), tuple(bound or [False] * len(fracs)))


def test_capacity_is_the_last_kept_step_before_the_sweep_stops():
    steps = [_step(12, [0.95, 0.93]), _step(24, [0.91, 0.92]), _step(36, [0.88, 0.87]),
             _step(48, [0.80, 0.82])]
    assert [s.kept() for s in steps] == [True, True, False, False]
    assert [s.stops() for s in steps] == [False, False, False, True]
    assert capacity_mbps(steps) == 24
    # a cpu_bound run neither counts nor lets the sweep go on
    assert capacity_mbps([_step(12, [0.95]), _step(24, [0.95], [True]), _step(36, [0.95])]) == 12
    assert capacity_mbps([_step(12, [0.5])]) == 0
    # a step whose runs all failed stops the sweep
    assert _step(12, []).stops() and not _step(12, []).kept()
    assert math.isnan(_step(12, []).mean_frac)


def test_shares_sum_the_roles_per_run():
    step = Step(12, (0.9,), (False,), (50.0,),
                ({"controller": 5.0, "s1": 10.0, "s2": 12.0, "send0@h1": 3.0, "e1": 1.0},))
    assert step.share("controller") == 5.0
    assert step.share(r"s\d+") == 22.0
    assert step.share(r"e\d+") == 1.0
