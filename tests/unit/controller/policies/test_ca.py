"""The congestion-aware mode's controller side (src/mpsched/controller/policies/ca.py): the cost
estimate,
the fixed-point parameters of set_ca, offsets from scores, the `ca` policy, and its
placement in the scheduler (quantised CA parameters, flowlet gap, decision log)."""

from __future__ import annotations

import json
import math

import pytest

from mpsched.controller.model.decision import CaCost, CaPath, Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.ca import (
    CA_OFFSET_STEP_US,
    U32_MAX,
    base_owd_ms,
    ca_fixed_point,
    inv_capacity,
    live_cost,
    offsets_from_scores,
    quantise_ca,
)
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.scheduler import Scheduler
from tests.fake_p4rt import CA_UNITS

# -- live_cost -------------------------------------------------------------------


def test_live_cost_adds_the_terms_in_us():
    cost = CaCost(
        qdelay_coef=2.0,
        loss_coef_us=1000.0,
        util_coef_us=500.0,
        paths={1: CaPath(offset_us=300.0, capacity_mbps=10.0)},
    )
    s = PathState(1, True, owd_ms=1.5, loss_rate=0.02, goodput_mbps=5.0, capacity_mbps=99.0)
    # 300 + 2 * 1500 + 1000 * 2 (%) + 500 * 0.5 (the CaPath's capacity, not the state's)
    assert live_cost(s, cost) == pytest.approx(300 + 3000 + 2000 + 250)


def test_live_cost_missing_estimates_count_zero():
    cost = CaCost(paths={1: CaPath(800.0, None)})
    assert live_cost(PathState(1, True), cost) == 800.0
    # no CaPath: offset 0 and the state's own capacity
    s = PathState(2, False, goodput_mbps=10.0, capacity_mbps=20.0)
    assert live_cost(s, cost) == pytest.approx(0.5 * cost.util_coef_us)  # liveness ignored
    # unknown or 0 capacity: no utilisation term
    assert live_cost(PathState(2, True, goodput_mbps=10.0, capacity_mbps=0.0), cost) == 0.0


def test_default_cost_weighs_as_documented():
    """1 % loss ≈ 20 ms, 100 % utilisation ≈ 10 ms, 1 µs per µs of queueing."""
    cost = CaCost()
    assert live_cost(PathState(1, True, loss_rate=0.01), cost) == pytest.approx(20_000)
    full = PathState(1, True, goodput_mbps=50.0, capacity_mbps=50.0)
    assert live_cost(full, cost) == pytest.approx(10_000)
    assert live_cost(PathState(1, True, owd_ms=3.0), cost) == pytest.approx(3_000)
    assert (cost.epsilon_us, cost.max_age_ms) == (2000.0, 500.0)


# -- ca_fixed_point --------------------------------------------------------------


def test_fixed_point_coefficients():
    cost = CaCost(
        qdelay_coef=1.5,
        loss_coef_us=20_000.0,
        util_coef_us=10_000.0,
        epsilon_us=2000.4,
        max_age_ms=500.0,
        paths={2: CaPath(1234.6, 100.0)},
    )
    fixed = ca_fixed_point(cost, 4, CA_UNITS)
    assert fixed["c_qdelay"] == 384  # 1.5 * 256
    assert fixed["c_loss"] == round(256 * 20_000 * 100 / 65536)  # 7812.5 -> 7812
    assert fixed["c_util"] == round(256 * 10_000 / 65536)  # 39
    assert fixed["epsilon"] == 2000
    assert fixed["max_age_us"] == 500_000
    assert [fixed[f"offset_{i}"] for i in range(1, 5)] == [0, 1235, 0, 0]
    assert [fixed[f"inv_capacity_{i}"] for i in (1, 3, 4)] == [0, 0, 0]
    # 100 Mbit/s deliver 204800 bytes per 16384 µs window: 2^32 * 16 / 204800
    assert fixed["inv_capacity_2"] == round(2**32 * 16 / 204_800)
    names = list(fixed)
    assert names[:5] == ["c_qdelay", "c_loss", "c_util", "epsilon", "max_age_us"]
    assert names[5:] == [f"offset_{i}" for i in range(1, 5)] + [
        f"inv_capacity_{i}" for i in range(1, 5)
    ]


