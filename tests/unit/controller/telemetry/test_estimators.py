"""src/mpsched/controller/telemetry/estimators.py: per-path estimates against hand-computed values
(the
windows they read: test_windows.py; the settings: test_config.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.model.reports import PathReport
from mpsched.controller.telemetry.estimators import AGING_TAUS, EstimatorSettings, PathEstimator
from mpsched.controller.telemetry.windows import _OWD_US
from tests.netdesc import edge_switch
from tests.unit.controller.telemetry.helpers import report


def test_goodput_loss_and_reordering_from_counters():
    e = PathEstimator(1)
    e.add_report(report(1.0, 1000, 1_000_000))
    e.add_report(report(2.0, 1900, 2_250_000, lost=100, reordered=3, flow_ooo=2**32 + 5))
    # 1.25 MB in 1 s = 10 Mbit/s; 900 received, 100 lost -> 10 %
    assert e.goodput_mbps() == pytest.approx(10.0)
    assert e.loss_rate() == pytest.approx(0.1)
    assert e.reordered() == 3
    assert e.flow_ooo() == 5 and e.flow_ooo_total() == 5  # wrapped counter


def test_late_packets_lower_the_loss():
    e = PathEstimator(1)
    e.add_report(report(1.0, 100, 100_000, lost=10))
    e.add_report(report(2.0, 200, 200_000, lost=8))  # two "lost" packets came late
    assert e.loss_rate() == 0.0


def test_capacity_is_the_best_one_second_rate():
    e = PathEstimator(1)
    for k, mbytes in enumerate([0, 0.5, 1.75, 2.0]):  # 4, 10, 2 Mbit/s over 1 s steps
        e.add_report(report(1.0 + k, 100 * k, int(mbytes * 1e6)))
    assert e.capacity_mbps() == pytest.approx(10.0)
    assert e.goodput_mbps() == pytest.approx(16 / 3)


def test_owd_is_relative_to_the_window_minimum():
    e = PathEstimator(1)
    e.add_report(report(1.0, 1, 1, owd_us=30_000))
    e.add_report(report(1.5, 2, 2, owd_us=20_000))
    e.add_report(report(2.0, 3, 3, owd_us=27_500))
    assert e.owd_ms() == pytest.approx(7.5)


def test_liveness_and_freshness():
    e = PathEstimator(1, EstimatorSettings(dead_after_s=0.5))
    assert e.alive(0.0) is None
    e.add_report(report(1.0, 1, 1, at=10.0))
    assert e.alive(10.2) is True and e.freshness_s(10.2) == pytest.approx(0.2)
    assert e.alive(10.6) is False


def test_snapshot_and_bounded_history():
    e = PathEstimator(1, EstimatorSettings(history=3))
    e.add_report(report(1.0, 0, 0))
    e.add_report(report(2.0, 10, 125_000))
    for k in range(5):
        snap = e.record(2.0 + k * 0.1)
    assert len(e.history) == 3
    assert snap["goodput_mbps"] == pytest.approx(1.0)
    assert snap["loss"] == 0.0 and snap["srtt_ms"] is None


def two_edge_controller(controller_cls, tmp_path):
    """A Controller (not started) for two edge switches with paths 1 and 2."""
    from mpsched.netcfg import NetCfg
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline
    from tests.fake_p4rt import synthetic_p4info

    paths = [{"id": 1, "port": 2}, {"id": 2, "port": 3}]
    net = NetCfg.from_dict({"switches": [edge_switch(1, paths=paths), edge_switch(2, paths=paths)]})
    return controller_cls(net, Pipeline(P4Info(synthetic_p4info())), str(tmp_path / "x.json"))


def test_controller_keeps_estimates_per_path_and_direction(tmp_path):
    import time

    from mpsched.controller.app.core import Controller, NotFoundError
    ctl = two_edge_controller(Controller, tmp_path)
    now = time.time()
    ctl.on_report(report(1.0, 0, 0, at=now))
    ctl.on_report(report(2.0, 100, 250_000, lost=5, at=now))
    ctl.intake.ingest_rtt("s1", 1, 40.0, now)
    ctl.on_report(PathReport("s2", 7, 0, 0, 0, 0, 0, 0, 0, 0, now))  # unknown path: ignored
    view = ctl.telemetry(1).model_dump()
    current = view["directions"]["s1->s2"]["current"]
    assert current["goodput_mbps"] == pytest.approx(2.0)
    assert current["loss"] == pytest.approx(5 / 105, abs=1e-4)
    assert current["srtt_ms"] == 40.0 and current["alive"] is True
    assert ctl.path(1).telemetry["s1->s2"]["goodput_mbps"] == pytest.approx(2.0)
    assert ctl.telemetry(2).directions == {}
    with pytest.raises(NotFoundError):
        ctl.telemetry(9)
    ctl._record()  # the recorder's period: every estimator's snapshot (two paths: no freeze)
    assert ctl._freezer.last == 0
    since = ctl.telemetry_since(now - 0.01)  # a snapshot's time is rounded to the ms
    assert len(since.paths["1"]["s1->s2"]) == 1
    assert ctl.telemetry_since(now + 2).paths["1"]["s1->s2"] == []
    assert set(ctl.telemetry_since(0, "s1->s2").paths["1"]) == {"s1->s2"}
    assert ctl.telemetry_since(0, "s9->s1").paths == {}


def test_controller_takes_rtt_reports_per_ingress_direction(tmp_path):
    import time

    from mpsched.controller.app.core import Controller
    from mpsched.controller.model.reports import RttReport
    ctl = two_edge_controller(Controller, tmp_path)
    now = time.time()
    ctl.on_rtt(RttReport("s2", 2, 1, 30_000, 5, 1_500, now))
    ctl.on_rtt(RttReport("s2", 2, 1, 50_000, 8, 3_000, now + 0.1))
    ctl.on_rtt(RttReport("s2", 9, 1, 50_000, 8, 3_000, now))  # unknown path: ignored
    current = ctl.telemetry(2).directions["s2->s1"].current
    assert current["srtt_ms"] == pytest.approx(30 + (50 - 30) / 8)
    assert (current["rtt_min_ms"], current["rtt_max_ms"]) == (30.0, 50.0)
    assert (current["retrans"], current["inflight_bytes"]) == (3, 3_000)
    assert "s1->s2" not in ctl.telemetry(2).directions


def test_forwarding_entries_carry_the_telemetry_settings():
    from mpsched.controller.southbound.forwarding import forwarding_entries
    from mpsched.controller.telemetry.estimators import TelemetryConfig
    from mpsched.netcfg import NetCfg
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import (
        ACTION_SET_DEAD_AFTER,
        ACTION_SET_REPORT_INTERVAL,
        ACTION_SET_RTT_INTERVAL,
        Pipeline,
    )
    from tests.fake_p4rt import synthetic_p4info

    net = NetCfg.from_dict({"switches": [edge_switch(1, paths=[{"id": 1, "port": 2}])]})
    cfg = TelemetryConfig(report_interval_us=3000, rtt_interval_us=4000, dead_after_us=70_000)
    entries = forwarding_entries(Pipeline(P4Info(synthetic_p4info())), net, net.switches[0], cfg)
    params = {e.action: e.params for e in entries}
    assert params[ACTION_SET_REPORT_INTERVAL] == {"interval_us": 3000}
    assert params[ACTION_SET_RTT_INTERVAL] == {"interval_us": 4000}
    assert params[ACTION_SET_DEAD_AFTER] == {"dead_after_us": 70_000}
    with pytest.raises(ValueError, match="dead_after_us"):
        TelemetryConfig(dead_after_us=0)
    with pytest.raises(ValueError, match="report_batch_us"):
        TelemetryConfig(report_batch_us=-1)


def test_window_minimum_and_capacity_match_a_scan_of_the_window():
    """The one-way delay above the window's minimum and the capacity come from structures
    kept per report (a monotonic queue, a cache); they equal a scan of the window's points,
    also as points leave the window and after the egress switch restarts."""
    import random

    from mpsched.controller.model.reports import PathReport
    from mpsched.controller.telemetry.estimators import EstimatorSettings, PathEstimator

    rng = random.Random(7)
    est = PathEstimator(1, EstimatorSettings(window_s=0.5))
    rx, packets, nbytes = 1_000_000, 0, 0
    for i in range(600):
        if i == 400:
            rx = 10_000  # the egress switch restarted: its clock went back
        rx += rng.randint(1_000, 20_000)
        packets += 3
        nbytes += rng.randint(1, 5) * 1500
        owd = rng.randint(5_000, 60_000)
        est.add_report(PathReport("s2", 1, i, rx - owd, rx, packets, nbytes, 0, 0, 0, 0.0))
        points = list(est._points)
        base = min(p[_OWD_US] for p in points)
        assert est.owd_ms() == (points[-1][_OWD_US] - base) / 1000
        assert est.owd_series_ms(8) == tuple((p[_OWD_US] - base) / 1000 for p in points[-8:])
        if i % 50 == 0:
            assert est.capacity_mbps() == est._capacity_scan()
    assert est.capacity_mbps() == est.capacity_mbps() == est._capacity_scan()


def test_changes_at_names_when_the_estimates_move_without_reports():
    cfg = EstimatorSettings(dead_after_s=0.5, stale_after_s=1.0, age_tau_s=2.0)
    e = PathEstimator(1, cfg)
    assert e.changes_at(0.0, 0.2) == float("inf")  # nothing known: nothing to age
    e.add_report(report(1.0, 1, 1, at=10.0))
    assert e.changes_at(10.1, 0.2) == pytest.approx(10.5)  # the liveness verdict flips
    assert e.alive(10.49) is True and e.alive(10.5) is False
    assert e.changes_at(10.5, 0.2) == float("inf")  # dead, and no RTT to age
    e.add_rtt(10.0, 10.55)
    e.add_rtt(40.0, 10.6)
    e.add_rtt_report(0, 1000, 10.6)
    assert e.changes_at(10.6, 0.2) == pytest.approx(11.6)  # srtt and inflight go stale
    assert e.inflight_aged(11.59) == 1000 and e.inflight_aged(11.61) == 0
    # while srtt ages (AGING_TAUS time constants) it moves on: read every age step
    assert e.changes_at(11.7, 0.2) == pytest.approx(11.9)
    assert e.srtt_aged_ms(11.7) != e.srtt_aged_ms(11.9)
    assert e.changes_at(11.6 + AGING_TAUS * 2.0, 0.2) == float("inf")
