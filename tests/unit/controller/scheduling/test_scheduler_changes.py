"""The scheduler's class and parameter changes (src/mpsched/controller/scheduling/scheduler.py):
classes
replaced, a class's policy changed, global and per-class parameters, each checked whole before
anything changes."""

from __future__ import annotations

import json
import math

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.placement import Placement
from mpsched.controller.scheduling.classes import ClassPolicy, TrafficClass
from tests.unit.controller.scheduling.sched_helpers import (
    ALL_255,
    ALL_UP,
    LLHD_BETA2,
    LLHD_DEFAULT,
    LLHD_PATHS,
    LM3_PATHS,
    default_class,
    only,
    sched,
    view,
)

# -- classes -------------------------------------------------------------------------


def test_set_classes_keeps_unchanged_class_state():
    s = sched()
    first = only(s.step(view(ALL_UP), 0.0))
    web = TrafficClass(1, "web", policy=ClassPolicy("rr"))
    s.set_classes([default_class(), web])
    assert s.placement_of("s1", 0) == first
    assert s.placement_of("s1", 1) is None
    changes = s.step(view(ALL_UP), 1.0)
    assert [c.class_id for c in changes] == [1]
    assert changes[0].placement.mode == "rr"


def test_set_classes_changed_policy_starts_fresh():
    s = sched()
    s.step(view(ALL_UP), 0.0)
    s.set_classes([default_class(ClassPolicy("letflow"))])
    assert s.placement_of("s1", 0) is None
    assert s.classes[0].policy.name == "letflow"
    assert only(s.step(view(ALL_UP), 1.0)).mode == "flowlet"


def test_set_classes_drops_removed_classes():
    s = sched([default_class(), TrafficClass(1, "web")])
    assert len(s.step(view(ALL_UP), 0.0)) == 2
    s.set_classes([default_class()])
    assert list(s.classes) == [0]
    assert s.placement_of("s1", 1) is None
    assert s.step(view(ALL_UP), 1.0) == []


def test_set_classes_keeps_lm3_state_of_renamed_class():
    lm3 = ClassPolicy("ecmp", lm3=True)
    s = sched([default_class(lm3)])
    s.step(view(LM3_PATHS, ooo={1: 0}), 0.0)
    assert only(s.step(view(LM3_PATHS, ooo={1: 16}), 1.0)).weight_map()[3] == 0
    s.set_classes([TrafficClass(0, "renamed", policy=lm3)])
    # the LM3 active set {1, 2} survived: no change without blocking (R_3 < mean)
    assert s.step(view(LM3_PATHS, ooo={1: 16}), 2.0) == []
    assert s.classes[0].name == "renamed"


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (ClassPolicy("nope"), "classes[1].policy.name"),
        (ClassPolicy("llhd", params={"beta": -1.0}), "classes[1].policy.params.beta"),
        (ClassPolicy("ecmp", params={"x": 1}), "classes[1].policy.params.x"),
    ],
)
def test_set_classes_validates_before_changing_anything(bad, field):
    s = sched()
    first = only(s.step(view(ALL_UP), 0.0))
    before = dict(s.classes)
    # class 0 changes policy too: it must not take effect when class 1 is bad
    new = [default_class(ClassPolicy("rr")), TrafficClass(1, "bad", policy=bad)]
    with pytest.raises(FieldError) as err:
        s.set_classes(new)
    assert err.value.field == field
    assert s.classes == before
    assert s.placement_of("s1", 0) == first
    assert s.step(view(ALL_UP), 1.0) == []  # still ecmp with its last placement


def test_set_class_policy_rr_logs_the_decision():
    s = sched()
    s.step(view(ALL_UP), 0.0)
    updated = s.set_class_policy(0, {"name": "rr"})
    assert updated.policy.name == "rr"
    assert s.classes[0] == updated
    assert updated.name == "default" and updated.policy.flowlet_gap_us == 0  # 0: automatic
    pl = only(s.step(view(ALL_UP), 1.23456))
    assert pl.mode == "rr"
    assert pl.weights == ALL_255
    entry = s.log[-1]
    assert len(s.log) == 2
    assert entry["policy"] == "rr"
    assert entry["reason"].startswith("rr:")
    assert entry["weights"] == {"1": 255, "2": 255, "3": 255}
    assert entry["active"] == [1, 2, 3]
    assert entry["mode"] == "rr"
    assert entry["switch"] == "s1"
    assert entry["class_id"] == 0
    assert entry["t"] == 1.235
    assert set(entry["scores"]) == {"1", "2", "3"}
    json.dumps(entry)  # the REST layer serves it as is


