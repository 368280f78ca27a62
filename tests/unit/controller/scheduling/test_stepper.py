"""stepper.py: a scheduler step per switch becomes one job per switch with only what
changed; class table swaps; pins pushed to ready switches."""

from __future__ import annotations

import pytest

from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    Match,
    TrafficClass,
)
from mpsched.controller.scheduling.mptcp import Flow, MptcpReport
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.scheduling.stepper import Stepper
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.p4rt.pipeline import TABLE_SUBFLOW_PIN, TABLE_TRAFFIC_CLASS, TABLE_WEIGHTS
from tests.unit.controller.fakes import FakeAgent, two_edges
from tests.unit.controller.helpers import pipeline, scheduler

NOW = 1_000.0


def stepper(*states: str) -> Stepper:
    net = two_edges()
    agents = [FakeAgent(sw, state) for sw, state in zip(net.switches, states, strict=True)]
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig())
    return Stepper(agents, pipeline(), intake, PinManager(net, pipeline()))


def written(agent: FakeAgent) -> list[tuple[str, str]]:
    return [(op, e.table) for op, *entries in agent.client.calls for e in entries]


def test_a_programmed_switch_gets_every_placement_the_classifier_and_the_pins():
    st = stepper("ready", "ready")
    flow = Flow("10.0.1.1", 40000, "10.0.2.1", 5201)
    st.pins.tracker.ingest(
        MptcpReport("capable", flow.reversed(), NOW, tcp_flags=0x12, key_a=7, switch="s2")
    )
    entries = st.sched_entries(scheduler(), "s1", NOW)
    assert [e.table for e in entries] == [TABLE_WEIGHTS, TABLE_SUBFLOW_PIN, TABLE_SUBFLOW_PIN]
    assert st.installed_classes["s1"] == []  # the default class only: no classifier entry
    assert len(st.pins.sent["s1"]) == 2


def test_a_step_writes_what_changed_and_nothing_when_nothing_did():
    st, sched = stepper("ready", "ready"), scheduler()
    futures = st.submit(sched, NOW)
    assert sorted(futures) == ["s1", "s2"] and all(f.result() is None for f in futures.values())
    assert written(st.agents[0]) == [("modify", TABLE_WEIGHTS)]
    assert st.submit(sched, NOW + 0.1) == {}


def test_the_control_loop_skips_switches_that_are_not_ready():
    st = stepper("ready", "connecting")
    assert sorted(st.submit(scheduler(), NOW, only_ready=True)) == ["s1"]
    assert st.agents[1].jobs == 0


def test_a_class_swap_replaces_the_classifier_then_drops_the_removed_class():
    st, sched = stepper("ready", "ready"), scheduler()
    voip = TrafficClass(5, "voip", priority=2, match=Match(dscp=46))
    default = TrafficClass(DEFAULT_CLASS_ID, "default")
    sched.set_classes([default, voip])
    st.submit(sched, NOW, st.class_swap(sched, removed=[]))
    (replace,) = (c for c in st.agents[0].client.calls if c[0] == "replace")
    assert replace[1] == () and [e.table for e in replace[2]] == [TABLE_TRAFFIC_CLASS]
    st.agents[0].client.calls.clear()
    sched.set_classes([default])
    st.submit(sched, NOW + 1, st.class_swap(sched, removed=[5]))
    ops = [c[0] for c in st.agents[0].client.calls]
    assert ops[-2:] == ["replace", "delete"]
    assert st.agents[0].client.calls[-2][1] == replace[2]  # the classifier sent before


def test_new_pins_go_to_ready_switches_only():
    st, sched = stepper("ready", "down"), scheduler()
    flow = Flow("10.0.1.1", 40000, "10.0.2.1", 5201)
    st.pins.tracker.ingest(
        MptcpReport("capable", flow.reversed(), NOW, tcp_flags=0x12, key_a=7, switch="s2")
    )
    st.push_pins(sched, NOW)
    assert written(st.agents[0]) == [("insert", TABLE_SUBFLOW_PIN)] * 2
    assert st.agents[1].jobs == 0
    st.push_pins(sched, NOW)  # nothing new: no job
    assert st.agents[0].jobs == 1


def fabric_stepper() -> Stepper:
    from tests.unit.controller.fakes import fabric

    net = fabric()
    agents = [FakeAgent(sw) for sw in net.switches]
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig())
    return Stepper(agents, pipeline(), intake, PinManager(net, pipeline()))


