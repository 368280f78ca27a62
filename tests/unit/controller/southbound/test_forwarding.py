"""southbound/forwarding.py: an edge switch's forwarding state from the network
description."""

from __future__ import annotations

from collections import Counter

from mpsched.controller.southbound.forwarding import forwarding_entries
from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.p4rt.pipeline import TABLE_LIVENESS_CONFIG, TABLE_NEXTHOP, TABLE_ROUTE
from tests.unit.controller.fakes import two_edges
from tests.unit.controller.helpers import pipeline


def test_routes_next_hops_and_telemetry_settings_per_path():
    net = two_edges()
    entries = forwarding_entries(pipeline(), net, net.switches[0])
    tables = Counter(e.table for e in entries)
    assert tables[TABLE_ROUTE] == 1  # the remote subnet, over the weighted paths (no hosts)
    assert tables[TABLE_NEXTHOP] == 2 and tables[TABLE_LIVENESS_CONFIG] == 2


def test_the_telemetry_settings_are_written():
    net = two_edges()
    pl = pipeline()
    slow = forwarding_entries(pl, net, net.switches[0], TelemetryConfig(dead_after_us=123_000))
    assert pl.liveness_config(1, 123_000) in slow
    assert pl.liveness_config(1, 123_000) not in forwarding_entries(pl, net, net.switches[0])
