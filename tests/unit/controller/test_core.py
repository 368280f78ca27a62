"""core.py: the thin application composes the managers; its AgentHost and LoopHost calls
reach them and its views are typed."""

from __future__ import annotations

import pytest

from mpsched.controller.core import Controller, ControllerSettings
from mpsched.controller.northbound import views
from mpsched.controller.southbound.reports import RttReport
from mpsched.controller.telemetry.stats import Sample
from mpsched.p4rt.pipeline import TABLE_WEIGHTS
from tests.unit.controller.fakes import two_edges
from tests.unit.controller.helpers import pipeline


def controller() -> Controller:
    """Not started: no agent connects, nothing is written."""
    return Controller(two_edges(), pipeline(), "x.json", ControllerSettings(control=False))


def test_paths_beyond_the_program_are_refused():
    small = pipeline()
    small.max_paths = 1
    with pytest.raises(ValueError, match=r"path ids \[2\] exceed the program's 1 paths"):
        Controller(two_edges(), small, "x.json")


def test_what_agents_hand_over_reaches_the_views():
    ctl = controller()
    ctl.on_sample("s1", {1: Sample(1.0, 4, 400, 0, 0)})
    ctl.on_rtt(RttReport("s1", 2, 2, 30_000, 0, 0, 1.0))
    path = ctl.path(1)
    assert isinstance(path, views.PathView) and path.packets == 4
    assert set(ctl.telemetry(2).directions) == {"s1->s2"}
    assert [e.table for e in ctl.sched_entries("s1")] == [TABLE_WEIGHTS]


def test_views_are_typed_and_the_default_state_is_served():
    ctl = controller()
    assert [c.name for c in ctl.classes()] == ["default"]
    assert ctl.class_policy(0).name == "ecmp" and ctl.params().control_period_ms == 100.0
    assert [s.state for s in ctl.switches()] == ["connecting", "connecting"]
    assert ctl.decisions(0, 10).loop.latency_ms_p50 is None
    assert ctl.mptcp_connections().connections == [] and ctl.state().persistent is False
    assert ctl.role() == "primary" and ctl.weights() == {1: 1, 2: 1}


def test_restore_is_refused_once_started():
    ctl = controller()
    ctl._started = True
    with pytest.raises(RuntimeError, match="before start"):
        ctl.restore(ctl.intent())