def test_a_fabric_steps_per_pair_and_writes_each_pair_to_its_ingress():
    from mpsched.controller.scheduling.classes import ClassPolicy
    from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler

    st = fabric_stepper()
    units = [u.key for u in st.routes.units()]
    default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("ecmp"))
    sched = Scheduler(units, [1, 2], [default], GlobalParams())
    entries = st.sched_entries(sched, "leaf2", NOW)
    # one placement per destination edge (1 and 3), keyed by it
    assert [(e.table, e.match["dst_edge"]) for e in entries] == [
        (TABLE_WEIGHTS, 1), (TABLE_WEIGHTS, 3)]
    assert st.sched_entries(sched, "spine1", NOW) == []  # a transit switch holds none
    assert sched.placement_of("leaf2->leaf3", DEFAULT_CLASS_ID) is not None
    sched2 = Scheduler(units, [1, 2], [default], GlobalParams())
    futures = st.submit(sched2, NOW)
    assert sorted(futures) == ["leaf1", "leaf2", "leaf3"]
    leaf3 = next(a for a in st.agents if a.sw.name == "leaf3")
    (call,) = leaf3.client.calls
    assert [(e.table, e.match["dst_edge"]) for e in call[1:]] == [
        (TABLE_WEIGHTS, 1), (TABLE_WEIGHTS, 2)]
    swap = st.class_swap(sched2, [5])
    assert sorted(swap) == ["leaf1", "leaf2", "leaf3"]  # no classifier on the spines


def test_a_pairs_vanished_path_is_out_of_service_for_its_scheduler():
    from mpsched.controller.scheduling.classes import ClassPolicy
    from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler

    st = fabric_stepper()
    st.routes.set_link("leaf1-spine2", up=False)
    view = st.intake.unit_view(st.routes.unit("leaf1->leaf3"), NOW)
    assert [(p.path_id, p.alive) for p in view.paths] == [(1, True), (2, False)]
    other = st.intake.unit_view(st.routes.unit("leaf2->leaf3"), NOW)
    assert [p.alive for p in other.paths] == [True, True]
    default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("ecmp"))
    sched = Scheduler([u.key for u in st.routes.units()], [1, 2], [default], GlobalParams())
    st.submit(sched, NOW)
    assert sched.placement_of("leaf1->leaf3", DEFAULT_CLASS_ID).weight_map()[2] == 0
    assert sched.placement_of("leaf2->leaf3", DEFAULT_CLASS_ID).weight_map()[2] > 0


def fabric_scheduler(st: Stepper, policy: str = "llhd"):
    from mpsched.controller.scheduling.classes import ClassPolicy
    from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler

    default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy(policy, lm3=True))
    return Scheduler([u.key for u in st.routes.units()], [1, 2], [default], GlobalParams())


def leaf1_to_leaf3_report(path_id: int, at: float):
    from mpsched.controller.model.reports import PathReport

    rx = int(at * 1e6)
    return PathReport("leaf3", path_id, 10, rx - 5_000, rx, 10, 10_000, 0, 0, 0, at, src_edge=1)


def test_the_loop_steps_only_the_pairs_whose_inputs_changed_or_whose_view_ages():
    st = fabric_stepper()
    sched = fabric_scheduler(st)
    st.submit(sched, NOW, only_ready=True)  # never stepped: every pair
    assert (st.pair_steps, st.pair_skips) == (6, 0)
    assert st.submit(sched, NOW + 0.1, only_ready=True) == {}
    assert (st.pair_steps, st.pair_skips) == (6, 6)
    st.intake.ingest_report(leaf1_to_leaf3_report(1, NOW + 0.15))
    st.submit(sched, NOW + 0.2, only_ready=True)  # that pair's direction only
    assert (st.pair_steps, st.pair_skips) == (7, 11)
    assert st.stepped["leaf1->leaf3"].inputs == 1
    # no report for dead_after_s: path 1 of that pair dies without any input
    dead_at = NOW + 0.15 + EstimatorSettings().dead_after_s
    st.submit(sched, dead_at - 0.01, only_ready=True)
    assert st.pair_steps == 7
    futures = st.submit(sched, dead_at, only_ready=True)
    assert st.pair_steps == 8 and list(futures) == ["leaf1"]
    assert sched.placement_of("leaf1->leaf3", DEFAULT_CLASS_ID).weight_map()[1] == 0


