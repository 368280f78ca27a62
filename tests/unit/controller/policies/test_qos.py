"""QoS score S_p, the jitter-adapted loss window and class targets; hand-computed."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.qos import (
    Qos,
    QosParams,
    expected_delay_ms,
    next_loss_window,
    score,
    timeout_ms,
)

# path 1: bdp = 10 Mbit/s * 20 ms = 25000 B, in flight 10000 -> headroom 0.6, no queue,
#   loss 0 -> delay = 0 * 200 + 1 * 20 / 2 = 10 ms -> S = 0.6 / 10 = 0.06
# path 2: bdp = 5 * 40 * 125 = 25000 B, in flight 5000 -> headroom 0.8, loss 0.05, RTO 200
#   -> delay = 0.05 * 200 + 0.95 * 40 / 2 = 10 + 19 = 29 ms -> S = 0.8 / 29 = 0.0275862
PATHS = [
    PathState(
        1, True, srtt_ms=20.0, capacity_mbps=10.0, inflight_bytes=10000, loss_rate=0.0, rto_ms=200.0
    ),
    PathState(
        2, True, srtt_ms=40.0, capacity_mbps=5.0, inflight_bytes=5000, loss_rate=0.05, rto_ms=200.0
    ),
    PathState(3, False, srtt_ms=1.0),
]


def test_expected_delay_and_score():
    # queued 30000 / bdp 12500 -> 2 rounds; [0.1*200 + 0.9*20] = 38; [0.1*200 + 0.9*10] = 29
    # -> 2 * 38 + 29 = 105 ms
    assert expected_delay_ms(30000, 12500, 0.1, 20.0, 200.0) == pytest.approx(105.0)
    assert expected_delay_ms(0, 12500, 0.0, 20.0, 200.0) == pytest.approx(10.0)
    assert score(0.6, 10.0) == pytest.approx(0.06)
    assert score(0.6, 0.0) == 0.0


def test_timeout():
    assert timeout_ms(PathState(1, True, rto_ms=300.0), 20.0, 200.0) == 300.0
    # srtt + 4 rttvar = 20 + 20 = 40, floored at 200
    assert timeout_ms(PathState(1, True, rttvar_ms=5.0), 20.0, 200.0) == 200.0
    assert timeout_ms(PathState(1, True, rttvar_ms=5.0), 20.0, 0.0) == 40.0


def test_scores_and_weights():
    d = Qos().decide(PATHS, 0.0)
    assert d.mode == Mode.FLOWLET
    assert d.scores == pytest.approx({1: 0.06, 2: 0.8 / 29, 3: 0.0})
    assert d.weights == pytest.approx({1: 0.06, 2: 0.8 / 29, 3: 0.0})
    d = Qos(QosParams(weighted=False)).decide(PATHS, 0.0)
    assert d.weights == {1: 1.0, 2: 0.0, 3: 0.0}


def test_targets_filter():
    d = Qos(QosParams(max_loss=0.01)).decide(PATHS, 0.0)  # path 2 (5 %) out
    assert d.weights == pytest.approx({1: 0.06, 2: 0.0, 3: 0.0})
    d = Qos(QosParams(min_rate_mbps=8.0)).decide(PATHS, 0.0)  # path 2 (5 Mbit/s) out
    assert d.weights[2] == 0.0 and d.weights[1] > 0
    d = Qos(QosParams(max_delay_ms=20.0)).decide(PATHS, 0.0)  # path 2 (29 ms) out
    assert d.weights[2] == 0.0 and d.weights[1] > 0
    # nobody meets 5 ms: all alive paths eligible, the reason says so
    d = Qos(QosParams(max_delay_ms=5.0)).decide(PATHS, 0.0)
    assert d.weights[1] > 0 and d.weights[2] > 0 and d.weights[3] == 0
    assert "no path meets the class targets" in d.reason


def test_loss_window():
    # d = d_prev * (1 + J), clamped
    assert next_loss_window(1.0, 0.5, 0.2, 10.0) == pytest.approx(1.5)
    assert next_loss_window(1.0, -0.9, 0.2, 10.0) == pytest.approx(0.2)
    assert next_loss_window(8.0, 0.5, 0.2, 10.0) == pytest.approx(10.0)
    # constant srtt: J = 0, the window stays 1 s; at t = 2 the readings of t = 1, 2 count:
    # (0.1 + 0.2) / 2 = 0.15
    pol = Qos()
    for t, lr in ((0.0, 0.0), (1.0, 0.1), (2.0, 0.2)):
        got = pol.loss_rate(PathState(1, True, srtt_ms=20.0, loss_rate=lr), t)
    assert got == pytest.approx(0.15)
    # rising srtt: [20, 30] -> J = (30 - 25) / 10 = 0.5 -> window 1 * 1.5 = 1.5 s
    pol = Qos()
    pol.loss_rate(PathState(1, True, srtt_ms=20.0, loss_rate=0.0), 0.0)
    pol.loss_rate(PathState(1, True, srtt_ms=30.0, loss_rate=0.3), 1.0)
    assert pol._window[1] == pytest.approx(1.5)


def test_unmeasured_path_looks_empty():
    # no bdp: headroom ratio 1, no queue; srtt = mean of known (20) -> delay 10 -> S = 0.1
    d = Qos().decide([PATHS[0], PathState(4, True)], 0.0)
    assert d.scores[4] == pytest.approx(0.1)


# -- qos-ca: the QoS score as the cost of the congestion-aware data plane ----------------
# D = delay / headroom = 1 / S: path 1 10 / 0.6 = 16.667 ms, path 2 29 / 0.8 = 36.25 ms
#   offsets 0 and 19583.3 µs; D_ref = 26.458 ms -> c_util = 26458 µs, reference capacity
#   cap * D_ref / D_p = 15.875 and 3.6494
#   c_qdelay = mean((1 - lr) * (rounds + 1/2)) = (0.5 + 0.475) / 2 = 0.4875
#   c_loss = mean(10 * (t_to - srtt/2)) = (1900 + 1800) / 2 = 1850 µs per 1 %


def test_qos_ca_hand_computed():
    d = make_policy("qos-ca").decide(PATHS, 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0, 2: 1.0, 3: 0.0}
    c = d.ca
    assert set(c.paths) == {1, 2}
    assert c.paths[1].offset_us == pytest.approx(0.0)
    assert c.paths[2].offset_us == pytest.approx((36.25 - 10 / 0.6) * 1000)
    d_ref = (36.25 + 10 / 0.6) / 2
    assert c.util_coef_us == pytest.approx(d_ref * 1000)
    assert c.paths[1].capacity_mbps == pytest.approx(10 * d_ref / (10 / 0.6))
    assert c.paths[2].capacity_mbps == pytest.approx(5 * d_ref / 36.25)
    assert c.qdelay_coef == pytest.approx(0.4875)
    assert c.loss_coef_us == pytest.approx(1850.0)
    assert "1/S" in d.reason and "offset_us" in d.reason


def test_qos_ca_targets_are_the_weights_and_offsets_monotone():
    d = make_policy("qos-ca", {"max_loss": 0.01}).decide(PATHS, 0.0)  # path 2 (5 %) out
    assert d.weights == {1: 1.0, 2: 0.0, 3: 0.0}

    def offset_of_2(inflight):
        paths = [
            PATHS[0],
            PathState(
                2,
                True,
                srtt_ms=20.0,
                capacity_mbps=10.0,
                inflight_bytes=inflight,
                loss_rate=0.0,
                rto_ms=200.0,
            ),
        ]
        return make_policy("qos-ca").decide(paths, 0.0).ca.paths[2].offset_us

    # less headroom: a larger offset; none: max_offset_us
    assert offset_of_2(10000) == pytest.approx(0.0)
    assert 0 < offset_of_2(15000) < offset_of_2(20000) < offset_of_2(30000) == 100000.0


def test_qos_ca_missing_estimates_and_no_path_alive():
    # unknown bdp: headroom 1, srtt = default: equal offsets 0, no utilisation reference
    d = make_policy("qos-ca").decide([PathState(1, True), PathState(2, True)], 0.0)
    assert {p.offset_us for p in d.ca.paths.values()} == {0.0}
    assert {p.capacity_mbps for p in d.ca.paths.values()} == {None}
    d = make_policy("qos-ca").decide([PathState(1, False)], 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0} and d.reason.startswith("no path alive")
