"""telemetry/intake_views.py: path states and unit views for the scheduler, each read for
its own direction; what changed since a pair's last step; the paths' histories."""

from __future__ import annotations

from mpsched.controller.model.reports import PathReport
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from tests.unit.controller.telemetry.test_intake import (
    NOW,
    intake,
    path_report,
)


def test_path_states_without_telemetry_are_alive_with_the_configured_rate():
    states = intake().path_states("s1", NOW)
    assert [(s.path_id, s.alive, s.capacity_mbps, s.srtt_ms) for s in states] == [
        (1, True, 10, None),
        (2, True, None, None),
    ]


def test_switch_view_reads_its_outgoing_direction_only():
    i = intake()
    i.ingest_report(path_report("s2", 1, 1, NOW))  # s1 -> s2 traffic
    view = i.switch_view("s1", NOW)
    assert view.switch == "s1" and set(view.flow_ooo) == {1}
    assert i.switch_view("s2", NOW).flow_ooo == {}


def test_a_fabric_pairs_view_reads_its_own_directions_estimators_only():
    """Each direction's estimators are indexed (by_direction): a pair's view reads those of
    its direction, not those of the other pairs towards the same edge."""
    from mpsched.controller.fabric.routes import pair_key
    from tests.unit.controller.fakes import fabric

    i = TelemetryIntake(fabric(), EstimatorSettings(), TelemetryConfig())
    rx = int(NOW * 1e6)
    i.ingest_report(PathReport("leaf2", 1, 1, rx - 10_000, rx, 1, 1500, 0, 0, 3, NOW, 1))
    i.ingest_report(PathReport("leaf2", 2, 1, rx - 10_000, rx, 1, 1500, 0, 0, 5, NOW, 3))
    assert {d: set(e) for d, e in i.by_direction.items()} == {
        "leaf1->leaf2": {1}, "leaf3->leaf2": {2}}
    view = i.unit_view(i.routes.unit(pair_key("leaf1", "leaf2")), NOW)
    assert set(view.flow_ooo) == {1}
    assert set(i.unit_view(i.routes.unit(pair_key("leaf3", "leaf2")), NOW).flow_ooo) == {2}
    assert i.unit_view(i.routes.unit(pair_key("leaf1", "leaf3")), NOW).flow_ooo == {}


def test_history_since_keeps_only_newer_snapshots():
    i = intake()
    i.ingest_report(path_report("s2", 1, 1, NOW))
    i.record(NOW)
    i.record(NOW + 1)
    assert [s["t"] for s in i.history_since(NOW)["1"]["s1->s2"]] == [NOW + 1]
    assert [s["t"] for s in i.histories(1)["s1->s2"]] == [NOW, NOW + 1]
    assert set(i.snapshots(1, NOW)) == {"s1->s2"} and i.snapshots(2, NOW) == {}


def test_a_directions_inputs_are_counted_and_taken_once():
    i = intake()
    unit = i.routes.units_at("s1")[0]
    assert (i.unit_inputs(unit), i.take_input_since(unit)) == (0, None)
    i.ingest_report(path_report("s2", 1, 1, NOW))
    i.ingest_report(path_report("s2", 1, 2, NOW + 0.1))
    assert i.unit_inputs(unit) == 2
    assert i.take_dirty() == {"s1->s2"} and i.take_dirty() == set()
    assert i.take_input_since(unit) is not None and i.take_input_since(unit) is None


def test_a_unit_without_estimators_changes_only_with_an_input():
    i = intake()
    assert i.changes_at(i.routes.units_at("s1")[0], NOW, 1.0) == float("inf")