def test_a_new_configuration_steps_every_pair_and_a_reroute_the_pairs_it_moved():
    st = fabric_stepper()
    sched = fabric_scheduler(st)
    st.submit(sched, NOW, only_ready=True)
    sched.admin_down.add(2)
    st.submit(sched, NOW + 0.1, only_ready=True)
    assert st.pair_steps == 12
    sched.set_params({"control_period_ms": 50})
    st.submit(sched, NOW + 0.2, only_ready=True)
    assert st.pair_steps == 18
    rerouted = st.routes.set_link("leaf1-spine2", up=False)  # the pairs of leaf1 only
    assert sorted(u.key for u in rerouted) == [
        "leaf1->leaf2", "leaf1->leaf3", "leaf2->leaf1", "leaf3->leaf1"]
    st.submit(sched, NOW + 0.3, only_ready=True)
    assert (st.pair_steps, st.pair_skips) == (22, 2)
    st.routes.set_link("leaf1-spine2", up=True)
    st.submit(sched, NOW + 0.35, only_changed=True)  # the operator's re-route: those again
    assert (st.pair_steps, st.pair_skips) == (26, 4)
    st.submit(sched, NOW + 0.4)  # any other request of the operator: every pair
    assert (st.pair_steps, st.pair_skips) == (32, 4)


def test_a_policy_that_keeps_state_is_stepped_every_period():
    st = fabric_stepper()
    sched = fabric_scheduler(st, "fdmvqs")
    st.submit(sched, NOW, only_ready=True)
    st.submit(sched, NOW + 0.1, only_ready=True)
    assert (st.pair_steps, st.pair_skips) == (12, 0)


def test_over_its_budget_the_loop_steps_the_most_overdue_pairs_and_defers_the_rest():
    """A budget of no time steps one pair per step, the longest waiting first; the pairs it
    did not reach stay due (and first in line), and each step's wait is kept."""
    st = fabric_stepper()
    sched = fabric_scheduler(st)
    st.submit(sched, NOW, only_ready=True)  # every pair's first step
    st.refresh_ms.clear()
    st.intake.ingest_report(leaf1_to_leaf3_report(1, NOW + 0.15))
    st.intake.input_since["leaf1->leaf3"] = NOW + 0.15  # the report came then
    st.intake.ingest_report(leaf1_to_leaf3_report(2, NOW + 0.16))  # same pair: still 0.15
    st.intake.estimator(1, "leaf2->leaf1")
    st.intake.input_since["leaf2->leaf1"] = NOW + 0.05  # an earlier input: stepped first
    steps = st.pair_steps
    futures = st.submit(sched, NOW + 0.2, only_ready=True, budget_s=0.0)
    assert st.pair_steps == steps + 1 and st.pair_deferred == 1
    assert st.stepped["leaf2->leaf1"].inputs == 1  # the longest waiting
    assert st.intake.input_since == {"leaf1->leaf3": NOW + 0.15}  # the deferred pair's wait
    assert set(futures) <= {"leaf2"}  # only the stepped pair's ingress can have writes
    st.submit(sched, NOW + 0.3, only_ready=True, budget_s=0.0)  # the deferred pair now
    assert st.pair_steps == steps + 2 and st.pair_deferred == 1
    assert st.stepped["leaf1->leaf3"].inputs == 2 and st.intake.input_since == {}
    assert len(st.refresh_ms) == 2
    assert list(st.refresh_ms) == pytest.approx([150.0, 150.0])  # 0.2 - 0.05, 0.3 - 0.15
    st.submit(sched, NOW + 0.4, only_ready=True, budget_s=0.0)
    assert st.pair_steps == steps + 2  # nothing due


def test_after_an_operators_step_of_every_pair_the_loop_still_sees_views_age():
    """An operator's request steps every pair outside the loop's queue; a pair whose path
    then dies without input is still stepped when its time comes."""
    st = fabric_stepper()
    sched = fabric_scheduler(st)
    st.submit(sched, NOW, only_ready=True)
    st.intake.ingest_report(leaf1_to_leaf3_report(1, NOW + 0.15))
    st.submit(sched, NOW + 0.2)  # the operator's: every pair, their timers anew
    steps = st.pair_steps
    dead_at = NOW + 0.15 + EstimatorSettings().dead_after_s
    assert st.submit(sched, dead_at - 0.01, only_ready=True) == {}
    futures = st.submit(sched, dead_at, only_ready=True)
    assert st.pair_steps == steps + 1 and list(futures) == ["leaf1"]
