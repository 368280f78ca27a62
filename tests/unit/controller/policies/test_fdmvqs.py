"""src/mpsched/controller/policies/fdmvqs.py, the FD-MVQS policy and fdmvqs-ca, hand-computed (its
formulas:
test_fdmvqs_math.py)."""

from __future__ import annotations

import math

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.fdmvqs import (
    FdMvqs,
)


def test_policy_vq_decision_from_owd():
    paths = [
        PathState(1, True, srtt_ms=20.0, capacity_mbps=10.0, owd_series_ms=(5.0,) * 10),
        PathState(2, True, srtt_ms=20.0, capacity_mbps=10.0, owd_series_ms=(8.0,) * 10),
        PathState(3, False),
    ]
    d = FdMvqs().decide(paths, 0.0)
    assert d.mode == Mode.VQ
    assert d.weights == {1: 1.0, 2: 1.0, 3: 0.0}
    assert set(d.vq) == {1, 2}
    # constant series predict themselves: PAD 5 and 8 ms -> relative 0 and 3 ms
    assert (d.vq[1].pad_us, d.vq[2].pad_us) == (0, 3000)
    # F = 0.5 (x = 1 * 1 + 0 = a): w = 0.75, us_per_kbyte = 20000 * 1024 / (0.75 * 25000)
    assert d.vq[1].us_per_kbyte == 1092
    assert d.scores[1] == pytest.approx(0.5)


def test_policy_negative_owd_and_srtt_basis():
    # clock offsets make OWDs negative: a common shift keeps the 3 ms difference
    paths = [
        PathState(1, True, srtt_ms=20.0, owd_series_ms=(-105.0,) * 10),
        PathState(2, True, srtt_ms=20.0, owd_series_ms=(-102.0,) * 10),
    ]
    d = FdMvqs().decide(paths, 0.0)
    assert (d.vq[1].pad_us, d.vq[2].pad_us) == (0, 3000)
    # a missing series: srtt / 2 for all: 10 and 15 ms -> 0 and 5 ms
    paths = [
        PathState(1, True, srtt_ms=20.0, owd_series_ms=(1.0,)),
        PathState(2, True, srtt_ms=30.0),
    ]
    d = FdMvqs().decide(paths, 0.0)
    assert (d.vq[1].pad_us, d.vq[2].pad_us) == (0, 5000)
    assert "srtt/2" in d.reason


def test_policy_window_peaks_and_rtt_trend():
    pol = FdMvqs()
    pol.decide([PathState(1, True, srtt_ms=10.0, inflight_bytes=10000)], 0.0)
    # in flight fell 50 % (> 30 %): peak 10000 -> W = 5000 / 10000 = 0.5; R = 10 / 10 = 1
    # x = 0.5 -> F = 1 / (1 + e^(5 * 0.5)) = 0.0758582
    d = pol.decide([PathState(1, True, srtt_ms=10.0, inflight_bytes=5000)], 1.0)
    assert d.scores[1] == pytest.approx(0.0758582)
    # srtt 10 -> 12: R = 1.2, W = 6000 / 10000 = 0.6 -> x = 0.72, F = 1/(1+e^(5*0.28)) = 0.1978
    d = pol.decide([PathState(1, True, srtt_ms=12.0, inflight_bytes=6000)], 2.0)
    assert d.scores[1] == pytest.approx(1 / (1 + math.exp(1.4)))


# -- fdmvqs-ca: the time factor as the cost of the congestion-aware data plane -----------


def test_fdmvqs_ca_offsets_are_pad_and_util_is_the_queue_term():
    # PAD 0 and 3 ms (constant OWD series); F = 0.5 -> w = 0.75; srtt 20 and 40 -> ref 30 ms
    #   reference capacity = cap * w * srtt_ref / srtt_p = 10 * 0.75 * 30/20, 10 * 0.75 * 30/40
    #   so the utilisation term is srtt_p * util / w_p with c_util = 30000 µs
    paths = [
        PathState(1, True, srtt_ms=20.0, capacity_mbps=10.0, owd_series_ms=(5.0,) * 10),
        PathState(2, True, srtt_ms=40.0, capacity_mbps=10.0, owd_series_ms=(8.0,) * 10),
        PathState(3, False),
    ]
    d = make_policy("fdmvqs-ca").decide(paths, 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0, 2: 1.0, 3: 0.0}
    c = d.ca
    assert set(c.paths) == {1, 2}
    assert (c.paths[1].offset_us, c.paths[2].offset_us) == pytest.approx((0.0, 3000.0))
    assert c.util_coef_us == pytest.approx(30000.0)
    assert c.paths[1].capacity_mbps == pytest.approx(11.25)
    assert c.paths[2].capacity_mbps == pytest.approx(5.625)
    assert c.qdelay_coef == 1.0
    assert "PAD" in d.reason and "offset_us 1=0 2=3000" in d.reason


def test_fdmvqs_ca_failure_estimate_raises_the_utilisation_cost():
    def ref_capacity(loss):
        paths = [
            PathState(1, True, srtt_ms=20.0, capacity_mbps=10.0, loss_rate=0.0),
            PathState(2, True, srtt_ms=20.0, capacity_mbps=10.0, loss_rate=loss),
        ]
        return make_policy("fdmvqs-ca").decide(paths, 0.0).ca.paths[2].capacity_mbps

    # loss -> larger F -> smaller w -> a smaller reference capacity: each unit of delivered
    # rate costs more
    assert ref_capacity(0.0) > ref_capacity(0.02) > ref_capacity(0.1)


def test_fdmvqs_ca_missing_estimates_and_no_path_alive():
    # nothing measured: PAD from the default srtt (equal), capacity default: offsets 0
    d = make_policy("fdmvqs-ca").decide([PathState(1, True), PathState(2, True)], 0.0)
    assert {p.offset_us for p in d.ca.paths.values()} == {0.0}
    assert d.ca.paths[1].capacity_mbps == d.ca.paths[2].capacity_mbps
    d = make_policy("fdmvqs-ca").decide([PathState(1, False)], 0.0)
    assert d.mode == Mode.CA and d.weights == {1: 1.0} and d.reason.startswith("no path alive")
