"""backend.py: the REST API's views are typed, the default state is served, and what does
not exist is refused naming it; the writes answer with the view of what they changed."""

from __future__ import annotations

import pytest

from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.model.errors import NotFoundError
from mpsched.controller.northbound import views
from tests.unit.controller.fakes import two_edges
from tests.unit.controller.helpers import pipeline


def controller() -> Controller:
    """Not started: no agent connects, nothing is written."""
    return Controller(two_edges(), pipeline(), "x.json", ControllerSettings(control=False))


def test_views_are_typed_and_the_default_state_is_served():
    ctl = controller()
    assert [c.name for c in ctl.classes()] == ["default"]
    assert ctl.class_policy(0).name == "ecmp" and ctl.params().control_period_ms == 100.0
    assert [s.state for s in ctl.switches()] == ["connecting", "connecting"]
    assert ctl.decisions(0, 10).loop.latency_ms_p50 is None
    assert ctl.mptcp_connections().connections == [] and ctl.state().persistent is False
    assert ctl.role() == "primary" and ctl.weights() == {1: 1, 2: 1}



@pytest.mark.parametrize(("view", "message"), [
    (lambda ctl: ctl.path(9), "no path 9"),
    (lambda ctl: ctl.telemetry(9), "no path 9"),
    (lambda ctl: ctl.traffic_class(5), "no class 5"),
    (lambda ctl: ctl.class_policy(5), "no class 5"),
    (lambda ctl: ctl.adaptive(5), "no class 5"),
    (lambda ctl: ctl.adaptive(0), "class 0 runs 'ecmp', not the adaptive policy"),
    (lambda ctl: ctl.mptcp_connection(3), "no MPTCP connection 3"),
])
def test_what_does_not_exist_is_not_found_naming_it(view, message):
    with pytest.raises(NotFoundError, match=message):
        view(controller())


def test_the_views_of_every_path_and_class():
    ctl = controller()
    assert [p.id for p in ctl.paths()] == ctl.path_ids() == [1, 2]
    assert isinstance(ctl.paths()[0], views.PathView)
    assert ctl.traffic_class(0).name == "default"
    assert ctl.telemetry_since(0).paths == {}