def test_switch_arithmetic_with_the_fixed_point_matches_live_cost():
    """The switch's integer cost (spec formula) from the fixed-point parameters is the
    controller's estimate within rounding, at the switch's units."""
    units = CA_UNITS
    cost = CaCost(paths={1: CaPath(400.0, 40.0)})
    fixed = ca_fixed_point(cost, 4, units)
    qdelay_us, loss_fraction, goodput_mbps = 2500, 0.005, 30.0
    window_bytes = goodput_mbps * 125 * units["rate_window_us"] / 1000
    rate = int(window_bytes / units["rate_unit_bytes"])
    util = (rate * fixed["inv_capacity_1"]) >> 16
    loss = int(loss_fraction * units["loss_one"])
    live = (fixed["c_qdelay"] * qdelay_us + fixed["c_loss"] * loss + fixed["c_util"] * util) >> 8
    switch_cost = fixed["offset_1"] + live
    estimate = live_cost(
        PathState(1, True, owd_ms=2.5, loss_rate=loss_fraction, goodput_mbps=goodput_mbps),
        cost,
    )
    assert switch_cost == pytest.approx(estimate, rel=0.01)


def test_inv_capacity_full_rate_is_util_one():
    units = CA_UNITS
    for mbps in (1.0, 10.0, 100.0, 1000.0):
        rate = mbps * 125 * units["rate_window_us"] / 1000 / units["rate_unit_bytes"]
        assert (int(rate) * inv_capacity(mbps, units)) >> 16 == pytest.approx(65536, rel=0.001)
    assert inv_capacity(None, units) == 0
    assert inv_capacity(0.0, units) == 0
    assert inv_capacity(-5.0, units) == 0
    assert inv_capacity(1e-9, units) == U32_MAX  # clamped


def test_fixed_point_clamps_and_refuses():
    huge = CaCost(qdelay_coef=1e12, epsilon_us=-5.0, paths={1: CaPath(1e15, None)})
    fixed = ca_fixed_point(huge, 2, CA_UNITS)
    assert fixed["c_qdelay"] == U32_MAX and fixed["epsilon"] == 0 and fixed["offset_1"] == U32_MAX
    with pytest.raises(ValueError, match=r"path ids \[5\] outside 1..4"):
        ca_fixed_point(CaCost(paths={5: CaPath(0.0, None)}), 4, CA_UNITS)
    with pytest.raises(ValueError, match="offset_1 must be finite"):
        ca_fixed_point(CaCost(paths={1: CaPath(math.nan, None)}), 4, CA_UNITS)
    with pytest.raises(ValueError, match=r"lacks .*\['coef_one'\]"):
        ca_fixed_point(CaCost(), 4, {**CA_UNITS, "coef_one": 0})


def test_quantise_ca():
    cost = CaCost(paths={1: CaPath(149.0, 94.7), 2: CaPath(151.0, 0.0123), 3: CaPath(0.0, None)})
    q = quantise_ca(cost)
    assert q.paths[1] == CaPath(100.0, 95.0)
    assert q.paths[2] == CaPath(2 * CA_OFFSET_STEP_US, 0.012)
    assert q.paths[3] == CaPath(0.0, None)
    assert (q.qdelay_coef, q.epsilon_us) == (cost.qdelay_coef, cost.epsilon_us)
    assert quantise_ca(CaCost(paths={1: CaPath(120.0, 94.9)})) == quantise_ca(
        CaCost(paths={1: CaPath(90.0, 95.2)})
    )


