"""src/mpsched/controller/policies/fdmvqs_math.py: FD-MVQS's formulas against hand-computed values
(the
sigmoid factors, TFE, the MLE loss, the phase space and CTADP prediction, MVQS)."""

from __future__ import annotations

import math

import pytest

from mpsched.controller.model.decision import VqPathParams
from mpsched.controller.policies.fdmvqs_math import (
    ctadp_predict,
    ewma,
    mle_loss,
    mvqs_choose,
    phase_space,
    rtt_trend,
    sigmoid_factor,
    tfe_x,
    time_factor_us,
    vq_path_params,
    window_factor,
    window_state,
)


def test_sigmoid():
    assert sigmoid_factor(1.0, a=1.0, b=5.0) == pytest.approx(0.5)
    # b (x - a) = 5 * 0.2 = 1 -> 1 / (1 + e^-1) = 0.7310586
    assert sigmoid_factor(1.2, a=1.0, b=5.0) == pytest.approx(0.7310586)
    assert sigmoid_factor(0.8, a=1.0, b=5.0) == pytest.approx(0.2689414)
    assert sigmoid_factor(-1e6, a=0.0, b=1.0) == 0.0  # no overflow


def test_tfe_parts():
    assert rtt_trend(12.0, 10.0) == pytest.approx(1.2)
    assert rtt_trend(12.0, None) == 1.0
    # 6000 / mean(10000, 14000) = 6000 / 12000 = 0.5
    assert window_state(6000, [10000, 14000]) == pytest.approx(0.5)
    assert window_state(6000, []) == 1.0
    # x = 1.2 * 0.5 + 10 * 0.02 = 0.8
    assert tfe_x(1.2, 0.5, 0.02, 10.0) == pytest.approx(0.8)
    # w = 1 - 0.5 * (1 - 0.5) = 0.75
    assert window_factor(0.5, 0.5) == pytest.approx(0.75)


def test_mle_loss():
    # K = 3 intervals, sum 397 -> 3 / (3 + 397) = 0.0075
    assert mle_loss([99, 199, 99]) == pytest.approx(0.0075)
    assert mle_loss([0]) == 1.0
    assert mle_loss([]) is None


def test_phase_space():
    assert phase_space([1, 2, 3, 4, 5], m=3, tau=1) == [(1, 2, 3), (2, 3, 4), (3, 4, 5)]
    assert phase_space([1, 2, 3, 4, 5], m=2, tau=2) == [(1, 3), (2, 4), (3, 5)]


def test_ctadp_short_series_falls_back_to_ewma():
    # 10, 20 with alpha 1/8: 10 + (20 - 10) / 8 = 11.25
    assert ewma([10.0, 20.0], 0.125) == pytest.approx(11.25)
    # m = 3, tau = 1, k = 4 needs (3-1)*1 + 4 + 1 = 7 samples
    assert ctadp_predict([10.0, 20.0]) == pytest.approx(11.25)
    six = [10.0, 20.0, 10.0, 20.0, 10.0, 20.0]
    assert ctadp_predict(six) == pytest.approx(ewma(six, 0.125))
    with pytest.raises(ValueError):
        ctadp_predict([0.0, 1.0])


def test_ctadp_constant_and_periodic():
    assert ctadp_predict([5.0] * 12) == pytest.approx(5.0)
    # sine of period 24, amplitude 3 around 10: the next value within 0.4 (EWMA is far off)
    series = [10 + 3 * math.sin(2 * math.pi * t / 24) for t in range(80)]
    for n in (50, 60, 66, 72, 79):
        pred = ctadp_predict(series[:n])
        assert abs(pred - series[n]) < 0.4
        assert abs(pred - series[n]) < abs(ewma(series[:n], 0.125) - series[n])


def test_mvqs_choose():
    vqp = {
        1: VqPathParams(pad_us=0, bdp_bytes=10000, us_per_kbyte=1024, drain_bytes_per_ms=1),
        2: VqPathParams(pad_us=5000, bdp_bytes=20000, us_per_kbyte=512, drain_bytes_per_ms=1),
    }
    assert mvqs_choose({1: 0, 2: 0}, vqp) == 1  # T = 0 vs 5000
    # T_1 = 0 + (16000 - 10000) * 1024 / 1024 = 6000 > T_2 = 5000
    assert time_factor_us(16000, vqp[1]) == pytest.approx(6000)
    assert mvqs_choose({1: 16000, 2: 0}, vqp) == 2
    # T_1 = 4000 < 5000; a missing VQ is empty
    assert mvqs_choose({1: 14000}, vqp) == 1
    # T_2 = 5000 + (30000 - 20000) * 512 / 1024 = 10000 vs T_1 = 0 + 5000 * 1 = 5000
    assert mvqs_choose({1: 15000, 2: 30000}, vqp) == 1
    tie = {2: vqp[1], 1: vqp[1]}
    assert mvqs_choose({}, tie) == 1


def test_vq_path_params():
    # bdp 10 Mbit/s * 20 ms = 25000 B; us_per_kbyte = 20000 * 1024 / (0.75 * 25000) = 1092.27
    p = vq_path_params(pad_ms=2.5, srtt_ms=20.0, bdp_bytes=25000, w=0.75, capacity_mbps=10.0)
    assert p == VqPathParams(
        pad_us=2500, bdp_bytes=25000, us_per_kbyte=1092, drain_bytes_per_ms=1250
    )
