"""telemetry/intake.py: reports and counters go to the right path and direction, and
recorded into the histories (the directions: test_intake_base.py; the probe decisions:
test_probe_decisions.py; the path states and views: test_intake_views.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.intake_base import direction
from mpsched.controller.telemetry.intake_views import MIN_RTO_MS
from mpsched.controller.telemetry.stats import Sample
from tests.unit.controller.fakes import two_edges

NOW = 1_000.0


def intake(probe_interval_s: float | None = 0.05) -> TelemetryIntake:
    return TelemetryIntake(
        two_edges(), EstimatorSettings(), TelemetryConfig(probe_interval_s=probe_interval_s)
    )


def path_report(switch: str, path_id: int, seq: int, at: float) -> PathReport:
    rx = int(at * 1e6)
    return PathReport(switch, path_id, seq, rx - 10_000, rx, seq, seq * 1500, 0, 0, 0, at)


def test_a_senders_probes_are_counted_at_its_own_stretched_interval():
    """Under a probe cap a fabric's edge probes each (destination, path) less often
    (`for_targets`); its traffic on a path is busy when it tagged more packets than those
    probes account for between two reports, so the estimator counts them at that interval:
    judged by the unstretched one, a path carrying 50 packets a report was never busy and
    was always probed (docs/results/scale.md)."""
    from tests.unit.controller.fakes import fabric

    net = fabric()
    capped = TelemetryConfig(probe_max_pps=10.0, report_max_pps=None)
    i = TelemetryIntake(net, EstimatorSettings(), capped)
    own = i.switch_telemetry["leaf1"].probe_interval_s
    assert own is not None and own > capped.probe_interval_s  # stretched by the cap
    leaf2 = net.edge_id(net.switch("leaf2"))
    rx = int(NOW * 1e6)
    for k, seq in enumerate((1, 51)):  # 50 packets tagged in one stretched interval
        at = NOW + k * own
        i.ingest_report(PathReport("leaf2", 1, seq, rx - 10_000 + int(k * own * 1e6),
                                   rx + int(k * own * 1e6), seq, seq * 1500, 0, 0, 0, at, 1))
    est = i.estimators[(1, direction("leaf1", "leaf2"))]
    assert est.settings.probe_interval_s == own
    assert est.busy_at == NOW + own
    i.ingest_rtt_report(RttReport("leaf1", 1, leaf2, 4_000, 0, 0, NOW + own))
    assert not i.probe_wanted("leaf1", leaf2, 1, NOW + own + 0.001)


def test_a_path_report_goes_to_the_direction_towards_its_egress_edge():
    i = intake()
    i.ingest_report(path_report("s2", 1, 1, NOW))
    i.ingest_report(path_report("s2", 7, 1, NOW))  # no path 7: ignored
    assert set(i.estimators) == {(1, "s1->s2")}


def test_an_rtt_report_goes_to_the_direction_away_from_its_ingress_edge():
    i = intake()
    i.ingest_rtt_report(RttReport("s2", 2, 1, 30_000, 5, 1_500, NOW))
    i.ingest_rtt_report(RttReport("s2", 9, 1, 30_000, 5, 1_500, NOW))  # no path 9: ignored
    assert set(i.estimators) == {(2, "s2->s1")}
    state = i.path_state(2, "s2->s1", NOW)
    assert state.srtt_ms == pytest.approx(30.0)
    assert state.rto_ms == pytest.approx(max(MIN_RTO_MS, 30.0 + 4 * 15.0))


def test_samples_feed_the_path_counters_per_switch():
    i = intake()
    i.on_sample("s1", {1: Sample(NOW, 10, 1000, 0, 0)})
    i.on_sample("s1", {1: Sample(NOW + 1, 20, 3000, 0, 0)})
    assert i.stats[1].totals() == {"packets": 20, "bytes": 3000, "rate_bps": 16000.0}


def test_a_fabrics_rtt_report_towards_no_peer_edge_is_ignored_after_any_question():
    """The directions a fabric's reports name are kept per (switch, edge); only a peer edge's:
    a report towards the switch's own edge is ignored even after its direction was asked."""
    from mpsched.controller.fabric.routes import Routes
    from tests.unit.controller.fakes import fabric

    net = fabric()
    i = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig(), Routes(net))
    assert i.towards("leaf1", 1) == direction("leaf1", "leaf1")  # asked, not a peer
    i.ingest_rtt_report(RttReport("leaf1", 1, 1, 30_000, 0, 1_500, NOW))  # its own edge
    assert not i.estimators
    i.ingest_rtt_report(RttReport("leaf1", 1, 3, 30_000, 0, 1_500, NOW))
    i.ingest_rtt_report(RttReport("leaf1", 1, 3, 40_000, 0, 1_500, NOW + 1))
    assert list(i.estimators) == [(1, direction("leaf1", "leaf3"))]


def fabric_intake(telemetry: TelemetryConfig | None = None) -> TelemetryIntake:
    """A fabric's intake with probe regimes (every pair idle at start)."""
    from mpsched.controller.fabric.routes import Routes
    from mpsched.controller.telemetry.regimes import ProbeRegimes
    from tests.unit.controller.fakes import fabric

    net = fabric()
    return TelemetryIntake(net, EstimatorSettings(), telemetry or TelemetryConfig(),
                           Routes(net, regimes=ProbeRegimes(enabled=True)))


def fabric_report(src_edge: int, seq: int, at: float) -> PathReport:
    """leaf2's report of path 1 from edge `src_edge`, `seq` tagged so far."""
    rx = int(at * 1e6)
    return PathReport("leaf2", 1, seq, rx - 10_000, rx, seq, seq * 1500, 0, 0, 0, at, src_edge)


def test_busy_reports_mark_their_direction_for_the_pairs_activity():
    i = fabric_intake()
    i.ingest_report(fabric_report(1, 1, NOW))
    i.ingest_report(fabric_report(1, 2, NOW + 0.2))  # one probe in an idle interval
    assert i.busy_at == {}
    i.ingest_report(fabric_report(1, 12, NOW + 0.21))  # 10 packets in 10 ms
    assert i.busy_at == {(1, 2): NOW + 0.21}
    two = intake()  # no regimes with two edges: nothing kept
    for k, seq in enumerate((1, 50)):
        two.ingest_report(path_report("s2", 1, seq, NOW + k * 0.01))
    assert two.estimators[(1, "s1->s2")].busy_at is not None and two.busy_at == {}


