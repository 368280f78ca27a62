"""scheduling/pins.py: a subflow's path becomes a pin per direction on the edge that has
the path; what changed since the last send; idle subflows are dropped."""

from __future__ import annotations

from types import SimpleNamespace

from mpsched.controller.model.paths import PathState
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    Match,
    TrafficClass,
)
from mpsched.controller.scheduling.mptcp import Flow, MptcpReport
from mpsched.controller.scheduling.pins import PinManager, class_of
from tests.unit.controller.fakes import two_edges
from tests.unit.controller.helpers import pipeline, scheduler

NOW = 1_000.0
FLOW = Flow("10.0.1.1", 40000, "10.0.2.1", 5201)


def states(switch: str) -> list[PathState]:
    return [PathState(1, alive=True), PathState(2, alive=True)]


def tracked() -> PinManager:
    pins = PinManager(two_edges(), pipeline())
    report = MptcpReport("capable", FLOW.reversed(), NOW, tcp_flags=0x12, key_a=7, switch="s2")
    assert pins.tracker.ingest(report)
    return pins


def test_the_host_switch_is_the_edge_of_the_subnet():
    pins = PinManager(two_edges(), pipeline())
    assert pins.host_switch("10.0.2.9") == "s2"
    assert pins.host_switch("192.0.2.1") == "s1"  # no subnet holds it: the first switch


def test_a_flow_falls_into_the_highest_priority_class_covering_it():
    web = TrafficClass(3, "web", priority=1, match=Match(dst_port=(5000, 5300)))
    iperf = TrafficClass(4, "iperf", priority=2, match=Match(dst_port=(5201, 5201)))
    default = TrafficClass(DEFAULT_CLASS_ID, "default")
    assert class_of(FLOW, [default, web, iperf]) == 4
    assert class_of(FLOW.reversed(), [default, web, iperf]) == DEFAULT_CLASS_ID


def test_each_edge_pins_both_directions_of_a_subflow():
    pins = tracked()
    desired = pins.desired(scheduler(), states, NOW)
    keys = {("10.0.1.1", "10.0.2.1", 40000, 5201), ("10.0.2.1", "10.0.1.1", 5201, 40000)}
    assert set(desired["s1"]) == keys and set(desired["s2"]) == keys
    assert len(set(desired["s1"].values())) == 1  # one path for the subflow


def test_no_pins_without_steering():
    sched = scheduler()
    sched.set_params({"mptcp": {"steering": False}})
    assert tracked().desired(sched, states, NOW) == {"s1": {}, "s2": {}}


def test_changes_are_the_difference_with_what_was_sent():
    pins = tracked()
    desired = pins.desired(scheduler(), states, NOW)["s1"]
    new, changed, gone = pins.changes("s1", desired)
    assert (len(new), changed, gone) == (2, [], [])
    assert pins.changes("s1", desired) == ([], [], [])  # recorded as sent
    moved = {k: 3 - p for k, p in desired.items()}
    assert [len(x) for x in pins.changes("s1", moved)] == [0, 2, 0]
    assert [len(x) for x in pins.changes("s1", {})] == [0, 0, 2]


def test_install_records_every_pin_as_sent():
    pins = tracked()
    desired = pins.desired(scheduler(), states, NOW)["s2"]
    assert len(pins.install("s2", desired)) == 2
    assert pins.changes("s2", desired) == ([], [], [])


def test_a_subflow_whose_count_does_not_move_is_dropped_after_the_idle_timeout():
    pins = tracked()
    pins.desired(scheduler(), states, NOW)
    match = {"src_addr": 0x0A000101, "dst_addr": 0x0A000201, "src_port": 40000,
             "dst_port": 5201}
    read = [(match, SimpleNamespace(packets=10))]
    assert pins.count([read], NOW + 1, idle_s=5) == []
    assert pins.count([read], NOW + 3, idle_s=5) == []  # count did not move, not idle long
    assert pins.count([read], NOW + 7, idle_s=5) == [FLOW]
    assert pins.tracker.connections == {}
    assert pins.desired(scheduler(), states, NOW + 8) == {"s1": {}, "s2": {}}


def test_a_fabric_pins_each_direction_on_the_edge_that_sends_it():
    """leaf1's host opens a subflow to leaf3's: leaf1 pins the forward direction, leaf3 the
    reverse, each towards its pair's path of that id; nothing on leaf2 or the spines."""
    from mpsched.controller.fabric.routes import Routes
    from tests.unit.controller.fakes import fabric

    net = fabric()
    routes = Routes(net)
    pins = PinManager(net, pipeline(), routes)
    flow = Flow("10.0.1.1", 40000, "10.0.3.1", 5201)
    assert pins.unit_of(flow) == "leaf1->leaf3" and pins.unit_of(flow.reversed()) == "leaf3->leaf1"
    report = MptcpReport("capable", flow.reversed(), NOW, tcp_flags=0x12, key_a=7, switch="leaf3")
    assert pins.tracker.ingest(report)
    asked = []

    def pair_states(unit: str) -> list[PathState]:
        asked.append(unit)
        return [PathState(1, alive=False), PathState(2, alive=True)]

    desired = pins.desired(scheduler(), pair_states, NOW)
    assert asked == ["leaf1->leaf3"]
    assert desired["leaf1"] == {("10.0.1.1", "10.0.3.1", 40000, 5201): 2}
    assert desired["leaf3"] == {("10.0.3.1", "10.0.1.1", 5201, 40000): 2}
    assert desired["leaf2"] == desired["spine1"] == {}
    routes.set_link("leaf3-spine2", up=False)  # path 2 of both directions is gone
    assert pins._pin_places(flow, 2) == []


def test_in_a_fabric_a_join_avoids_the_path_sharing_a_link_with_its_connection():
    """Pair a->c of fakes.SHARED: paths 2 and 3 share link a-x. The initial subflow takes
    path 2 (cheapest); the join takes path 1, disjoint, though path 3 costs less."""
    from mpsched.controller.fabric.routes import Routes
    from tests.unit.controller.fakes import SHARED, fabric
    from tests.unit.controller.scheduling.helpers import SERVER_KEY, SERVER_TOKEN

    net = fabric(SHARED)
    pins = PinManager(net, pipeline(), Routes(net))
    flow = Flow("10.0.1.1", 40000, "10.0.2.1", 5201)
    join = Flow("10.0.1.9", 40001, "10.0.2.1", 5201)
    assert pins.overlaps_for(flow) == {(2, 3): 0.5, (3, 2): 0.5}
    capable = MptcpReport("capable", flow.reversed(), NOW, tcp_flags=0x12, key_a=SERVER_KEY,
                          switch="c")
    assert pins.tracker.ingest(capable)
    assert pins.tracker.ingest(MptcpReport("join", join, NOW + 0.1, token=SERVER_TOKEN,
                                           addr_id=2, switch="a"))
    costs = {1: 90_000.0, 2: 1_000.0, 3: 5_000.0}

    def pair_states(unit: str) -> list[PathState]:
        return [PathState(p, alive=True) for p in costs]

    pins.costs_for = lambda f, sched, states: dict(costs)  # type: ignore[method-assign]
    desired = pins.desired(scheduler(), pair_states, NOW + 1)
    assert desired["a"] == {("10.0.1.1", "10.0.2.1", 40000, 5201): 2,
                            ("10.0.1.9", "10.0.2.1", 40001, 5201): 1}