def test_quantise_ca_rounds_the_util_coefficient():
    """A utilisation coefficient derived from RTTs moves every period: 2 significant digits."""
    assert quantise_ca(CaCost(util_coef_us=163_456.0)).util_coef_us == 160_000.0
    assert quantise_ca(CaCost(util_coef_us=10_049.0)).util_coef_us == 10_000.0
    assert quantise_ca(CaCost(util_coef_us=0.0)).util_coef_us == 0.0


# -- offsets_from_scores ---------------------------------------------------------


def test_offsets_from_scores():
    assert offsets_from_scores({1: 3.0, 2: 1.0, 3: 2.0}, 1000.0) == {1: 0.0, 2: 1000.0, 3: 500.0}
    assert offsets_from_scores({1: 0.5, 2: 0.5}, 1000.0) == {1: 0.0, 2: 0.0}
    assert offsets_from_scores({1: 2.0, 2: 2.0, 3: 1.0}, 400.0) == {1: 0.0, 2: 0.0, 3: 400.0}
    assert offsets_from_scores({}, 1000.0) == {}
    assert offsets_from_scores({1: 1.0, 2: -1.0}, 0.0) == {1: 0.0, 2: 0.0}
    with pytest.raises(ValueError, match="score of path 2"):
        offsets_from_scores({1: 1.0, 2: math.inf}, 100.0)
    with pytest.raises(ValueError, match="span_us"):
        offsets_from_scores({1: 1.0}, -1.0)


# -- the ca policy ---------------------------------------------------------------


def test_ca_policy_offsets_from_base_one_way_delay():
    """Base OWD = latest raw OWD - queueing above the window minimum; offsets relative to
    the fastest path; weights 1 alive, 0 dead; capacities passed through."""
    paths = [
        PathState(1, True, owd_raw_ms=12.0, owd_ms=2.0, capacity_mbps=100.0),  # base 10
        PathState(2, True, owd_raw_ms=15.5, owd_ms=0.0, capacity_mbps=None),  # base 15.5
        PathState(3, False, owd_raw_ms=11.0, owd_ms=0.0, capacity_mbps=50.0),  # dead
    ]
    d = make_policy("ca").decide(paths, 0.0)
    assert d.mode == Mode.CA
    assert d.weights == {1: 1.0, 2: 1.0, 3: 0.0}
    assert d.ca is not None
    assert d.ca.paths[1] == CaPath(0.0, 100.0)
    assert d.ca.paths[2] == CaPath(pytest.approx(5500.0), None)
    assert d.ca.paths[3].offset_us == 0.0  # not measured among the alive: optimistic
    assert d.scores[1] == pytest.approx(2000.0)  # queueing 2 ms
    assert d.scores[2] == pytest.approx(5500.0)
    assert "offsets from owd_min" in d.reason and "ca:" in d.reason


def test_ca_policy_falls_back_to_rtt_min_and_scales():
    paths = [
        PathState(1, True, rtt_min_ms=20.0),
        PathState(2, True, rtt_min_ms=30.0, owd_raw_ms=5.0),
    ]
    offsets, source = base_owd_ms(paths)
    assert source == "rtt_min/2" and offsets == {1: 10.0, 2: 15.0}
    d = make_policy("ca", {"offset_scale": 2.0, "epsilon_us": 500.0}).decide(paths, 0.0)
    assert d.ca.paths[2].offset_us == pytest.approx(10_000.0)
    assert d.ca.epsilon_us == 500.0
    flat = make_policy("ca", {"offset_scale": 0.0}).decide(paths, 0.0)
    assert {p.offset_us for p in flat.ca.paths.values()} == {0.0}


def test_ca_policy_copies_syns_only_when_asked():
    paths = [PathState(1, True), PathState(2, True)]
    assert make_policy("ca").decide(paths, 0.0).syn_copy is False
    assert make_policy("ca", {"syn_copy": True}).decide(paths, 0.0).syn_copy is True
    dead = [PathState(1, False), PathState(2, False)]
    assert make_policy("ca", {"syn_copy": True}).decide(dead, 0.0).syn_copy is True
    with pytest.raises(FieldError) as err:
        make_policy("ca", {"syn_copy": 1})
    assert err.value.field == "params.syn_copy"


