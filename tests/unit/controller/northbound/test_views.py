"""northbound/views.py: typed views serialise to the JSON the API has always served."""

from __future__ import annotations

import json

from mpsched.controller.model.decision import CaCost
from mpsched.controller.model.placement import Placement
from mpsched.controller.northbound import views
from mpsched.controller.scheduling.classes import ClassPolicy, Match, TrafficClass
from mpsched.controller.scheduling.scheduler import GlobalParams
from mpsched.controller.telemetry.stats import PathStats, Sample
from tests.unit.controller.helpers import scheduler


def test_a_placement_has_ca_only_in_mode_ca():
    hashed = views.placement_view(Placement(((1, 3), (2, 0)), "hash", 0))
    assert views.to_json(hashed) == {"weights": {"1": 3, "2": 0}, "mode": "hash",
                                     "flowlet_gap_us": 0, "syn_copy": False}
    ca = views.to_json(views.placement_view(Placement(((1, 3),), "ca", 0, ca=CaCost(),
                                                      syn_copy=True)))
    assert list(ca) == ["weights", "mode", "flowlet_gap_us", "syn_copy", "ca"]
    assert ca["syn_copy"] is True
    assert views.placement_view(None) is None


def test_a_class_view_keeps_nulls_and_the_key_order():
    c = TrafficClass(5, "voip", priority=2, match=Match(dscp=46), policy=ClassPolicy("minrtt"))
    out = views.to_json(views.class_view(c, {"s1": None}))
    assert list(out) == ["id", "name", "priority", "match", "policy", "qos_target", "placement"]
    assert out["qos_target"] is None and out["placement"] == {"s1": None}
    assert out["match"] == {"dscp": 46} and out["policy"]["name"] == "minrtt"


def test_a_path_view_keeps_ints_as_ints():
    stats = PathStats(1)
    out = views.to_json(views.path_view(1, 3, False, 10, stats, {}))
    assert out == {
        "id": 1, "weight": 3, "admin": "down", "configured_rate_mbps": 10,
        "packets": 0, "bytes": 0, "rate_bps": 0, "by_switch": {}, "telemetry": {},
    }
    assert json.dumps(out["configured_rate_mbps"]) == "10"
    stats.update("s1", Sample(1.0, 5, 500, 0, 0))
    by = views.to_json(views.path_view(1, 3, True, None, stats, {}))["by_switch"]["s1"]
    assert by["tx_packets"] == 5 and by["updated"] == 1.0


def test_params_serialise_their_schema_under_schema():
    out = views.to_json(views.params_view(GlobalParams()))
    assert list(out) == ["control_period_ms", "step_budget_pct", "cpu_budget_pct", "lm3",
                         "policies", "mptcp", "schema"]
    assert out["step_budget_pct"] == 25.0
    assert out["cpu_budget_pct"] == 50.0
    assert views.to_json(views.params_view(GlobalParams(cpu_budget_pct=None)))[
        "cpu_budget_pct"] is None  # no budget: kept as null


def test_the_adaptive_view_has_one_entry_per_switch():
    sched = scheduler("adaptive")
    c = sched.classes[0]
    out = views.to_json(views.adaptive_view(c, sched))
    assert out["class_id"] == 0 and set(out["switches"]) == {"s1", "s2"}


def test_to_json_passes_plain_data_and_lists_of_views():
    assert views.to_json({"error": "x", "field": None}) == {"error": "x", "field": None}
    stats = views.LoopStats(iterations=1, writes=0, latency_ms_p50=None, latency_ms_p99=None,
                            control_period_ms=100.0)
    assert views.to_json([stats])[0]["latency_ms_p50"] is None
