"""src/mpsched/controller/policies/adaptive.py, the `adaptive` policy (QoS-MPTCP;
docs/scheduling.md):
the policy over periods, delegation to the arms, learned tables kept across changes and restarts,
the policy in the scheduler. Its parts have their own modules: test_adaptive_context.py,
test_adaptive_bayes.py, test_adaptive_outcome.py, test_adaptive_arms.py,
test_adaptive_params.py."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathCounters, PathState
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.adaptive import (
    Adaptive,
)
from mpsched.controller.policies.adaptive_bayes import BetaTable, choose
from mpsched.controller.policies.base import QosTarget
from mpsched.controller.scheduling.classes import (
    ClassPolicy,
    TrafficClass,
    class_from_dict,
    class_to_dict,
)
from mpsched.controller.scheduling.scheduler import Scheduler
from tests.unit.controller.policies.helpers import Rigged

# -- the policy over periods ----------------------------------------------------------------


class Feed:
    """PathStates of two 10 Mbit/s paths whose egress counters advance each period: `rate`
    packets of 1250 bytes per period on every weighted path (in mode ca, as the switch
    would choose: only on the weighted paths of least loss), and `loss` of them lost."""

    def __init__(self):
        self.t = 1000.0
        self.totals = {1: [0, 0, 0, 0], 2: [0, 0, 0, 0]}
        self.loss = {1: 0.0, 2: 0.0}

    def step(self, decision=None, rate: int = 100):
        self.t += 0.1
        used = {1, 2} if decision is None else {p for p, w in decision.weights.items() if w > 0}
        if decision is not None and decision.mode == Mode.CA:
            least = min(self.loss[p] for p in used)
            used = {p for p in used if self.loss[p] == least}
        out = []
        for pid in (1, 2):
            tot = self.totals[pid]
            if pid in used:
                lost = round(rate * self.loss[pid])
                tot[0] += rate - lost
                tot[1] += (rate - lost) * 1250
                tot[2] += lost
            out.append(PathState(
                pid, True, srtt_ms=20.0, capacity_mbps=10.0, goodput_mbps=5.0,
                loss_rate=self.loss[pid], owd_ms=1.0,
                counters=PathCounters(self.t, tot[0], tot[1], tot[2], tot[3]),
            ))
        return out


def run(policy: Adaptive, feed: Feed, periods: int, rate: int = 100):
    decision = None
    for _ in range(periods):
        paths = feed.step(decision, rate)
        decision = policy.decide(paths, feed.t)
    return decision


PARAMS = {"arms": "ecmp,ca", "exploration": "epsilon", "epsilon": 0.0, "dwell_periods": 4,
          "settle_periods": 1, "min_dwell_periods": 2, "context_hold_periods": 2, "pool": 0.0,
          "target_min_goodput_frac": None, "target_max_reorder": None, "target_max_loss": 0.01,
          "outcome": "met", "prior": "flat"}


def test_the_class_switches_arm_when_a_path_turns_lossy():
    policy = make_policy("adaptive", PARAMS)
    feed = Feed()
    d = run(policy, feed, 1)
    assert d.mode == Mode.HASH and "arm ecmp (greedy; dwell 0/4)" in d.reason
    assert "P(met) ecmp=0.5 ca=0.5" in d.reason and "| ecmp:" in d.reason
    clean = "loss=low delay=low jitter=low load=mid alive=2/2"
    run(policy, feed, 8)  # two scored dwells of ecmp, both met: Beta(3, 1)
    assert policy.table.posterior(clean, "ecmp") == (3.0, 1.0)
    assert policy.dwell.arm.label == "ecmp"
    feed.loss[2] = 0.2  # path 2 turns lossy: 20 of its 100 packets per period
    lossy = "loss=high delay=low jitter=low load=mid alive=2/2"
    # the context holds after 2 periods; the dwell ends early (not scored), ecmp is tried in
    # the new context (0.5 = 0.5, arm order), loses 20 / 200 by bytes > 1 %: Beta(1, 2);
    # then ca (0.5 > 1/3) keeps its flowlets off the lossy path and meets it: Beta(2, 1)
    run(policy, feed, 12)
    assert policy.table.posterior(lossy, "ecmp") == (1.0, 2.0)
    assert policy.table.posterior(lossy, "ca") == (2.0, 1.0)
    assert policy.table.posterior(clean, "ecmp") == (3.0, 1.0)  # the old context kept
    d = run(policy, feed, 1)
    assert policy.dwell.arm.label == "ca" and d.mode == Mode.CA
    assert f"context {lossy}" in d.reason
    assert policy.switches == 1
    assert policy.view()["context_changes"] == {"key": 1, "stable": 1}
    history = policy.view()["history"]
    assert any(h.get("why", "").startswith("context changed") for h in history)
    assert [(h["arm"], h["met"]) for h in history if h["scored"]] == [
        ("ecmp", True), ("ecmp", True), ("ecmp", False), ("ca", True)
    ]


def test_a_context_flapping_for_less_than_the_hold_keeps_the_dwell():
    """Path 2's loss flips between 0 and 20 % every period: the key changes every period, the
    held key never (context_hold_periods 2), and the dwells run to their end."""
    policy = make_policy("adaptive", PARAMS)
    feed = Feed()
    decision = None
    for i in range(13):
        feed.loss[2] = 0.2 if i % 2 else 0.0
        decision = policy.decide(feed.step(decision), feed.t)
    assert policy.view()["context_changes"] == {"key": 12, "stable": 0}
    assert [h["periods"] for h in policy.view()["history"]] == [4, 4, 4]


def test_an_idle_dwell_is_not_scored():
    policy = make_policy("adaptive", PARAMS)
    feed = Feed()
    run(policy, feed, 9, rate=0)
    assert policy.table.cells == {}
    assert all(not h["scored"] and h["why"].startswith("idle") for h in policy.view()["history"])


def test_lm3_arms_run_lm3_on_the_arms_decision():
    policy = make_policy("adaptive", {**PARAMS, "arms": "llhd+lm3"})
    d = run(policy, Feed(), 2)
    assert "| lm3: active [1, 2]" in d.reason and d.mode == Mode.FLOWLET


def test_learned_table_survives_a_new_instance_but_not_another_discretisation():
    policy = make_policy("adaptive", PARAMS)
    run(policy, Feed(), 9)
    data = policy.learned()
    fresh = make_policy("adaptive", {**PARAMS, "epsilon": 0.2})
    fresh.restore_learned(data, "learned.0.s1")
    assert fresh.table.to_json() == policy.table.to_json()
    other = make_policy("adaptive", {**PARAMS, "loss_levels": "low:0:0.01,high:0.1:0.05"})
    other.restore_learned(data, "learned.0.s1")
    assert other.table.cells == {}
    with pytest.raises(FieldError) as err:
        fresh.restore_learned({**data, "table": {"version": 9}}, "learned.0.s1")
    assert err.value.field == "learned.0.s1.table.version"


# -- in the scheduler ----------------------------------------------------------------------


def _adaptive_class(target=None) -> TrafficClass:
    return TrafficClass(0, "default", policy=ClassPolicy("adaptive", PARAMS), qos_target=target)


def test_the_class_target_reaches_the_policy_and_the_table_outlives_changes():
    target = QosTarget(max_loss=0.05)
    sched = Scheduler(["s1"], [1, 2], [_adaptive_class(target)])
    policy = sched.policy_of("s1", 0)
    assert policy.effective_target() == (target, "class")
    feed = Feed()
    for _ in range(9):
        sched.step(SwitchView("s1", feed.step(None), {}), feed.t)
    learned = sched.learned()
    assert list(learned) == ["0"] and learned["0"]["s1"]["table"]["contexts"]
    # a parameter change makes a new instance; it takes the table over
    sched.set_class_policy(0, {"params": {**PARAMS, "epsilon": 0.3}})
    assert sched.policy_of("s1", 0) is not policy
    assert sched.learned() == learned
    # a new target alone keeps the instance and tells it
    sched.set_classes([_adaptive_class(QosTarget(max_loss=0.2))])
    assert sched.policy_of("s1", 0).effective_target()[0].max_loss == 0.2
    sched.set_classes([_adaptive_class(None)])
    assert sched.policy_of("s1", 0).effective_target()[1] == "default"
    again = Scheduler(["s1"], [1, 2], [_adaptive_class()])
    again.restore_learned(learned)
    assert again.learned() == learned
    bad = {**learned["0"]["s1"], "table": 1}
    with pytest.raises(FieldError) as err:
        again.restore_learned({"0": {"s1": bad}})
    assert err.value.field == "learned.0.s1.table"
    again.restore_learned({"9": {"s1": bad}, "0": {"s7": bad}})  # gone: skipped


def test_a_program_without_congestion_refuses_ca_arms():
    with pytest.raises(FieldError) as err:
        Scheduler(["s1"], [1, 2], [_adaptive_class()], ca_supported=False)
    assert err.value.field == "classes[0].policy.name"
    ok = TrafficClass(0, "default", policy=ClassPolicy("adaptive", {"arms": "ecmp,llhd"}))
    Scheduler(["s1"], [1, 2], [ok], ca_supported=False)


def test_qos_target_is_validated_and_serialised_with_the_class():
    c = class_from_dict({"id": 0, "name": "default",
                         "qos_target": {"max_loss": 0.01, "min_goodput_frac": 1}})
    assert c.qos_target == QosTarget(min_goodput_frac=1.0, max_loss=0.01)
    assert class_to_dict(c)["qos_target"] == {
        "min_goodput_frac": 1.0, "max_delay_ms": None, "max_loss": 0.01, "max_reorder": None
    }
    assert class_from_dict({"id": 0, "name": "d", "qos_target": {}}).qos_target is None
    assert class_to_dict(class_from_dict({"id": 0, "name": "d"}))["qos_target"] is None
    for bad, field in [
        ({"max_loss": 2}, "max_loss"),
        ({"max_loss": True}, "max_loss"),
        ({"max_delay_ms": -1}, "max_delay_ms"),
        ({"min_goodput": 0.5}, "min_goodput"),
    ]:
        with pytest.raises(FieldError) as err:
            class_from_dict({"id": 0, "name": "d", "qos_target": bad}, "classes[0]")
        assert err.value.field == f"classes[0].qos_target.{field}"
    with pytest.raises(FieldError) as err:
        class_from_dict({"id": 0, "name": "d", "qos_target": [1]}, "classes[0]")
    assert err.value.field == "classes[0].qos_target"


def test_no_exploration_while_the_current_arm_meets_the_target():
    t = BetaTable()
    t.stats("x").dwells = 10
    rng = Rigged(betas={(1.0, 1.0): 0.9, (2.0, 1.0): 0.1})
    t.update("x", "ecmp", 1.0)
    c = choose(t, "x", ["ecmp", "llhd"], "ecmp", rng, "thompson", max_explore_frac=1.0,
               explore=False)
    assert (c.arm, c.explored, c.note, c.samples) == ("ecmp", False, "greedy, no exploration",
                                                      {})
    assert (t.stats("x").dwells, t.stats("x").explored) == (11, 0)
    c = choose(t, "x", ["ecmp", "llhd"], "ecmp", rng, "thompson", max_explore_frac=1.0)
    assert (c.arm, c.explored) == ("llhd", True)  # drawn 0.9 > 0.1


@pytest.mark.parametrize(("explore_when", "explored"), [("unmet", False), ("always", True)])
def test_explore_when_unmet_holds_back_after_a_met_dwell(explore_when, explored):
    params = {**PARAMS, "exploration": "epsilon", "epsilon": 1.0, "max_explore_frac": 1.0,
              "explore_when": explore_when}
    policy = make_policy("adaptive", params)
    feed = Feed()
    # the first choice has no evidence: it explores (ε = 1), ca; its dwell meets the target
    run(policy, feed, 5)
    assert [(h["arm"], h["explored"], h["met"]) for h in policy.view()["history"]] == [
        ("ca", True, True)]
    # then "unmet" keeps the greedy ca without exploring; "always" explores ecmp again
    assert policy.dwell.choice.explored is explored
    assert policy.dwell.arm.label == ("ecmp" if explored else "ca")
