"""telemetry/probe_decisions.py: which probes go (an idle pair's every idle interval, an
active pair's where no traffic keeps the path measured), how often a prober's rounds come,
and which paths a fabric's edge has installed."""

from __future__ import annotations

import pytest

from mpsched.controller.telemetry.estimators import TelemetryConfig
from tests.unit.controller.telemetry.test_intake import (
    NOW,
    fabric_intake,
    intake,
)


def test_probes_are_wanted_on_a_path_without_estimates():
    assert intake().probe_wanted("s1", 2, 1, NOW) is True


def test_an_idle_pairs_paths_are_probed_every_idle_interval():
    from mpsched.controller.telemetry.regimes import Transition

    i = fabric_intake()
    # every pair idle: the prober ticks at the idle interval, each tick (a few ms late or
    # early) a round, and nothing is due between two
    assert i.probe_tick_s("leaf1") == pytest.approx(0.2)
    assert all(i.probe_wanted("leaf1", 2, 1, t) for t in (NOW, NOW + 0.198, NOW + 0.401))
    assert not i.probe_wanted("leaf1", 2, 1, NOW + 0.45)
    # active: the tick is the probe interval, every tick a round (no busy path), and the
    # busy judgement of today otherwise
    i.regimes.update(Transition(probe_fast=frozenset({(1, 2)})), (), NOW)
    assert i.probe_tick_s("leaf1") == pytest.approx(0.01)
    assert i.probe_tick_s("leaf3") == pytest.approx(0.2)
    ticks = [NOW + k * 0.01 for k in range(41)]
    assert all(i.probe_wanted("leaf1", 2, 1, t) for t in ticks)
    assert i.probe_wanted("leaf1", 3, 1, NOW + 0.3)  # (1, 3) still idle: its first probe
    assert not i.probe_wanted("leaf1", 3, 1, NOW + 0.41)
    every = fabric_intake(TelemetryConfig(probe_idle_only=False))
    assert every.probe_wanted("leaf1", 2, 1, NOW) and not every.probe_wanted("leaf1", 2, 1,
                                                                             NOW + 0.01)


def test_a_fabrics_edge_has_installed_its_pairs_paths_and_two_edges_every_path():
    from tests.unit.controller.telemetry.helpers import fabric_intake as plain_fabric

    assert intake().probe_installed("s1", 2, 7) is True
    i = plain_fabric()
    assert i.probe_installed("leaf1", 3, 2) is True
    assert i.probe_installed("leaf1", 3, 3) is False  # no path 3 between leaf1 and leaf3
    i.routes.set_link("leaf1-spine2", up=False)
    assert i.probe_installed("leaf1", 3, 2) is False


def test_without_probes_the_prober_ticks_at_the_idle_interval():
    from mpsched.controller.telemetry.config import IDLE_PROBE_INTERVAL_S

    assert intake(None).probe_tick_s("s1") == IDLE_PROBE_INTERVAL_S
    assert intake(0.05).probe_tick_s("s1") == 0.05  # two edges: no regimes
