"""fabric_ops.py: the fabric's links and the scheduler's pairs as views; with two edges the
pairs are the switches (their placements' keys) and there are no links."""

from __future__ import annotations

import pytest

from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.model.errors import NotFoundError
from mpsched.controller.model.reports import PathReport
from mpsched.p4rt.client import CounterValue
from tests.unit.controller.fakes import fabric, two_edges
from tests.unit.controller.helpers import pipeline


def controller(net) -> Controller:
    """Not started: no agent connects, nothing is written."""
    return Controller(net, pipeline(), "x.json", ControllerSettings(control=False))


def test_two_edges_have_a_pair_per_switch_and_no_links():
    ctl = controller(two_edges())
    assert ctl.links() == []
    with pytest.raises(NotFoundError, match="no link s1-s2"):
        ctl.fabric.link("s1-s2")
    pairs = ctl.pairs()
    assert [(p.id, p.ingress, p.egress, p.dst_edge) for p in pairs] == [
        ("s1", "s1", "s2", 2), ("s2", "s2", "s1", 1)]
    assert [(p.id, p.rate_mbps, p.switches) for p in pairs[0].paths] == [
        (1, 10, ["s1", "s2"]), (2, None, ["s1", "s2"])]
    assert pairs[0].placement == {"0": None}  # no step yet


def test_a_fabric_pair_shows_its_paths_placements_and_estimates():
    ctl = controller(fabric())
    assert [link.name for link in ctl.links()][:2] == ["leaf1-spine1", "leaf1-spine2"]
    assert {link.admin for link in ctl.links()} == {"up"}
    assert len(ctl.pairs()) == 6
    ctl.sched_entries("leaf1")  # places leaf1's pairs
    ctl.on_report(PathReport("leaf3", 2, 1, 0, 10_000, 1, 1500, 0, 0, 0, 1.0, src_edge=1))
    pair = ctl.pair("leaf1->leaf3")
    assert (pair.ingress, pair.egress, pair.dst_edge) == ("leaf1", "leaf3", 3)
    assert [(p.id, p.hops, p.switches, p.links) for p in pair.paths] == [
        (1, 2, ["leaf1", "spine1", "leaf3"], ["leaf1-spine1", "leaf3-spine1"]),
        (2, 2, ["leaf1", "spine2", "leaf3"], ["leaf1-spine2", "leaf3-spine2"])]
    placement = pair.placement["0"]
    assert placement is not None and placement.weights == {"1": 255, "2": 255}
    assert set(pair.telemetry) == {"2"}  # only path 2 has reports in this direction
    with pytest.raises(NotFoundError, match="no pair leaf1->spine1"):
        ctl.pair("leaf1->spine1")


def test_a_links_load_comes_from_its_ends_port_rates_and_alive_from_the_routing():
    ctl = controller(fabric())
    out = ctl.fabric.ports["leaf1"].neighbours["spine2"]
    ctl.agents[0].ports.update(1.0, {out: CounterValue(0, 0)})
    ctl.agents[0].ports.update(2.0, {out: CounterValue(100, 250_000)})  # 2 Mbit/s
    link = ctl.fabric.link("leaf1-spine2")
    assert (link.forward.src, link.forward.port, link.forward.mbps) == ("leaf1", out, 2.0)
    assert link.forward.utilisation == pytest.approx(0.2)  # of 10 Mbit/s
    assert link.reverse.mbps is None  # spine2 not polled yet
    # leaf1's paths to leaf2 and leaf3, and theirs back, cross leaf1-spine2
    assert (link.alive, link.paths) == (True, 4)
    ctl.routes.set_link("leaf1-spine2", False)
    link = ctl.fabric.link("leaf1-spine2")
    assert (link.admin, link.alive, link.paths) == ("down", False, 0)


def test_the_report_budget_is_shared_by_the_edges():
    """A budget of 600 reports a second over 3 leaves caps each at 200: a leaf's 4 cells
    (2 peers x 2 paths, path and RTT reports every 10 ms: 800 a second) report 4 times
    less often, in the intake's view and in what its agent installs alike."""
    from mpsched.controller.telemetry.config import TelemetryConfig

    settings = ControllerSettings(control=False,
                                  telemetry=TelemetryConfig(report_budget_pps=600))
    ctl = Controller(fabric(), pipeline(), "x.json", settings)
    assert ctl.settings.telemetry.report_max_pps == 200
    leaf = ctl.intake.switch_telemetry["leaf1"]
    assert leaf.report_interval_us == leaf.rtt_interval_us == 40_000
    agent = next(a for a in ctl.agents if a.sw.name == "leaf1")
    assert agent.telemetry == leaf
    default = Controller(fabric(), pipeline(), "x.json", ControllerSettings(control=False))
    assert default.intake.switch_telemetry["leaf1"].report_interval_us == 10_000


def test_a_pair_shows_its_probe_regime():
    """A fabric's pairs start idle and turn active together with their reverse pair (one
    regime per pair of edges); two edges always probe every probe interval; with
    --idle-probe-interval-ms 0 a fabric's pairs are all active."""
    from mpsched.controller.telemetry.estimators import TelemetryConfig
    from mpsched.controller.telemetry.regimes import Transition

    assert {p.probing for p in controller(two_edges()).pairs()} == {"active"}
    ctl = controller(fabric())
    assert {p.probing for p in ctl.pairs()} == {"idle"}
    ctl.routes.regimes.update(Transition(probe_fast=frozenset({(1, 3)})), (), 0.0)
    assert {p.id: p.probing for p in ctl.pairs() if p.probing == "active"} == {
        "leaf1->leaf3": "active", "leaf3->leaf1": "active"}
    assert ctl.pair("leaf3->leaf1").model_dump()["probing"] == "active"
    off = Controller(fabric(), pipeline(), "x.json", ControllerSettings(
        control=False, telemetry=TelemetryConfig(idle_probe_interval_s=None)))
    assert {p.probing for p in off.pairs()} == {"active"}
