"""southbound/forwarding.py: an edge switch's forwarding state from the network
description."""

from __future__ import annotations

from collections import Counter

from mpsched.controller.southbound.forwarding import copy_sessions, forwarding_entries
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
    assert pl.liveness_config(2, 1, 123_000) in slow
    assert pl.liveness_config(2, 1, 123_000) not in forwarding_entries(pl, net, net.switches[0])


def test_a_fabric_switchs_entries_from_its_next_hops():
    from mpsched.controller.southbound.forwarding import fabric_entries
    from tests.unit.controller.fakes import fabric

    net, pl = fabric(), pipeline()
    hops = {(1, 3, 1): 3, (2, 3, 1): 3, (3, 1, 1): 1}
    # a transit switch: its transit_nexthop entries only
    assert fabric_entries(pl, net, net.switch("spine1"), hops, []) == [
        pl.transit_nexthop(1, 3, 1, 3), pl.transit_nexthop(2, 3, 1, 3),
        pl.transit_nexthop(3, 1, 1, 1)]
    # an edge: its own pairs' paths by path_nexthop, the others' in transit
    leaf1 = fabric_entries(pl, net, net.switch("leaf1"), hops, [2])
    assert pl.path_nexthop(3, 1, 3) in leaf1 and pl.transit_nexthop(2, 3, 1, 3) in leaf1
    assert pl.path_ingress(2) in leaf1 and pl.switch_config(1) in leaf1
    assert [e.params["dst_edge"] for e in leaf1 if e.table == TABLE_ROUTE and
            "dst_edge" in e.params] == [2, 3]


def test_the_peers_and_path_ids_of_a_switch():
    from mpsched.controller.southbound.forwarding import peers_and_paths
    from tests.unit.controller.fakes import fabric

    net = two_edges()
    assert peers_and_paths(net, net.switches[1]) == ([1], [1, 2])
    net = fabric()
    assert peers_and_paths(net, net.switch("leaf3")) == ([1, 2], [1, 2])
    assert peers_and_paths(net, net.switch("spine2")) == ([], [])


def test_each_path_next_hop_has_its_clone_session():
    """A SYN's copy onto path p towards edge e leaves where path p towards e does: session
    edge_path_index(e, p), the port of its path_nexthop entry; nothing else has a session."""
    net, pl = two_edges(), pipeline()
    sw = net.switches[0]
    entries = forwarding_entries(pl, net, sw)
    sessions = copy_sessions(pl, entries)
    peer = net.peer_edge(sw)
    assert {s.session_id: s.port for s in sessions} == {
        pl.edge_path_index(peer, p.id): p.port for p in sw.paths}
    assert len(sessions) == 2
    assert copy_sessions(pl, [e for e in entries if e.table != TABLE_NEXTHOP]) == []


def test_each_peers_liveness_carries_its_pairs_regime():
    """An active pair's paths die after dead_after_us, an idle pair's after as many idle
    probe intervals (1 s at the defaults)."""
    from mpsched.controller.southbound.forwarding import liveness_entries

    pl, tc = pipeline(), TelemetryConfig()
    got = liveness_entries(pl, [1, 2], [2, 3], tc, idle_peers={3})
    assert got == [pl.liveness_config(2, 1, 50_000), pl.liveness_config(2, 2, 50_000),
                   pl.liveness_config(3, 1, 1_000_000), pl.liveness_config(3, 2, 1_000_000)]


def test_a_regime_change_rewrites_the_pairs_liveness_on_both_edges():
    from mpsched.controller.southbound.forwarding import regime_entries
    from tests.unit.controller.fakes import fabric

    net, pl, tc = fabric(), pipeline(), TelemetryConfig()
    got = regime_entries(pl, net, [1, 2], tc, fast=[(1, 3)], idle=[(2, 3)])
    assert got == {
        "leaf1": [pl.liveness_config(3, p, 50_000) for p in (1, 2)],
        "leaf3": [pl.liveness_config(1, p, 50_000) for p in (1, 2)]
        + [pl.liveness_config(2, p, 1_000_000) for p in (1, 2)],
        "leaf2": [pl.liveness_config(3, p, 1_000_000) for p in (1, 2)],
    }
    assert regime_entries(pl, net, [1, 2], tc, fast=[], idle=[]) == {}


def test_an_edge_whose_dead_afters_are_one_gets_no_regime_entries():
    """Under a probe cap that stretches the probe interval to the idle one both regimes
    have one dead_after: nothing to write."""
    from mpsched.controller.southbound.forwarding import regime_entries
    from tests.unit.controller.fakes import fabric

    capped = TelemetryConfig(probe_max_pps=10)  # 4 targets: every 400 ms, past 200 ms
    assert regime_entries(pipeline(), fabric(), [1, 2], capped, [(1, 3)], [(2, 3)]) == {}
