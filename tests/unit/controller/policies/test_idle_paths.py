"""Idle-path honesty (docs/control-loop.md, "Idle paths: demand is not ability"): a path's goodput
is demand, not ability, until it is loaded, and estimates without fresh samples age towards a
neutral prior. The two reported failures, as PathState sequences: three 10 Mbit/s paths and one of
2.5 Mbit/s under web-search flows, with `llhd` starving a 10 Mbit/s path, and ranking the 2.5 Mbit/s
path best once traffic paused."""

from __future__ import annotations

import pytest

from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.cmtla import estimate_loss
from mpsched.controller.telemetry.estimators import EstimatorSettings, PathEstimator

CAPS = {1: 10.0, 2: 10.0, 3: 10.0, 4: 2.5}
OFFERED_MBPS = 20.0
BASE_RTT_MS = 20.0


def states(goodput: dict[int, float], owd: dict[int, float], srtt: dict[int, float]):
    return [
        PathState(
            pid,
            True,
            goodput_mbps=goodput[pid],
            capacity_mbps=cap,
            srtt_ms=srtt[pid],
            rtt_min_ms=BASE_RTT_MS,
            owd_ms=owd[pid],
            loss_rate=0.0,
        )
        for pid, cap in CAPS.items()
    ]


def carried(shares: dict[int, float]) -> tuple[dict[int, float], dict[int, float]]:
    """What the paths deliver when the scheduler splits the offered load by `shares`: goodput
    up to the capacity, and a standing queue (30 ms) on an overloaded path."""
    total = sum(shares.values())
    demand = {pid: OFFERED_MBPS * shares[pid] / total for pid in CAPS}
    goodput = {pid: min(CAPS[pid], demand[pid]) for pid in CAPS}
    owd = {pid: 30.0 if demand[pid] > CAPS[pid] else 0.5 for pid in CAPS}
    return goodput, owd


# the reported state: one 10 Mbit/s path at 0.03 Mbit/s, the 2.5 Mbit/s one at 1.2
STARVED = {1: 8.0, 2: 4.0, 3: 0.03, 4: 1.2}


def test_llhd_does_not_keep_starving_a_lightly_used_path():
    pol = make_policy("llhd")
    goodput, owd = STARVED, {pid: 0.5 for pid in CAPS}
    for period in range(10):
        srtt = {pid: BASE_RTT_MS + 2 * owd[pid] for pid in CAPS}
        d = pol.decide(states(goodput, owd, srtt), float(period))
        goodput, owd = carried(d.weights)
    # the once-starved path carries as much as the other 10 Mbit/s paths, and more than
    # the 2.5 Mbit/s one (before the fix it stayed below 0.2 Mbit/s)
    assert goodput[3] == pytest.approx(goodput[1], rel=0.05)
    assert goodput[3] > 4.0 > goodput[4]
    share = {pid: w / sum(d.weights.values()) for pid, w in d.weights.items()}
    assert share[3] > 2 * share[4]