def test_ca_policy_unmeasured_and_no_alive():
    d = make_policy("ca").decide([PathState(1, True), PathState(2, True)], 0.0)
    assert d.weights == {1: 1.0, 2: 1.0}
    assert {p.offset_us for p in d.ca.paths.values()} == {0.0}
    assert "no delay measured" in d.reason
    dead = make_policy("ca").decide([PathState(1, False), PathState(2, False)], 0.0)
    assert dead.mode == Mode.CA and dead.weights == {1: 1.0, 2: 1.0}
    assert dead.ca is not None and "no path alive" in dead.reason


def test_ca_params_are_checked():
    with pytest.raises(FieldError) as err:
        make_policy("ca", {"loss_coef_us": -1.0})
    assert err.value.field == "params.loss_coef_us"
    with pytest.raises(FieldError) as err:
        make_policy("ca", {"max_age_ms": "soon"})
    assert err.value.field == "params.max_age_ms"
    p = make_policy("ca", {"qdelay_coef": 0.5}).params
    assert p.qdelay_coef == 0.5 and p.util_coef_us == CaCost.util_coef_us


# -- in the scheduler ------------------------------------------------------------


def _ca_sched(**kw) -> Scheduler:
    cls = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("ca"))
    return Scheduler(["s1"], [1, 2], [cls], **kw)


def test_placement_carries_quantised_ca_and_a_flowlet_gap():
    s = _ca_sched()
    paths = [
        PathState(1, True, owd_raw_ms=10.0, owd_ms=0.0, capacity_mbps=94.7),
        PathState(2, True, owd_raw_ms=13.04, owd_ms=0.0, capacity_mbps=10.0),
    ]
    (change,) = s.step(SwitchView("s1", paths, {}), 1.0)
    pl = change.placement
    assert pl.mode == "ca" and pl.weights == ((1, 255), (2, 255))
    assert pl.ca.paths[1] == CaPath(0.0, 95.0)
    assert pl.ca.paths[2] == CaPath(3000.0, 10.0)
    assert pl.flowlet_gap_us == 4000  # spread 3.04 ms + 500 µs, up to 1000 µs
    # estimator noise below the quantisation: nothing to write
    noisy = [
        PathState(1, True, owd_raw_ms=10.2, owd_ms=0.2, capacity_mbps=95.1),
        PathState(2, True, owd_raw_ms=13.01, owd_ms=0.0, capacity_mbps=10.02),
    ]
    assert s.step(SwitchView("s1", noisy, {}), 2.0) == []
    entry = s.log[-1]
    assert entry["mode"] == "ca"
    assert entry["ca"]["paths"]["2"] == {"offset_us": 3000.0, "capacity_mbps": 10.0}
    assert entry["ca"]["loss_coef_us"] == CaCost.loss_coef_us
    assert "| ca: qdelay 1µs/µs" in entry["reason"] and "offset_us 1=0 2=3000" in entry["reason"]
    json.dumps(entry)


def test_other_modes_have_no_ca():
    s = Scheduler(["s1"], [1, 2])
    (change,) = s.step(SwitchView("s1", [PathState(1, True), PathState(2, True)], {}), 1.0)
    assert change.placement.ca is None
    assert "ca" not in s.log[-1]


def test_without_the_feature_a_ca_policy_is_refused():
    with pytest.raises(FieldError) as err:
        _ca_sched(ca_supported=False)
    assert err.value.field == "classes[0].policy.name"
    assert "NO_CONGESTION" in err.value.message
    s = Scheduler(["s1"], [1, 2], ca_supported=False)
    with pytest.raises(FieldError) as err:
        s.set_class_policy(DEFAULT_CLASS_ID, {"name": "ca"})
    assert err.value.field == "policy.name"
    assert s.classes[DEFAULT_CLASS_ID].policy.name == "ecmp"  # nothing changed
    s.set_class_policy(DEFAULT_CLASS_ID, {"name": "letflow"})  # other policies still fine
