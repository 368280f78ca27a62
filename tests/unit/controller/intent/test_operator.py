"""operator.py: every operator write is lock -> mutate -> submit -> await -> persist; a
switch that fails it leaves the intent unsaved; a backup refuses it before anything."""

from __future__ import annotations

import threading

import pytest

from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.mastership import Mastership
from mpsched.controller.intent.operator import Operator
from mpsched.controller.intent.state import StateStore, load
from mpsched.controller.model.errors import NotFoundError, NotPrimaryError, UnavailableError
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    Match,
    TrafficClass,
)
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.scheduling.stepper import Stepper
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from tests.unit.controller.fakes import FakeAgent, fabric, two_edges
from tests.unit.controller.helpers import pipeline, scheduler


def operator(tmp_path, s2: str = "ready") -> Operator:
    net = two_edges()
    agents = [FakeAgent(net.switches[0]), FakeAgent(net.switches[1], s2, "primary: 9")]
    keeper = IntentKeeper(scheduler(), {1: 1, 2: 1}, StateStore(tmp_path / "state.json"))
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig())
    stepper = Stepper(agents, pipeline(), intake, PinManager(net, pipeline()))
    mastership = Mastership(agents, keeper, apply=pytest.fail)
    return Operator(threading.Lock(), mastership, keeper, stepper, write_timeout=1.0)


def saves(op: Operator) -> int:
    return op.keeper.view()["saves"]


def test_an_acknowledged_write_is_saved_and_logged(tmp_path, caplog):
    op = operator(tmp_path)
    caplog.set_level("INFO", logger="mpsched.controller.intent.operator")
    op.write(lambda sched: sched.admin_down.add(2), "path 2 admin -> down")
    assert saves(op) == 1 and load(tmp_path / "state.json").paths[2].up is False
    assert all(a.jobs == 1 for a in op.stepper.agents)
    assert "path 2 admin -> down" in caplog.text


def test_a_write_a_switch_fails_stays_intended_but_is_not_saved(tmp_path):
    op = operator(tmp_path, s2="down")
    with pytest.raises(UnavailableError, match="s2: s2 is down"):
        op.set_admin(2, False)
    assert op.keeper.scheduler.admin_down == {2}  # the intended state stays
    assert saves(op) == 0 and not (tmp_path / "state.json").exists()


def test_a_backup_refuses_before_changing_anything(tmp_path):
    op = operator(tmp_path, s2="backup")
    with pytest.raises(NotPrimaryError, match=r"s2: primary: 9"):
        op.write(pytest.fail, "never")
    assert saves(op) == 0 and op.stepper.agents[0].jobs == 0


def test_a_refused_mutation_submits_nothing(tmp_path):
    op = operator(tmp_path)
    with pytest.raises(NotFoundError, match="no path 9"):
        op.set_weight(9, 1)
    with pytest.raises(ValueError, match="weight must be"):
        op.set_weight(1, 256)
    with pytest.raises(NotFoundError, match="no class 4"):
        op.set_class_policy(4, {"name": "ecmp"})
    assert op.stepper.agents[0].jobs == 0 and saves(op) == 0


def test_a_weight_makes_the_default_class_static_wcmp(tmp_path):
    op = operator(tmp_path)
    op.set_weight(2, 5)
    policy = op.keeper.scheduler.classes[DEFAULT_CLASS_ID].policy
    assert (policy.name, dict(policy.params)) == ("wcmp", {"weights": "1:1,2:5"})
    assert op.keeper.weights == {1: 1, 2: 5} and saves(op) == 1


def test_classes_params_and_policies_go_through_the_same_write(tmp_path):
    op = operator(tmp_path)
    voip = TrafficClass(5, "voip", priority=2, match=Match(dscp=46))
    op.set_classes([TrafficClass(DEFAULT_CLASS_ID, "default"), voip])
    op.set_class_policy(5, {"name": "minrtt"})
    op.set_params({"control_period_ms": 50})
    intent = load(tmp_path / "state.json")
    assert [c.policy.name for c in intent.classes] == ["ecmp", "minrtt"]
    assert intent.params.control_period_ms == 50 and saves(op) == 3


def fabric_operator(tmp_path) -> Operator:
    from mpsched.controller.scheduling.classes import ClassPolicy
    from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler
    net = fabric()
    agents = [FakeAgent(sw) for sw in net.switches]
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig())
    default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("ecmp"))
    units = [u.key for u in intake.routes.units()]
    keeper = IntentKeeper(Scheduler(units, [1, 2], [default], GlobalParams()), {1: 1, 2: 1},
                          StateStore(tmp_path / "state.json"), intake.routes)
    stepper = Stepper(agents, pipeline(), intake, PinManager(net, pipeline()))
    stepper.submit(keeper.scheduler, 0.0)  # every pair placed over both paths
    for agent in agents:
        agent.client.calls.clear()
    mastership = Mastership(agents, keeper, apply=pytest.fail)
    return Operator(threading.Lock(), mastership, keeper, stepper, write_timeout=1.0)


