"""telemetry/intake_base.py: directions name the ingress, then the egress; each estimator
judges busy paths by its sender's probe interval, fast or slow as its pair is probed."""

from __future__ import annotations

from mpsched.controller.telemetry.intake_base import direction
from tests.unit.controller.telemetry.test_intake import (
    NOW,
    fabric_intake,
    fabric_report,
    intake,
)


def test_directions_name_ingress_then_egress():
    i = intake()
    assert direction("s1", "s2") == "s1->s2"
    assert (i.other("s1"), i.outgoing("s2")) == ("s2", "s2->s1")


def test_estimators_take_the_probe_interval_of_the_switches():
    assert intake(0.05).settings.probe_interval_s == 0.05
    assert intake(None).settings.probe_interval_s is None


def test_an_idle_pairs_light_traffic_is_busy_by_the_idle_interval():
    """Between two reports 200 ms apart 6 packets: busy for an idle pair (one probe in 200
    ms), not for an active one (up to 21 probes at 10 ms)."""
    from mpsched.controller.telemetry.regimes import Transition

    i = fabric_intake()
    i.ingest_report(fabric_report(1, 1, NOW))
    i.ingest_report(fabric_report(1, 7, NOW + 0.2))
    est = i.estimators[(1, direction("leaf1", "leaf2"))]
    assert est.settings.probe_interval_s == 0.2 and est.busy_at == NOW + 0.2
    # the pair turns active: both directions' estimators judge by 10 ms from now on
    back = i.estimator(1, direction("leaf2", "leaf1"))
    i.regimes.update(Transition(probe_fast=frozenset({(1, 2)})), (), NOW)
    i.set_probing([(1, 2)], fast=True)
    assert est.settings.probe_interval_s == back.settings.probe_interval_s == 0.01
    i.ingest_report(fabric_report(1, 13, NOW + 0.4))
    assert est.busy_at == NOW + 0.2
    # a new estimator of an active pair starts with the fast interval
    assert i.estimator(2, direction("leaf2", "leaf1")).settings.probe_interval_s == 0.01
    assert i.estimator(2, direction("leaf1", "leaf3")).settings.probe_interval_s == 0.2
