"""telemetry/sharing.py: what a fabric path's links leave one pair when other pairs load them,
and how the intake gives it to the scheduler as the path's capacity."""

from __future__ import annotations

import pytest

from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.ports import PortRate
from mpsched.controller.telemetry.sharing import (
    ACTIVE_MIN_MBPS,
    ACTIVE_SHARE,
    LinkShare,
    available_mbps,
    link_directions,
    link_shares,
    path_available_mbps,
)
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.paths import route
from tests.unit.controller.fakes import LEAF_SPINE, two_edges
from tests.unit.controller.telemetry.helpers import capacities as view_capacities
from tests.unit.controller.telemetry.helpers import fabric_intake, feed

NOW = 1_000.0
A, B, C = "leaf1->leaf3", "leaf2->leaf3", "leaf1->leaf2"


def test_an_idle_link_leaves_its_whole_rate():
    assert available_mbps(LinkShare(10.0), A) == 10.0
    assert available_mbps(LinkShare(None, {B: 5.0}), A) is None  # not limited


def test_the_pairs_own_load_and_probe_sized_loads_do_not_count():
    share = LinkShare(10.0, {A: 9.0, B: ACTIVE_SHARE * 10.0 * 0.9})
    assert available_mbps(share, A) == 10.0
    # a slow link (a quarter of 2.5 Mbit/s): two pairs' probes (64-byte frames every 10 ms)
    probes = 64 * 8 / 0.010 / 1e6
    assert probes < ACTIVE_MIN_MBPS
    assert available_mbps(LinkShare(0.625, {B: probes, C: probes}), A) == 0.625


def test_other_pairs_load_is_taken_off_down_to_the_fair_share():
    assert available_mbps(LinkShare(10.0, {B: 3.0}), A) == pytest.approx(7.0)
    assert available_mbps(LinkShare(10.0, {B: 7.0}), A) == pytest.approx(5.0)  # 1 of 2
    assert available_mbps(LinkShare(10.0, {B: 10.0}), A) == pytest.approx(5.0)
    assert available_mbps(LinkShare(9.0, {B: 4.0, C: 4.0}), A) == pytest.approx(3.15)  # 1/3 up
    # two pairs at half the rate each see the other's half, so their own
    two = LinkShare(10.0, {A: 5.0, B: 5.0})
    assert available_mbps(two, A) == available_mbps(two, B) == pytest.approx(5.0)


def test_the_port_counter_bounds_a_load_that_stopped():
    assert available_mbps(LinkShare(10.0, {B: 3.0}, measured_mbps=1.0), A) == pytest.approx(9.0)
    assert available_mbps(LinkShare(10.0, {B: 3.0}, measured_mbps=8.0), A) == pytest.approx(7.0)


def test_values_come_in_steps_and_never_reach_zero():
    assert available_mbps(LinkShare(10.0, {B: 3.13}), A) == pytest.approx(7.0)
    many = LinkShare(10.0, {f"p{i}": 1.0 for i in range(40)})
    assert available_mbps(many, A) == pytest.approx(ACTIVE_SHARE * 10.0)


def test_a_path_gets_the_least_over_its_links_each_direction_on_its_own():
    fab = parse_fabric(LEAF_SPINE)
    paths = {f"leaf{a}->leaf{b}": dict(route(fab).current[(a, b)])
             for a in (1, 2, 3) for b in (1, 2, 3) if a != b}
    via1 = paths[A][1]
    assert link_directions(via1) == [("leaf1-spine1", "leaf1"), ("leaf3-spine1", "spine1")]
    loads = {(B, 1): 3.0, (C, 1): 4.0, ("leaf3->leaf1", 1): 9.0}  # the last: the other way
    shares = link_shares(fab, paths, loads)
    assert shares[("leaf3-spine1", "spine1")].loads == {A: 0.0, B: 3.0}
    # C on leaf1 -> spine1 leaves 6, B on spine1 -> leaf3 7
    assert path_available_mbps(shares, A, via1) == pytest.approx(6.0)
    assert path_available_mbps(shares, C, paths[C][1]) == pytest.approx(10.0)
    assert path_available_mbps(shares, A, paths[A][2]) == pytest.approx(10.0)


# -- the intake ----------------------------------------------------------------------------


def capacities(intake: TelemetryIntake, pair: str, now: float = NOW) -> dict[int, tuple]:
    return view_capacities(intake, pair, now)


def test_an_idle_fabric_keeps_every_paths_configured_rate():
    intake = fabric_intake()
    feed(intake, 1, 1, 0.02, NOW)  # probes only
    assert capacities(intake, A) == {1: (10.0, 10.0), 2: (10.0, 10.0)}


def test_a_pairs_capacity_is_what_the_other_pairs_leave():
    intake = fabric_intake()
    feed(intake, 1, 1, 1.0, NOW)
    feed(intake, 2, 1, 3.0, NOW)  # leaf2 -> leaf3 on spine1
    assert capacities(intake, A) == {1: (pytest.approx(7.0), 10.0), 2: (10.0, 10.0)}
    assert capacities(intake, B) == {1: (pytest.approx(9.0), 10.0), 2: (10.0, 10.0)}


def test_a_dead_paths_last_goodput_and_a_quiet_port_count_nothing():
    intake = fabric_intake()
    feed(intake, 2, 1, 7.0, NOW - 3)  # its reports ended 3 s ago: dead now
    assert capacities(intake, A)[1][0] == 10.0
    intake = fabric_intake()
    feed(intake, 2, 1, 3.0, NOW)
    spine1 = intake.routes.ports["spine1"].neighbours["leaf3"]
    intake.shares.port_rates = lambda: {"spine1": {spine1: PortRate(mbps=0.5, pps=50)}}
    assert capacities(intake, A, NOW + 0.1)[1][0] == pytest.approx(9.5)


def test_two_edges_are_as_before():
    intake = TelemetryIntake(two_edges(), EstimatorSettings(), TelemetryConfig())
    view = intake.switch_view("s1", NOW)
    assert [(p.capacity_mbps, p.bottleneck_mbps) for p in view.paths] == [(10, None),
                                                                           (None, None)]
    assert intake.shares.get(NOW) == {}