def test_a_link_down_writes_the_new_routes_first_then_the_placements_then_deletes(tmp_path):
    op = fabric_operator(tmp_path)
    pl = op.stepper.pipeline
    op.set_link_admin("leaf1-spine2", up=False)
    calls = {a.sw.name: a.client.calls for a in op.stepper.agents}
    assert calls["spine1"] == []  # nothing of it changed
    # leaf1 loses path 2 to both destinations: its placements first, then the next hops go
    assert [op for op, *_ in calls["leaf1"]] == ["modify", "delete"]
    assert calls["leaf1"][1][1:] == (pl.path_nexthop(2, 2, 3), pl.path_nexthop(3, 2, 3))
    assert load(tmp_path / "state.json").links_down == {"leaf1-spine2"}  # saved
    placement = op.keeper.scheduler.placement_of("leaf1->leaf3", DEFAULT_CLASS_ID)
    assert placement is not None and placement.weight_map()[2] == 0
    # spine2 forwards path 2 of leaf2 <-> leaf3 only
    assert [op for op, *_ in calls["spine2"]] == ["delete"] and len(calls["spine2"][0]) == 5
    for agent in op.stepper.agents:
        agent.client.calls.clear()
    op.set_link_admin("leaf1-spine2", up=True)
    # back up: spine2's entries come first (the one write before any placement changes)
    assert [op for op, *_ in calls["spine2"]] == ["modify"]
    assert [op for op, *_ in calls["leaf1"]] == ["modify"]  # its next hops, no policy step
    # with them, the clone sessions of its returned next hops (where SYN copies leave)
    leaf1 = next(a for a in op.stepper.agents if a.sw.name == "leaf1")
    assert {(s.session_id, s.port) for s in leaf1.client.sessions} == {
        (pl.edge_path_index(2, 2), 3), (pl.edge_path_index(3, 2), 3)}
    # the returned path gets its weight from the control loop: the re-routed pairs are due
    op.stepper.submit(op.keeper.scheduler, 1.0, only_ready=True)
    assert [op for op, *_ in calls["leaf1"]] == ["modify", "modify"]
    placement = op.keeper.scheduler.placement_of("leaf1->leaf3", DEFAULT_CLASS_ID)
    assert placement is not None and placement.weight_map()[2] > 0
    with pytest.raises(NotFoundError, match="no link leaf1-leaf2"):
        op.set_link_admin("leaf1-leaf2", up=False)


def test_a_spine_down_rewrites_each_switch_once(tmp_path):
    """Every link of a spine down in one request: one re-route, each switch's changes in one
    write of new entries (none here: a leaf-spine has no detour) and one of deletions."""
    op = fabric_operator(tmp_path)
    spine2 = ["leaf1-spine2", "leaf2-spine2", "leaf3-spine2"]
    op.set_links_admin(spine2, up=False)
    calls = {a.sw.name: a.client.calls for a in op.stepper.agents}
    assert calls["spine1"] == []
    assert [op for op, *_ in calls["spine2"]] == ["delete"]
    for leaf in ("leaf1", "leaf2", "leaf3"):
        assert [op for op, *_ in calls[leaf]] == ["modify", "delete"]  # placements, next hops
    # the phases' times: the paths are re-installed before the deletions
    assert list(op.last_reroute_ms) == ["lock", "routes", "new_entries", "placements",
                                        "deletions"]
    assert load(tmp_path / "state.json").links_down == set(spine2)
    with pytest.raises(NotFoundError, match="no link leaf1-leaf2"):
        op.set_links_admin(["leaf1-spine1", "leaf1-leaf2"], up=False)
    assert op.stepper.routes.links_down == set(spine2)  # the refused request changed nothing


def test_a_step_waits_for_a_reroute_in_progress(tmp_path):
    """The control loop's step takes the re-route's lock: while a re-route writes its
    entries (here: the lock held), a step does not start; it does once the re-route ends."""
    ctl = Controller(fabric(), pipeline(), "x.json", ControllerSettings(control=False))
    stepped = threading.Event()

    def step() -> None:
        ctl.step()
        stepped.set()

    with ctl.operator.rerouting:
        thread = threading.Thread(target=step)
        thread.start()
        assert not stepped.wait(0.3)
    assert stepped.wait(5)
    thread.join(timeout=5)
