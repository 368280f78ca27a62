"""stepper.py: a scheduler step per switch becomes one job per switch with only what
changed; class table swaps; pins pushed to ready switches."""

from __future__ import annotations

from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    Match,
    TrafficClass,
)
from mpsched.controller.scheduling.mptcp import Flow, MptcpReport
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.stepper import Stepper
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
