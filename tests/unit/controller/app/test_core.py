"""core.py: the thin application composes the managers; its AgentHost and LoopHost calls
reach them (its REST views and writes: test_backend.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.model.reports import RttReport
from mpsched.controller.northbound import views
from mpsched.controller.runtime.governor import CpuGovernor
from mpsched.controller.telemetry.stats import Sample
from mpsched.p4rt.p4info import P4InfoError
from mpsched.p4rt.pipeline import TABLE_WEIGHTS
from tests.unit.controller.fakes import Clocks, two_edges
from tests.unit.controller.helpers import pipeline


def controller() -> Controller:
    """Not started: no agent connects, nothing is written."""
    return Controller(two_edges(), pipeline(), "x.json", ControllerSettings(control=False))


def test_paths_beyond_the_program_are_refused():
    small = pipeline()
    small.max_paths = 1
    with pytest.raises(ValueError, match=r"path ids \[2\] exceed the program's 1 paths"):
        Controller(two_edges(), small, "x.json")


def test_a_program_with_fewer_classes_than_the_controller_is_refused():
    """The traffic classes' ids go up to MAX_CLASSES - 1 (classes.py): a program that holds
    fewer per edge is refused at start, naming both numbers; one holding more is fine."""
    small = pipeline()
    small.max_classes = 32
    with pytest.raises(P4InfoError, match="holds 32 traffic classes per edge, the "
                                          "controller's class ids go up to 63"):
        Controller(two_edges(), small, "x.json")
    big = pipeline()
    big.max_classes = 128
    Controller(two_edges(), big, "x.json", ControllerSettings(control=False))


def test_what_agents_hand_over_reaches_the_views():
    ctl = controller()
    ctl.on_sample("s1", {1: Sample(1.0, 4, 400, 0, 0)})
    ctl.on_rtt(RttReport("s1", 2, 2, 30_000, 0, 0, 1.0))
    path = ctl.path(1)
    assert isinstance(path, views.PathView) and path.packets == 4
    assert set(ctl.telemetry(2).directions) == {"s1->s2"}
    assert [e.table for e in ctl.sched_entries("s1")] == [TABLE_WEIGHTS]


def test_restore_is_refused_once_started():
    ctl = controller()
    ctl._started = True
    with pytest.raises(RuntimeError, match="before start"):
        ctl.restore(ctl.intent())


def test_a_fabric_beyond_the_program_is_refused_naming_the_field():
    from mpsched.netcfg import ConfigError
    from tests.unit.controller.fakes import fabric

    small = pipeline()
    small.max_edges = 2
    with pytest.raises(ConfigError, match="3 edges, the program holds 2") as info:
        Controller(fabric(), small, "x.json")
    assert info.value.field == "fabric"


def test_a_fabric_is_driven_per_pair_of_edges():
    from mpsched.controller.model.reports import PathReport
    from tests.unit.controller.fakes import fabric

    net = fabric()
    ctl = Controller(net, pipeline(), "x.json", ControllerSettings(control=False))
    assert [a.sw.name for a in ctl.agents] == ["leaf1", "leaf2", "leaf3", "spine1", "spine2"]
    assert ctl.scheduler.switches[:2] == ["leaf1->leaf2", "leaf1->leaf3"]
    # a path report at leaf3 about path 2 from edge 1 is leaf1 -> leaf3's
    ctl.on_report(PathReport("leaf3", 2, 1, 0, 10_000, 1, 1500, 0, 0, 0, 1.0, src_edge=1))
    assert set(ctl.telemetry(2).directions) == {"leaf1->leaf3"}
    # an RTT report names its peer edge: the pair; none, its own or an unknown one is ignored
    ctl.on_rtt(RttReport("leaf2", 1, 3, 30_000, 0, 0, 1.0))
    ctl.on_rtt(RttReport("leaf2", 1, 0, 30_000, 0, 0, 1.0))
    ctl.on_rtt(RttReport("leaf2", 1, 2, 30_000, 0, 0, 1.0))  # its own edge
    ctl.on_rtt(RttReport("leaf2", 1, 7, 30_000, 0, 0, 1.0))  # no such edge
    assert set(ctl.telemetry(1).directions) == {"leaf2->leaf3"}
    assert ctl.forwarding(net.switch("spine1"))[0].table == "MpIngress.edge_config.transit_nexthop"
    assert ctl.probe_installed("leaf1", 3, 2) is True
    assert ctl.probe_wanted("leaf1", 3, 2) is True
    ctl.routes.set_link("leaf1-spine2", up=False)
    assert ctl.probe_installed("leaf1", 3, 2) is False  # leaf1 -> leaf3 has no path 2 now
    assert ctl.probe_installed("leaf2", 3, 2) is True


# -- the step budget: a parameter of GET/PUT /params -----------------------------


def loop_budgets(ctl: Controller, monkeypatch) -> list[float | None]:
    """The `budget_s` of every control-loop step from now on (the stepper's submit, faked:
    nothing is written, every write is acknowledged at once)."""
    budgets: list[float | None] = []

    def submit(scheduler, now, extra=None, only_ready=False, only_changed=None, budget_s=None):
        if only_ready:  # the loop's step; an operator's write steps every switch, no budget
            budgets.append(budget_s)
        return {}

    monkeypatch.setattr(ctl.stepper, "submit", submit)
    # the CPU budget's windows never end: the share is the parameter's (test_governor.py)
    ctl.governor = CpuGovernor(clock=lambda: 0.0, cpu_clock=lambda: 0.0)
    return budgets


def test_put_params_step_budget_changes_the_budget_of_the_next_step(monkeypatch):
    from mpsched.controller.northbound.rest import RestApi
    from tests.unit.controller.northbound.test_rest import call

    ctl = controller()
    budgets = loop_budgets(ctl, monkeypatch)
    ctl.step()
    status, body = call(RestApi(ctl), "PUT", "/params", {"step_budget_pct": 10})
    assert status == 200 and body["step_budget_pct"] == 10.0
    ctl.step()
    # the budget is a share of the current period: both are read at each step
    assert call(RestApi(ctl), "PUT", "/params", {"control_period_ms": 200})[0] == 200
    ctl.step()
    assert budgets == [pytest.approx(0.025), pytest.approx(0.010), pytest.approx(0.020)]
    assert ctl.params().step_budget_pct == 10.0 and ctl.intent().params.step_budget_pct == 10.0


@pytest.mark.parametrize("value", [0, -1, 101, "10"])
def test_put_params_refuses_a_step_budget_out_of_range_naming_it(monkeypatch, value):
    from mpsched.controller.northbound.rest import RestApi
    from tests.unit.controller.northbound.test_rest import call

    ctl = controller()
    budgets = loop_budgets(ctl, monkeypatch)
    status, body = call(RestApi(ctl), "PUT", "/params", {"step_budget_pct": value})
    assert status == 400 and body["field"] == "step_budget_pct", body
    assert "must be a number > 0 and <= 100" in body["error"]  # a known key, out of range
    ctl.step()
    assert budgets == [pytest.approx(0.025)] and ctl.params().step_budget_pct == 25.0


def test_a_process_over_its_cpu_budget_steps_in_a_smaller_share(monkeypatch):
    """The step's share falls while the process uses more than `cpu_budget_pct` of a core
    (src/mpsched/controller/runtime/governor.py), GET /decisions shows it and the CPU, and
    `cpu_budget_pct`
    null (PUT /params) gives the parameter's share back at once."""
    from mpsched.controller.northbound.rest import RestApi
    from tests.unit.controller.northbound.test_rest import call

    ctl = controller()
    budgets = loop_budgets(ctl, monkeypatch)
    clocks = Clocks()
    ctl.governor = CpuGovernor(clock=lambda: clocks.wall, cpu_clock=lambda: clocks.cpu)
    ctl.step()  # the first window starts
    clocks.run(2.0, 0.725)  # 25 points over what the default budget of 50 aims at (47.5)
    ctl.step()
    assert budgets == [pytest.approx(0.025), pytest.approx(0.0125)]  # 25 - 0.5 * 25 points
    loop = call(RestApi(ctl), "GET", "/decisions")[1]["loop"]
    assert loop["step_budget_pct_now"] == 12.5 and loop["cpu_pct"] == 72.5
    assert call(RestApi(ctl), "PUT", "/params", {"cpu_budget_pct": None})[0] == 200
    ctl.step()
    assert budgets[-1] == pytest.approx(0.025)
    status, body = call(RestApi(ctl), "PUT", "/params", {"cpu_budget_pct": 0})
    assert status == 400 and body["field"] == "cpu_budget_pct", body


def test_the_settings_seed_the_step_budget_parameter(monkeypatch):
    ctl = Controller(two_edges(), pipeline(), "x.json",
                     ControllerSettings(control=False, step_budget_pct=7, control_period_ms=50))
    assert ctl.params().step_budget_pct == 7.0  # as given, not 7.000000000000001
    budgets = loop_budgets(ctl, monkeypatch)
    ctl.step()
    assert budgets == [pytest.approx(0.0035)]
