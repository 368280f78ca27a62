"""CMT-LA: Mathis loss estimate, jitter indicator, order, saturated paths; hand-computed."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.cmtla import (
    CmtLa,
    CmtlaParams,
    estimate_loss,
    mathis_loss,
    order_paths,
    take_with_spill,
)


def test_mathis():
    # GP = 1.2 Mbit/s = 150000 B/s, RTT = 0.1 s, MSS 1500:
    # p = (sqrt(1.5) * 1500 / (0.1 * 150000))^2 = (sqrt(1.5) * 0.1)^2 = 0.015
    assert mathis_loss(1.2, 100.0, 1500) == pytest.approx(0.015)
    assert mathis_loss(0.0, 100.0) == 1.0  # no goodput: clamped
    assert mathis_loss(0.001, 100.0) == 1.0


def test_loss_combination():
    p = PathState(1, True, loss_rate=0.01, goodput_mbps=1.2, srtt_ms=100.0)
    assert estimate_loss(p, 1500, 0.0) == pytest.approx(0.01)  # measured only
    # 0.5 * 0.01 + 0.5 * 0.015 = 0.0125
    assert estimate_loss(p, 1500, 0.5) == pytest.approx(0.0125)
    no_measured = PathState(1, True, goodput_mbps=1.2, srtt_ms=100.0)
    assert estimate_loss(no_measured, 1500, 0.0) == pytest.approx(0.015)
    assert estimate_loss(PathState(1, True), 1500, 0.0) == 0.0


def test_order_loss_then_rtt():
    loss = {1: 0.02, 2: 0.01, 3: 0.01}
    rtt = {1: 10.0, 2: 30.0, 3: 20.0}
    # 2 and 3 tie on loss; 3 has the smaller RTT
    assert order_paths(loss, rtt, set()) == [3, 2, 1]
    # an unreliable path goes after every reliable one
    assert order_paths(loss, rtt, {3}) == [2, 1, 3]
    # unmeasured RTT sorts after measured among equal loss
    assert order_paths({1: 0.0, 2: 0.0}, {1: None, 2: 50.0}, set()) == [2, 1]


def test_jitter_unreliable_when_rising():
    pol = CmtLa()
    # observations 0.01: J = 0 (one value)
    assert pol.observe(1, 0.01) == (0.0, False)
    # [0.01, 0.02]: avg 0.015, range 0.01 -> J = 0.5 > 0 and rising from 0
    j, bad = pol.observe(1, 0.02)
    assert j == pytest.approx(0.5) and bad
    # [0.01, 0.02, 0.04]: avg 0.02333, range 0.03 -> J = 0.5556, still rising
    j, bad = pol.observe(1, 0.04)
    assert j == pytest.approx((0.04 - 0.07 / 3) / 0.03) and bad
    # [.., 0.04, 0.04]: avg 0.0275, range 0.03 -> J = 0.4167: positive but falling
    j, bad = pol.observe(1, 0.04)
    assert j == pytest.approx(0.0125 / 0.03) and not bad
    # range 0 -> J = 0
    flat = CmtLa()
    for _ in range(3):
        assert flat.observe(2, 0.05) == (0.0, False)


def test_decide_weights_and_saturated_path_skipped():
    # bdp = 10 Mbit/s * 10 ms = 12500 bytes
    paths = [
        PathState(1, True, loss_rate=0.02, srtt_ms=10.0),
        PathState(2, True, loss_rate=0.01, srtt_ms=30.0, capacity_mbps=10.0),
        PathState(3, True, loss_rate=0.01, srtt_ms=20.0),
        PathState(4, False, loss_rate=0.0, srtt_ms=1.0),
    ]
    d = CmtLa().decide(paths, 0.0)
    assert d.mode == Mode.FLOWLET
    # order 3, 2, 1 -> 1, 0.5, 0.25
    assert d.weights == {1: 0.25, 2: 0.5, 3: 1.0, 4: 0.0}
    # path 3 in flight 30000 >= its bdp 10 Mbit/s * 20 ms = 25000: full, so path 2 is
    # taken too (spill); path 3 keeps its place and its weight
    full = [
        *paths[:2],
        PathState(3, True, loss_rate=0.01, srtt_ms=20.0, capacity_mbps=10.0, inflight_bytes=30000),
        paths[3],
    ]
    d = CmtLa().decide(full, 0.0)
    assert d.weights == {1: 0.5, 2: 1.0, 3: 1.0, 4: 0.0}
    assert "cwnd full [3], so also [2]" in d.reason
    # winner takes all, and with the spill the winner and the next one
    d = CmtLa(CmtlaParams(rank_decay=0.0)).decide(paths, 0.0)
    assert d.weights == {1: 0.0, 2: 0.0, 3: 1.0, 4: 0.0}
    d = CmtLa(CmtlaParams(rank_decay=0.0)).decide(full, 0.0)
    assert d.weights == {1: 0.0, 2: 1.0, 3: 1.0, 4: 0.0}


def test_spill_stops_at_the_first_path_with_room():
    # order 1, 2, 3 by loss; 1 full -> 2 taken; 2 has room -> 3 is not
    paths = [
        PathState(1, True, loss_rate=0.0, srtt_ms=10.0, capacity_mbps=1.0, inflight_bytes=9999),
        PathState(2, True, loss_rate=0.05, srtt_ms=10.0),
        PathState(3, True, loss_rate=0.1, srtt_ms=10.0, capacity_mbps=1.0, inflight_bytes=9999),
    ]
    assert CmtLa().decide(paths, 0.0).weights == {1: 1.0, 2: 1.0, 3: 0.5}
    assert take_with_spill([1, 2, 3], {1}) == [1, 2]
    assert take_with_spill([1, 2, 3], {1, 2, 3}) == [1, 2, 3]
    assert take_with_spill([], set()) == []


def test_all_saturated_all_taken():
    paths = [
        PathState(1, True, loss_rate=0.0, srtt_ms=10.0, capacity_mbps=1.0, inflight_bytes=9999),
        PathState(2, True, loss_rate=0.1, srtt_ms=10.0, capacity_mbps=1.0, inflight_bytes=9999),
    ]
    assert CmtLa().decide(paths, 0.0).weights == {1: 1.0, 2: 1.0}


# -- cmtla-ca: the loss-first order as the cost of the congestion-aware data plane -------


def test_cmtla_ca_loss_first_then_rtt():
    # path 1: 1 % loss, base RTT 10 ms; path 2: no loss, base RTT 30 ms; path 3 unmeasured
    paths = [
        PathState(1, True, loss_rate=0.01, rtt_min_ms=10.0, capacity_mbps=10.0),
        PathState(2, True, loss_rate=0.0, rtt_min_ms=30.0, capacity_mbps=10.0),
        PathState(3, True),
        PathState(4, False, loss_rate=0.0, rtt_min_ms=1.0),
    ]
    d = make_policy("cmtla-ca").decide(paths, 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0, 2: 1.0, 3: 1.0, 4: 0.0}
    c = d.ca
    assert (c.loss_coef_us, c.qdelay_coef, c.util_coef_us) == (100000.0, 1.0, 10000.0)
    # offsets: base RTT above the least (10 ms) in µs; unmeasured: 0 (neutral)
    assert {pid: p.offset_us for pid, p in c.paths.items()} == pytest.approx(
        {1: 0.0, 2: 20000.0, 3: 0.0}
    )
    # the estimated costs keep loss first: 1 % costs 100 ms, more than 20 ms of RTT
    assert d.scores[1] == pytest.approx(100000.0) and d.scores[2] == pytest.approx(20000.0)
    assert d.scores[3] == 0.0 and d.scores[4] == 0.0
    assert "loss first" in d.reason and "offset_us" in d.reason


def test_cmtla_ca_jitter_raises_the_offset():
    pol = make_policy("cmtla-ca")
    offsets = []
    for loss in (0.01, 0.02, 0.04):
        paths = [
            PathState(1, True, loss_rate=loss, rtt_min_ms=10.0),
            PathState(2, True, loss_rate=0.01, rtt_min_ms=10.0),
        ]
        d = pol.decide(paths, 0.0)
        offsets.append(d.ca.paths[1].offset_us)
    # J = 0, then 0.5 rising (unreliable), then 0.5556 rising:
    #   20000 * J + 100000 while unreliable
    assert offsets == pytest.approx(
        [0.0, 20000 * 0.5 + 100000, 20000 * (0.04 - 0.07 / 3) / 0.03 + 100000]
    )
    assert "unreliable [1]" in d.reason
    assert d.ca.paths[2].offset_us == 0.0


def test_cmtla_ca_mathis_part_in_the_offset_and_no_path_alive():
    # a queued path (loaded): the Mathis part of p̂ beyond the measured loss goes in the offset
    p = PathState(1, True, loss_rate=0.01, goodput_mbps=1.2, srtt_ms=100.0, owd_ms=20.0)
    d = make_policy("cmtla-ca", {"mathis_weight": 0.5}).decide([p], 0.0)
    # p̂ = 0.0125: 100000 µs/% * 100 * 0.0025 = 25000
    assert d.ca.paths[1].offset_us == pytest.approx(25000.0)
    d = make_policy("cmtla-ca").decide([PathState(1, False), PathState(2, False)], 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0, 2: 1.0} and d.ca.paths == {}
    assert d.reason.startswith("no path alive")