def test_llhd_ca_does_not_penalise_a_lightly_used_path():
    owd = {pid: 0.5 for pid in CAPS}
    srtt = {pid: BASE_RTT_MS for pid in CAPS}
    d = make_policy("llhd-ca").decide(states(STARVED, owd, srtt), 0.0)
    offsets = {pid: p.offset_us for pid, p in d.ca.paths.items()}
    # the offset counts what a path could deliver: the idle 10 Mbit/s path is as good as any
    assert offsets[3] == offsets[1] == offsets[2] == 0.0
    assert offsets[4] > 0
    assert d.weights == {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    # and the switch's live utilisation term prefers it for the next flowlets
    assert d.scores[3] < d.scores[1] and d.scores[3] < d.scores[2]


# traffic paused: probe-sized goodputs, the 2.5 Mbit/s path's a little larger (its queue
# drained last); srtt as last measured under load
PAUSED_GP = {1: 0.0004, 2: 0.00002, 3: 0.00001, 4: 0.002}
PAUSED_OWD = {pid: 0.0 for pid in CAPS}
PAUSED_SRTT = {1: 25.0, 2: 25.0, 3: 25.0, 4: 40.0}


@pytest.mark.parametrize("name", ["llhd", "cmtla", "qos", "fdmvqs"])
def test_paused_traffic_does_not_rank_the_slow_path_best(name):
    d = make_policy(name).decide(states(PAUSED_GP, PAUSED_OWD, PAUSED_SRTT), 0.0)
    if name == "llhd":
        # before the fix: score 1 for path 4 against 0.01-0.2
        assert all(d.scores[4] < d.scores[pid] for pid in (1, 2, 3))
        assert d.scores[1] == pytest.approx(d.scores[2]) == pytest.approx(d.scores[3])
    if name == "fdmvqs":
        # equal weights: the switch's argmin of T_p = PAD + queue x us_per_kbyte decides;
        # the slow path's delay and per-byte time are the largest, so it is never cheapest
        assert len(set(d.weights.values())) == 1, d.weights
        vq = d.vq
        assert all(vq[4].pad_us >= vq[pid].pad_us and vq[4].us_per_kbyte > vq[pid].us_per_kbyte
                   for pid in (1, 2, 3)), vq
    else:
        assert all(d.weights[4] <= d.weights[pid] for pid in (1, 2, 3))


@pytest.mark.parametrize("name", ["llhd-ca", "cmtla-ca", "qos-ca", "fdmvqs-ca"])
def test_paused_traffic_ca_variants_do_not_prefer_the_slow_path(name):
    d = make_policy(name).decide(states(PAUSED_GP, PAUSED_OWD, PAUSED_SRTT), 0.0)
    offsets = {pid: p.offset_us for pid, p in d.ca.paths.items()}
    assert all(offsets[4] >= offsets[pid] for pid in (1, 2, 3)), offsets
    assert offsets[1] == pytest.approx(offsets[2]) == pytest.approx(offsets[3])


# -- the policies use the availability rule (the rule itself: test_availability.py) --------


def test_mathis_not_used_on_an_unloaded_path():
    # GP 0.03 Mbit/s on a 10 Mbit/s path without queue: demand, not a loss of 100 %
    idle = PathState(1, True, loss_rate=0.01, goodput_mbps=0.03, srtt_ms=20.0, capacity_mbps=10.0)
    assert estimate_loss(idle, 1500, 1.0) == pytest.approx(0.01)
    busy = PathState(1, True, loss_rate=0.01, goodput_mbps=1.2, srtt_ms=100.0, owd_ms=20.0)
    assert estimate_loss(busy, 1500, 1.0) == pytest.approx(0.015)


def test_qos_rate_target_uses_availability():
    paths = [
        PathState(1, True, goodput_mbps=0.03, owd_ms=0.5, srtt_ms=20.0),
        PathState(2, True, goodput_mbps=5.0, owd_ms=20.0, srtt_ms=20.0),
    ]
    # path 1's 0.03 Mbit/s is demand: its availability is the prior (5), which meets 4
    d = make_policy("qos", {"min_rate_mbps": 4.0}).decide(paths, 0.0)
    assert d.weights[1] > 0 and "no path meets" not in d.reason


def test_fdmvqs_capacity_fill_is_availability_not_demand():
    paths = [
        PathState(1, True, goodput_mbps=0.03, owd_ms=0.5, srtt_ms=20.0, owd_series_ms=(1.0,) * 8),
        PathState(2, True, capacity_mbps=10.0, srtt_ms=20.0, owd_series_ms=(1.0,) * 8),
    ]
    d = make_policy("fdmvqs").decide(paths, 0.0)
    # drain = capacity in bytes per ms: the prior 10 Mbit/s, not 0.03
    assert d.vq[1].drain_bytes_per_ms == d.vq[2].drain_bytes_per_ms == 1250


# -- aging of sample-driven estimates -------------------------------------------------


def test_srtt_and_inflight_age_towards_a_neutral_prior():
    e = PathEstimator(1, EstimatorSettings(stale_after_s=1.0, age_tau_s=2.0))
    e.add_rtt(20.0, 0.0)  # base
    for t in (0.1, 0.2, 0.3):
        e.add_rtt(100.0, t)  # a queue builds
    e.add_rtt_report(0, 50_000, 0.3)
    srtt = e.srtt_ms
    assert srtt > 20.0
    # fresh: as measured
    assert e.srtt_aged_ms(1.0) == srtt and e.inflight_aged(1.0) == 50_000
    # 2 s later (1 s past stale_after): 20 + (srtt - 20) * exp(-1/2)
    assert e.srtt_aged_ms(2.3) == pytest.approx(20.0 + (srtt - 20.0) * 0.6065, rel=1e-3)
    assert e.rttvar_aged_ms(2.3) == pytest.approx(10.0 + (e.rttvar_ms - 10.0) * 0.6065, rel=1e-3)
    assert e.inflight_aged(2.3) == 0
    # long idle: at the base RTT; a new sample makes it fresh again
    assert e.srtt_aged_ms(60.0) == pytest.approx(20.0)
    assert e.rttvar_aged_ms(60.0) == pytest.approx(10.0)
    e.add_rtt(30.0, 61.0)
    assert e.srtt_aged_ms(61.0) == e.srtt_ms
    # never measured: None
    assert PathEstimator(2).srtt_aged_ms(5.0) is None
    assert PathEstimator(2).inflight_aged(5.0) is None
