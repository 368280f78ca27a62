"""Baselines: ecmp, rr, letflow, minrtt, wcmp."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.baselines import parse_weights

PATHS = [
    PathState(1, True, srtt_ms=30.0, capacity_mbps=10.0),
    PathState(2, True, srtt_ms=10.0, capacity_mbps=30.0),
    PathState(3, False, srtt_ms=5.0, capacity_mbps=50.0),
]


@pytest.mark.parametrize(
    ("name", "mode"), [("ecmp", Mode.HASH), ("rr", Mode.RR), ("letflow", Mode.FLOWLET)]
)
def test_equal_weights_over_alive(name, mode):
    d = make_policy(name).decide(PATHS, 0.0)
    assert d.mode == mode
    assert d.weights == {1: 1.0, 2: 1.0, 3: 0.0}


def test_minrtt_smallest_alive_srtt():
    d = make_policy("minrtt").decide(PATHS, 0.0)
    # path 3 has the smallest srtt but is dead: path 2 (10 ms) gets everything
    assert d.mode == Mode.FLOWLET
    assert d.weights == {1: 0.0, 2: 30.0, 3: 0.0}


def test_minrtt_spills_to_the_next_path_while_the_fastest_is_full():
    # path 2: bdp = 30 Mbit/s * 10 ms = 37 500 bytes; 40 000 in flight: full -> path 1 too,
    # weights ∝ capacity; path 1 (bdp 37 500, 1 000 in flight) has room: nothing after it
    full = [
        PathState(1, True, srtt_ms=30.0, capacity_mbps=10.0, inflight_bytes=1_000),
        PathState(2, True, srtt_ms=10.0, capacity_mbps=30.0, inflight_bytes=40_000),
        PathState(3, True, srtt_ms=50.0, capacity_mbps=50.0, inflight_bytes=0),
    ]
    assert make_policy("minrtt").decide(full, 0.0).weights == {1: 10.0, 2: 30.0, 3: 0.0}
    # in-flight unknown: delivering >= 90 % of the capacity counts as full
    busy = [PathState(1, True, srtt_ms=5.0, capacity_mbps=10.0, goodput_mbps=9.5),
            PathState(2, True, srtt_ms=8.0, capacity_mbps=5.0, goodput_mbps=1.0)]
    assert make_policy("minrtt").decide(busy, 0.0).weights == {1: 10.0, 2: 5.0}
    room = [PathState(1, True, srtt_ms=5.0, capacity_mbps=10.0, goodput_mbps=5.0),
            PathState(2, True, srtt_ms=8.0, capacity_mbps=5.0)]
    assert make_policy("minrtt").decide(room, 0.0).weights == {1: 10.0, 2: 0.0}


def test_minrtt_unmeasured_tried_first_and_ties():
    paths = [*PATHS, PathState(4, True)]
    assert make_policy("minrtt").decide(paths, 0.0).weights == {1: 0, 2: 0, 3: 0, 4: 1}
    tie = [PathState(2, True, srtt_ms=10.0), PathState(1, True, srtt_ms=10.0)]
    assert make_policy("minrtt").decide(tie, 0.0).weights == {2: 0.0, 1: 1.0}  # no capacity


def test_wcmp_capacity_and_unmeasured():
    d = make_policy("wcmp").decide(PATHS, 0.0)
    assert d.mode == Mode.HASH
    assert d.weights == {1: 10.0, 2: 30.0, 3: 0.0}
    # unmeasured alive path: mean of the measured alive capacities (10 + 30) / 2 = 20
    d = make_policy("wcmp").decide([*PATHS, PathState(4, True)], 0.0)
    assert d.weights[4] == pytest.approx(20.0)


def test_wcmp_operator_weights():
    d = make_policy("wcmp", {"weights": "1:3,2:1,3:5"}).decide(PATHS, 0.0)
    assert d.weights == {1: 3.0, 2: 1.0, 3: 0.0}  # path 3 is dead
    d = make_policy("wcmp", {"weights": "3:5"}).decide(PATHS, 0.0)
    assert d.weights == {1: 1.0, 2: 1.0, 3: 0.0}  # every listed path dead: equal over alive


def test_parse_weights():
    assert parse_weights("1:3, 2:0.5") == {1: 3.0, 2: 0.5}
    assert parse_weights("") == {}
    for bad in ("1", "a:1", "1:-1", "1:1,1:2", "1:inf"):
        with pytest.raises(FieldError) as err:
            parse_weights(bad)
        assert err.value.field == "weights"