def test_set_class_policy_keeps_last_placement():
    s = sched()
    s.set_class_policy(0, {"name": "letflow"})
    first = only(s.step(view(ALL_UP), 0.0))
    s.set_class_policy(0, {"flowlet_gap_us": 900})
    assert s.placement_of("s1", 0) == first
    pl = only(s.step(view(ALL_UP), 1.0))
    assert pl == Placement(ALL_255, "flowlet", 900)
    # same policy output as before on s2 never written: s2 gets its first placement
    assert only(s.step(view(ALL_UP, "s2"), 1.0)).flowlet_gap_us == 900
    # hash mode ignores the gap: the placement says 0
    s.set_class_policy(0, {"name": "ecmp"})
    assert only(s.step(view(ALL_UP), 2.0)) == Placement(ALL_255, "hash", 0)


def test_set_class_policy_bad_name_changes_nothing():
    s = sched()
    first = only(s.step(view(ALL_UP), 0.0))
    before = s.classes[0]
    with pytest.raises(FieldError) as err:
        s.set_class_policy(0, {"name": "nope"})
    assert err.value.field == "policy.name"
    assert s.classes[0] == before
    assert s.placement_of("s1", 0) == first
    assert s.step(view(ALL_UP), 1.0) == []


def test_a_change_of_policy_drops_the_params_the_new_one_does_not_have():
    """llhd's overrides do not stop a change to ecmp (which has none); a same-named one the
    new policy takes is kept (beta, llhd -> llhd-ca); `params` given replace them whole."""
    s = sched(ca_supported=True)
    s.set_class_policy(0, {"name": "llhd", "params": {"beta": 0.01, "weighted": False}})
    assert s.set_class_policy(0, {"name": "llhd-ca"}).policy.params == {"beta": 0.01}
    assert s.set_class_policy(0, {"name": "llhd"}).policy.params == {"beta": 0.01}
    assert s.set_class_policy(0, {"name": "ecmp"}).policy.params == {}
    s.set_class_policy(0, {"name": "llhd", "params": {"beta": 0.02}})
    with pytest.raises(FieldError) as err:
        s.set_class_policy(0, {"name": "ecmp", "params": {"beta": 0.02}})  # asked for: refused
    assert err.value.field == "policy.params.beta"
    assert s.set_class_policy(0, {"lm3": True}).policy.params == {"beta": 0.02}  # same policy


def test_a_change_of_policy_drops_a_value_the_new_one_does_not_take(monkeypatch):
    """Same name, a value out of the new policy's range (a narrower beta, stood in for
    here): dropped, not refused; the other same-named one kept."""
    from mpsched.controller.scheduling import params as params_module

    s = sched(ca_supported=True)
    s.set_class_policy(0, {"name": "llhd", "params": {"beta": 5.0, "min_rtt_ms": 2.0}})
    real = params_module.params_from_dict

    def narrower(cls, data, base=None, prefix=""):
        if data.get("beta", 0) > 1:
            raise FieldError(prefix + "beta", "must be <= 1")
        return real(cls, data, base, prefix)

    monkeypatch.setattr(params_module, "params_from_dict", narrower)
    assert s.set_class_policy(0, {"name": "llhd-ca"}).policy.params == {"min_rtt_ms": 2.0}


def test_set_class_policy_unknown_class():
    with pytest.raises(KeyError):
        sched().set_class_policy(9, {"name": "rr"})


# -- global parameters -----------------------------------------------------------


def test_set_params_unknown_top_level_key():
    s = sched()
    before = s.params
    with pytest.raises(FieldError) as err:
        s.set_params({"control_period_ms": 200, "bogus": 1})
    assert err.value.field == "bogus"
    assert s.params is before
    assert s.params.control_period_ms == 100.0


@pytest.mark.parametrize("value", [9.99, 10_000.5, 0, -1, True, math.nan, math.inf, "100", None])
def test_set_params_control_period_out_of_range(value):
    s = sched()
    with pytest.raises(FieldError) as err:
        s.set_params({"control_period_ms": value})
    assert err.value.field == "control_period_ms"
    assert s.params.control_period_ms == 100.0


@pytest.mark.parametrize("value", [0, -1, 101, "25", True, math.inf, None])
def test_set_params_step_budget_out_of_range(value):
    s = sched()
    with pytest.raises(FieldError) as err:
        s.set_params({"step_budget_pct": value})
    assert err.value.field == "step_budget_pct"
    assert s.params.step_budget_pct == 25.0


def test_set_params_step_budget_changes_only_the_budget():
    """The budget is not a policy's input: the policies keep their state."""
    s = sched()
    s.step(view(ALL_UP), 0.0)
    policy = s._state[("s1", 0)].policy
    assert s.set_params({"step_budget_pct": 100}).step_budget_pct == 100.0
    assert s._state[("s1", 0)].policy is policy  # not rebuilt
    assert s.step(view(ALL_UP), 1.0) == []


@pytest.mark.parametrize("value", [10, 10_000, 250.5])
def test_set_params_control_period_in_range(value):
    s = sched()
    s.step(view(ALL_UP), 0.0)
    out = s.set_params({"control_period_ms": value})
    assert out is s.params
    assert s.params.control_period_ms == float(value)
    assert isinstance(s.params.control_period_ms, float)
    assert s.step(view(ALL_UP), 1.0) == []  # no placement change from the period


