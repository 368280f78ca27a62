"""operator.py: every operator write is lock -> mutate -> submit -> await -> persist; a
switch that fails it leaves the intent unsaved; a backup refuses it before anything."""

from __future__ import annotations

import threading

import pytest

from mpsched.controller.errors import NotFoundError, NotPrimaryError, UnavailableError
from mpsched.controller.intent import IntentKeeper
from mpsched.controller.mastership import Mastership
from mpsched.controller.operator import Operator
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    Match,
    TrafficClass,
)
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.state import StateStore, load
from mpsched.controller.stepper import Stepper
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from tests.unit.controller.fakes import FakeAgent, two_edges
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
    caplog.set_level("INFO", logger="mpsched.controller.operator")
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
