"""LLHD: gamma_p = GP_p / GP_max + beta * RTT_max / RTT_p, hand-computed."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.ca import ca_fixed_point
from mpsched.controller.policies.llhd import best_path, gammas
from tests.fake_p4rt import CA_UNITS

# GP (Mbit/s), srtt (ms): GP_max = 10, RTT_max = 40, beta = 0.001
#   gamma_1 = 10/10 + 0.001 * 40/20 = 1.002
#   gamma_2 =  5/10 + 0.001 * 40/10 = 0.504
#   gamma_3 =  8/10 + 0.001 * 40/40 = 0.801
THREE = [
    PathState(1, True, goodput_mbps=10.0, srtt_ms=20.0),
    PathState(2, True, goodput_mbps=5.0, srtt_ms=10.0),
    PathState(3, True, goodput_mbps=8.0, srtt_ms=40.0),
]


def test_gamma_three_paths():
    g = gammas({1: 10.0, 2: 5.0, 3: 8.0}, {1: 20.0, 2: 10.0, 3: 40.0}, beta=0.001)
    assert g == pytest.approx({1: 1.002, 2: 0.504, 3: 0.801})


def test_gamma_two_paths_large_beta():
    # beta = 1: gamma_1 = 10/10 + 10/10 = 2; gamma_2 = 5/10 + 10/5 = 2.5
    g = gammas({1: 10.0, 2: 5.0}, {1: 10.0, 2: 5.0}, beta=1.0)
    assert g == pytest.approx({1: 2.0, 2: 2.5})
    assert best_path(g) == 2


def test_best_is_the_max_not_the_last():
    # as printed (gamma_curr = gamma_max), gamma_max stays 0 and the last path (3) would win
    assert best_path({1: 1.002, 2: 0.504, 3: 0.801}) == 1
    assert best_path({1: 0.5, 2: 0.9, 3: 0.7}) == 2
    assert best_path({2: 0.7, 1: 0.7}) == 1  # tie: lowest id


def test_decide_weighted_and_winner_takes_all():
    d = make_policy("llhd").decide(THREE, 0.0)
    assert d.mode == Mode.FLOWLET
    assert d.weights == pytest.approx({1: 1.002, 2: 0.504, 3: 0.801})
    assert d.scores == pytest.approx(d.weights)
    d = make_policy("llhd", {"weighted": False}).decide(THREE, 0.0)
    assert d.weights == {1: 1.0, 2: 0.0, 3: 0.0}


def test_dead_and_unmeasured():
    # path 1 dead; path 3 unmeasured: GP = the neutral prior, the mean availability of the
    # others (path 2's goodput, 5: nothing else is known of it), RTT = min known (10);
    #   gamma_2 = gamma_3 = 5/5 + 0.001 * 10/10 = 1.001
    paths = [
        PathState(1, False, goodput_mbps=10.0, srtt_ms=20.0),
        PathState(2, True, goodput_mbps=5.0, srtt_ms=10.0),
        PathState(3, True),
    ]
    d = make_policy("llhd").decide(paths, 0.0)
    assert d.weights == pytest.approx({1: 0.0, 2: 1.001, 3: 1.001})


def test_goodput_share_is_availability():
    # not queued: GP = capacity * (1 - loss) = 10 * 0.9 = 9 and 5; queued: the goodput, 2
    #   gamma = 9/9, 5/9, 2/9 (+ 0.001 each, equal RTTs)
    paths = [
        PathState(1, True, goodput_mbps=0.1, capacity_mbps=10.0, loss_rate=0.1, srtt_ms=10.0),
        PathState(2, True, goodput_mbps=4.0, capacity_mbps=5.0, owd_ms=1.0, srtt_ms=10.0),
        PathState(3, True, goodput_mbps=2.0, capacity_mbps=10.0, owd_ms=25.0, srtt_ms=10.0),
    ]
    d = make_policy("llhd").decide(paths, 0.0)
    assert d.scores == pytest.approx({1: 1.001, 2: 5 / 9 + 0.001, 3: 2 / 9 + 0.001})
    assert "GP = availability" in d.reason


# -- llhd-ca: gamma as the cost of the congestion-aware data plane ----------------------

# path 1: 10 Mbit/s, base RTT 20 ms; path 2: 5 Mbit/s, base RTT 10 ms; beta = 1, S = 10000:
#   A = 10, 5 (no queue: capacity); RTT_max = 20
#   gamma_1 = 10/10 + 20/20 = 2; gamma_2 = 5/10 + 20/10 = 2.5; gamma_max = 2.5
#   offset_1 = 10000 * 0.5 / 2.5 = 2000; offset_2 = 0
#   c_util = S / gamma_max = 4000 (reference capacity A_max = 10 on every path)
#   c_qdelay = 4000 * beta * 20000 / 10000^2 = 0.8; c_loss = 4000 * 0.01 = 40 µs per 1 %
CA_TWO = [
    PathState(1, True, capacity_mbps=10.0, srtt_ms=25.0, rtt_min_ms=20.0, owd_ms=0.5),
    PathState(2, True, capacity_mbps=5.0, srtt_ms=10.0, rtt_min_ms=10.0, owd_ms=0.5),
    PathState(3, False, capacity_mbps=10.0),
]


def test_llhd_ca_coefficients_and_offsets_hand_computed():
    d = make_policy("llhd-ca", {"beta": 1.0}).decide(CA_TWO, 0.0)
    assert d.mode == Mode.CA
    assert d.weights == {1: 1.0, 2: 1.0, 3: 0.0}
    c = d.ca
    assert set(c.paths) == {1, 2}
    assert c.paths[1].offset_us == pytest.approx(2000.0)
    assert c.paths[2].offset_us == pytest.approx(0.0)
    assert c.paths[1].capacity_mbps == c.paths[2].capacity_mbps == 10.0
    assert c.util_coef_us == pytest.approx(4000.0)
    assert c.qdelay_coef == pytest.approx(0.8)
    assert c.loss_coef_us == pytest.approx(40.0)
    assert "offset_us 1=2000 2=0" in d.reason and "gamma" in d.reason
    # the switch's parameters are well formed
    fixed = ca_fixed_point(c, 4, CA_UNITS)
    assert fixed["offset_1"] == 2000 and fixed["offset_3"] == 0 and fixed["c_qdelay"] == 205


def test_llhd_ca_monotone_in_availability_and_rtt():
    def offset_of_2(**kw):
        paths = [
            PathState(1, True, capacity_mbps=10.0, rtt_min_ms=20.0),
            PathState(2, True, **{"capacity_mbps": 10.0, "rtt_min_ms": 20.0, **kw}),
        ]
        return make_policy("llhd-ca", {"beta": 0.5}).decide(paths, 0.0).ca.paths[2].offset_us

    # less availability, a longer base RTT: a larger offset
    assert offset_of_2(capacity_mbps=2.0) > offset_of_2(capacity_mbps=5.0) > offset_of_2() == 0
    assert offset_of_2(rtt_min_ms=80.0) > offset_of_2(rtt_min_ms=40.0) > 0
    assert offset_of_2(loss_rate=0.2) > offset_of_2(loss_rate=0.1) > 0
    # a larger beta weighs queueing more
    q = [
        make_policy("llhd-ca", {"beta": b}).decide(CA_TWO, 0.0).ca.qdelay_coef
        for b in (0.001, 0.1, 1.0)
    ]
    assert q[0] < q[1] < q[2]


def test_llhd_ca_missing_estimates_neutral_and_no_path_alive():
    # path 2 unmeasured: the prior availability (10) and the smallest RTT: offset 0
    paths = [PathState(1, True, capacity_mbps=10.0, rtt_min_ms=20.0), PathState(2, True)]
    d = make_policy("llhd-ca").decide(paths, 0.0)
    assert d.ca.paths[2].offset_us == pytest.approx(0.0)
    assert d.weights == {1: 1.0, 2: 1.0}
    # nothing measured anywhere: all offsets 0, no utilisation term
    d = make_policy("llhd-ca").decide([PathState(1, True), PathState(2, True)], 0.0)
    assert {p.offset_us for p in d.ca.paths.values()} == {0.0}
    assert d.ca.util_coef_us == 0.0
    d = make_policy("llhd-ca").decide([PathState(1, False), PathState(2, False)], 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0, 2: 1.0} and d.ca is not None
    assert d.reason.startswith("no path alive")