def test_set_params_llhd_beta_applies():
    s = sched([default_class(ClassPolicy("llhd"))], path_ids=[1, 2])
    assert only(s.step(view(LLHD_PATHS), 0.0)).weights == LLHD_DEFAULT
    old_policy = s._state[("s1", 0)].policy
    s.set_params({"policies": {"llhd": {"beta": 2.0}}})
    assert s.params.policies["llhd"].beta == 2.0
    assert s.params.policies["llhd"].weighted is True  # partial update keeps the rest
    assert s._state[("s1", 0)].policy is not old_policy  # new instance
    assert s._state[("s1", 0)].policy.params.beta == 2.0
    pl = only(s.step(view(LLHD_PATHS), 1.0))
    assert pl.weights == LLHD_BETA2
    assert only(s.step(view(LLHD_PATHS, "s2"), 1.0)).weights == LLHD_BETA2


def test_set_params_class_override_wins_over_global():
    s = sched([default_class(ClassPolicy("llhd", params={"beta": 0.001}))], path_ids=[1, 2])
    assert only(s.step(view(LLHD_PATHS), 0.0)).weights == LLHD_DEFAULT
    s.set_params({"policies": {"llhd": {"beta": 2.0}}})
    assert s.step(view(LLHD_PATHS), 1.0) == []


def test_set_params_without_change_keeps_instances():
    s = sched([default_class(ClassPolicy("llhd"))], path_ids=[1, 2])
    policy = s._state[("s1", 0)].policy
    s.set_params({"control_period_ms": 50, "policies": {"llhd": {"beta": 0.001}}})
    assert s._state[("s1", 0)].policy is policy


def test_set_params_lm3_applies_to_lm3_classes():
    s = sched([default_class(ClassPolicy("ecmp", lm3=True))])
    s.set_params({"lm3": {"blocking_threshold": 4}})
    assert s.params.lm3.blocking_threshold == 4
    assert s._state[("s1", 0)].lm3.params.blocking_threshold == 4
    s.step(view(LM3_PATHS, ooo={1: 0}), 0.0)
    # 4 out-of-order arrivals are one event now (16 by default)
    assert only(s.step(view(LM3_PATHS, ooo={1: 4}), 1.0)).weight_map()[3] == 0


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"policies": {"nope": {}}}, "policies.nope"),
        ({"policies": {"llhd": {"beta": -1.0}}}, "policies.llhd.beta"),
        ({"policies": {"llhd": {"beta": "x"}}}, "policies.llhd.beta"),
        ({"policies": {"llhd": {"gamma": 1.0}}}, "policies.llhd.gamma"),
        ({"policies": {"llhd": 3}}, "policies.llhd"),
        ({"policies": [1]}, "policies"),
        ({"lm3": {"sigma": 0.7}}, "lm3.sigma"),  # sigma + epsilon != 1
        ({"lm3": {"window_source": "cwnd"}}, "lm3.window_source"),
        ({"lm3": "x"}, "lm3"),
        # a good key before a bad one changes nothing either
        ({"control_period_ms": 500, "policies": {"llhd": {"beta": 2.0}, "nope": {}}},
         "policies.nope"),
    ],
)
def test_set_params_bad_value_leaves_params_unchanged(changes, field):
    s = sched([default_class(ClassPolicy("llhd"))], path_ids=[1, 2])
    s.step(view(LLHD_PATHS), 0.0)
    before = s.params
    snapshot = before.to_dict()
    with pytest.raises(FieldError) as err:
        s.set_params(changes)
    assert err.value.field == field
    assert s.params is before
    assert s.params.to_dict() == snapshot
    assert s.step(view(LLHD_PATHS), 1.0) == []


def test_set_params_body_must_be_an_object():
    with pytest.raises(FieldError) as err:
        sched().set_params([("control_period_ms", 50)])
    assert err.value.field == "body"


# -- atomic parameter changes ------------------------------------------------------


def test_set_params_rejected_by_a_class_override_changes_nothing():
    classes = [
        default_class(ClassPolicy("llhd")),
        TrafficClass(1, "q", policy=ClassPolicy("qos", params={"loss_window_max_s": 1.0})),
    ]
    s = sched(classes, path_ids=[1, 2])
    changes = s.step(view(LLHD_PATHS), 0.0)
    assert changes[0].placement.weights == LLHD_DEFAULT
    before = s.params
    with pytest.raises(FieldError):
        s.set_params({"policies": {"llhd": {"beta": 2.0}, "qos": {"loss_window_min_s": 5.0}}})
    assert s.params is before  # holds
    # class 0 must still decide with beta 0.001: nothing to write
    assert s.step(view(LLHD_PATHS), 1.0) == []
