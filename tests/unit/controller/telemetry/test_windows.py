"""src/mpsched/controller/telemetry/windows.py: RFC 6298 smoothing, the windows forgetting old
samples,
wrapped counters, a restarted egress switch, retransmissions and bytes in flight, a path seen
busy from the far edge's reports."""

from __future__ import annotations

import random

import pytest

from mpsched.controller.model.reports import PathReport
from mpsched.controller.telemetry.estimators import PathEstimator
from mpsched.controller.telemetry.windows import EstimatorSettings, wrap_delta
from tests.unit.controller.telemetry.helpers import report


def test_rfc6298_smoothing():
    e = PathEstimator(1)
    e.add_rtt(100.0, 0.0)
    assert (e.srtt_ms, e.rttvar_ms) == (100.0, 50.0)
    e.add_rtt(200.0, 0.1)
    # rttvar = 3/4*50 + 1/4*|100-200| = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5
    assert e.rttvar_ms == pytest.approx(62.5)
    assert e.srtt_ms == pytest.approx(112.5)
    assert e.rtt_min_max_ms() == (100.0, 200.0)
    e.add_rtt(-1.0, 0.2)  # ignored
    assert e.srtt_ms == pytest.approx(112.5)


def test_rtt_window_forgets_old_samples():
    e = PathEstimator(1, EstimatorSettings(window_s=1.0))
    e.add_rtt(50.0, 0.0)
    e.add_rtt(10.0, 2.0)
    assert e.rtt_min_max_ms() == (10.0, 10.0)


def test_counters_wrap():
    assert wrap_delta(5, 2**32 - 5) == 10
    e = PathEstimator(1)
    e.add_report(report(1.0, 2**32 - 10, 2**32 - 500))
    e.add_report(report(2.0, 2**32 + 90, 2**32 + 124_500))
    assert e.goodput_mbps() == pytest.approx(1.0)


def test_switch_restart_starts_over():
    e = PathEstimator(1)
    e.add_report(report(100.0, 5000, 5_000_000))
    e.add_report(report(101.0, 6000, 6_000_000))
    e.add_report(report(0.5, 10, 10_000))  # egress clock went back: the switch restarted
    assert e.goodput_mbps() is None
    e.add_report(report(1.5, 1010, 1_010_000))
    assert e.goodput_mbps() == pytest.approx(8.0)


def test_retransmissions_in_window_and_inflight():
    e = PathEstimator(1, EstimatorSettings(window_s=5.0))
    assert e.retrans() is None and e.snapshot(0.0)["inflight_bytes"] is None
    e.add_rtt_report(2**32 - 3, 10_000, 1.0)
    assert e.retrans() is None  # one report: no difference yet
    e.add_rtt_report(2, 4_000, 2.0)  # the counter wrapped: 5 more
    e.add_rtt_report(4, 6_000, 3.0)
    snap = e.snapshot(3.0)
    assert (snap["retrans"], snap["inflight_bytes"]) == (7, 6_000)
    e.add_rtt_report(4, 0, 7.5)  # the reports at 1 s and 2 s leave the window
    assert e.retrans() == 0 and e.inflight == 0


def test_estimator_marks_the_path_busy_from_the_far_edges_reports():
    from mpsched.controller.telemetry.estimators import (
        EstimatorSettings,
        PathEstimator,
    )

    est = PathEstimator(1, EstimatorSettings(probe_interval_s=0.010))

    def report(seq, rx_us, at):
        est.add_report(PathReport("s2", 1, seq, rx_us - 5000, rx_us, seq, seq * 100, 0, 0, 0, at))

    report(10, 1_000_000, 1.0)
    assert est.busy_at is None  # one report says nothing
    report(12, 1_010_000, 2.0)  # 2 packets in 10 ms: the probes
    assert est.busy_at is None
    report(20, 1_020_000, 3.0)  # 8 packets in 10 ms: the sender's traffic
    assert est.busy_at == 3.0
    report(22, 1_030_000, 4.0)
    assert est.busy_at == 3.0
    est.add_rtt(12.0, 4.0)
    est.add_rtt(9.0, 4.1)
    est.add_rtt(11.0, 4.2)
    assert est.rtt_min_ms() == 9.0 and est.rtt_min_max_ms() == (9.0, 12.0)


def test_the_windows_least_and_greatest_rtt_are_those_of_a_scan_of_it():
    """The monotonic deques give the extremes of the RTT samples within window_s of the
    latest, as scanning every sample would, while samples come and expire in any order."""
    rng = random.Random(7)
    est = PathEstimator(1, EstimatorSettings(window_s=0.5))
    samples: list[tuple[float, float]] = []
    at = 0.0
    for _ in range(2000):
        at += rng.choice((0.001, 0.01, 0.05, 0.3))
        rtt = rng.choice((rng.uniform(1, 100), 50.0))  # ties too
        est.add_rtt(rtt, at)
        samples.append((at, rtt))
        window = [r for t, r in samples if t >= at - 0.5]
        assert est.rtt_min_max_ms() == (min(window), max(window))
