"""routes.py: the routing of a fabric in one manager: units per switch (two edges) or per
ordered pair (a fabric), each switch's forwarding, re-routing a link down and up."""

from __future__ import annotations

from collections import Counter

import pytest

from mpsched.controller.fabric.routes import Routes, entry_changes, fabric_ports, pair_key
from mpsched.controller.southbound.forwarding import forwarding_entries
from mpsched.p4rt.pipeline import (
    TABLE_LIVENESS_CONFIG,
    TABLE_NEXTHOP,
    TABLE_PATH_INGRESS,
    TABLE_ROUTE,
    TABLE_SWITCH_CONFIG,
    TABLE_TRANSIT,
)
from tests.unit.controller.fakes import LINE, SHARED, fabric, two_edges
from tests.unit.controller.helpers import pipeline


def test_two_edges_keep_one_unit_per_switch_named_by_the_switch():
    net = two_edges()
    routes = Routes(net)
    assert not routes.is_fabric
    assert [(u.key, u.ingress, u.egress, u.dst_edge) for u in routes.units()] == [
        ("s1", "s1", "s2", 2), ("s2", "s2", "s1", 1)]
    assert routes.units_at("s1")[0].direction == "s1->s2"
    assert routes.path_ids(routes.unit("s2")) == [1, 2]
    pl = pipeline()
    assert routes.forwarding(pl, net.switches[0]) == forwarding_entries(pl, net, net.switches[0])


def test_a_fabric_has_one_unit_per_ordered_pair_of_edges():
    routes = Routes(fabric())
    keys = [u.key for u in routes.units()]
    assert keys == ["leaf1->leaf2", "leaf1->leaf3", "leaf2->leaf1", "leaf2->leaf3",
                    "leaf3->leaf1", "leaf3->leaf2"]
    assert routes.units_at("spine1") == []
    unit = routes.unit(pair_key("leaf2", "leaf3"))
    assert (unit.ingress, unit.egress, unit.dst_edge, unit.direction) == (
        "leaf2", "leaf3", 3, "leaf2->leaf3")
    assert routes.path_ids(unit) == [1, 2]
    assert routes.rates(unit) == {1: 10, 2: 10}
    assert [p.switches for p in routes.pair_paths(unit).values()] == [
        ("leaf2", "spine1", "leaf3"), ("leaf2", "spine2", "leaf3")]
    with pytest.raises(KeyError):
        routes.unit("leaf1->spine1")


def test_a_leaf_admits_tags_from_its_spine_ports():
    routes = Routes(fabric())
    assert routes.fabric is not None
    # leaf1: host 1 on port 1, spine1 on port 2, spine2 on port 3
    assert fabric_ports(routes.ports, "leaf1") == [2, 3]


def test_leaf_and_spine_forwarding():
    net, pl = fabric(), pipeline()
    routes = Routes(net)
    leaf1 = routes.forwarding(pl, net.switch("leaf1"))
    tables = Counter(e.table for e in leaf1)
    assert tables[TABLE_SWITCH_CONFIG] == 1 and tables[TABLE_TRANSIT] == 0
    assert tables[TABLE_ROUTE] == 1 + 2  # its host; the subnets of leaf2 and leaf3
    assert pl.switch_config(1) in leaf1
    assert pl.route_to_paths(net.subnets_of(3)[0], 3) in leaf1
    assert [pl.path_nexthop(d, p, 1 + p) for d in (2, 3) for p in (1, 2)] == [
        e for e in leaf1 if e.table == TABLE_NEXTHOP]
    assert [e for e in leaf1 if e.table == TABLE_PATH_INGRESS] == [
        pl.path_ingress(2), pl.path_ingress(3)]
    live = pl.liveness_config(2, 1, 1)
    assert [e.match for e in leaf1 if e.table == live.table] == [
        {"peer_edge": d, "path_id": p} for d in (2, 3) for p in (1, 2)]
    spine2 = routes.forwarding(pl, net.switch("spine2"))
    # every pair's path 2 crosses spine2: to leaf d on port d
    assert spine2 == [pl.transit_nexthop(s, d, 2, d) for s in (1, 2, 3) for d in (1, 2, 3)
                      if s != d]


def test_an_edge_on_another_pairs_path_forwards_it_in_transit():
    net, pl = fabric(LINE), pipeline()
    routes = Routes(net)
    b = routes.forwarding(pl, net.switch("b"))
    # a -> c's path 1 is a b c: b sends it on to c (port 3); c -> a's path 1 back to a
    assert pl.transit_nexthop(1, 3, 1, 3) in b and pl.transit_nexthop(3, 1, 1, 2) in b
    assert pl.path_nexthop(1, 1, 2) in b and pl.switch_config(2) in b
    t = routes.forwarding(pl, net.switch("t"))
    assert all(e.table == TABLE_TRANSIT for e in t) and len(t) == 6


def test_entry_changes_write_the_new_and_changed_and_delete_the_gone():
    pl = pipeline()
    old = [pl.path_nexthop(2, 1, 2), pl.path_nexthop(2, 2, 3), pl.transit_nexthop(1, 3, 1, 4)]
    new = [pl.path_nexthop(2, 1, 2), pl.path_nexthop(2, 2, 4), pl.transit_nexthop(1, 3, 2, 4)]
    write, gone = entry_changes(old, new)
    assert write == [pl.path_nexthop(2, 2, 4), pl.transit_nexthop(1, 3, 2, 4)]
    assert gone == [pl.transit_nexthop(1, 3, 1, 4)]


def test_a_link_down_reroutes_only_the_pairs_crossing_it_and_up_restores_them():
    net, pl = fabric(), pipeline()
    routes = Routes(net)
    before = routes.all_forwarding(pl)
    changed = routes.set_link("leaf1-spine2", up=False)
    assert [u.key for u in changed] == ["leaf1->leaf2", "leaf1->leaf3", "leaf2->leaf1",
                                        "leaf3->leaf1"]
    assert routes.path_ids(routes.unit("leaf1->leaf2")) == [1]  # no detour in a leaf-spine
    assert routes.path_ids(routes.unit("leaf2->leaf3")) == [1, 2]
    assert ("leaf1-spine2", "leaf1", "spine2", False) in routes.links()
    changes = routes.forwarding_changes(pl, before)
    assert sorted(changes) == ["leaf1", "leaf2", "leaf3", "spine2"]
    write, gone = changes["leaf1"]
    assert write == [] and gone == [pl.path_nexthop(2, 2, 3), pl.path_nexthop(3, 2, 3)]
    assert routes.set_link("leaf1-spine2", up=False) == []  # already down
    routes.set_link("leaf1-spine2", up=True)
    assert routes.all_forwarding(pl) == before
    with pytest.raises(KeyError):
        routes.set_link("leaf9-spine1", up=False)


def test_a_pairs_rates_follow_its_paths_after_a_reroute():
    """The rates are computed once per routing (every control step reads them)."""
    routes = Routes(fabric())
    unit = routes.unit(pair_key("leaf1", "leaf2"))
    rates = routes.rates(unit)
    rates[9] = 1.0  # the caller's copy
    assert routes.rates(unit) == {1: 10, 2: 10}
    routes.set_link("leaf1-spine2", up=False)
    assert routes.rates(unit) == {1: 10}
    routes.set_link("leaf1-spine2", up=True)
    assert routes.rates(unit) == {1: 10, 2: 10}


def test_a_spines_links_go_down_together_in_one_reroute():
    """A spine's failure: every link of it down at once (Routes.set_links), one re-route."""
    net, pl = fabric(), pipeline()
    routes = Routes(net)
    before = routes.all_forwarding(pl)
    spine2 = ["leaf1-spine2", "leaf2-spine2", "leaf3-spine2"]
    changed = routes.set_links(spine2, up=False)
    assert len(changed) == 6  # every ordered pair crossed spine2
    assert all(routes.path_ids(u) == [1] for u in routes.units())
    assert routes.links_down == set(spine2)
    write, gone = routes.forwarding_changes(pl, before)["spine2"]
    assert write == [] and gone  # spine2 forwards nothing any more
    # one link back alone restores no path: the others of spine2 are still down
    assert routes.set_links(spine2[:1], up=True) == []
    assert routes.links_down == set(spine2[1:])
    routes.set_links(spine2, up=True)
    assert routes.all_forwarding(pl) == before
    with pytest.raises(KeyError):
        routes.set_links(["leaf1-spine2", "leaf9-spine1"], up=False)
    with pytest.raises(KeyError):
        routes.set_links([], up=False)
    assert routes.links_down == set()  # a refused request changes nothing


# 3 leaves x 3 spines: spine2's failure takes path id 2 from every pair, the other spines'
# next hops stay: only the edges' telemetry entries of the vanished id change there
THREE_SPINES = {"leaf_spine": {"leaves": 3, "spines": 3, "hosts_per_leaf": 1,
                               "link": {"rate_mbps": 10, "delay_ms": 1}}}


@pytest.mark.parametrize("section", [None, LINE, THREE_SPINES])
def test_set_links_changes_compares_only_the_switches_whose_hops_changed(section):
    """The same changes as comparing every switch's entries (forwarding_changes), without
    computing the untouched switches'."""
    pl = pipeline()
    names = ["b-c"] if section is LINE else ["leaf1-spine2", "leaf2-spine2", "leaf3-spine2"]
    oracle = Routes(fabric(section))
    before = oracle.all_forwarding(pl)
    oracle.set_links(names, up=False)
    routes = Routes(fabric(section))
    changes = routes.set_links_changes(pl, names, up=False)
    assert changes == oracle.forwarding_changes(pl, before) and changes
    assert routes.links_down == set(names)
    back = routes.set_links_changes(pl, names, up=True)
    assert {sw: (gone, write) for sw, (write, gone) in back.items()} == changes


# Edges a and c joined by three transit switches, two paths a pair: a failed link's path is
# replaced by the third and watched under a spare id (the edges' telemetry ids change)
SPARE = {"graph": {
    "paths_per_pair": 2,
    "switches": [{"name": "a", "role": "edge"}, {"name": "c", "role": "edge"},
                 *({"name": n, "role": "transit"} for n in ("t1", "t2", "t3"))],
    "link": {"rate_mbps": 10, "delay_ms": 1},
    "links": [{"a": "a", "b": t} for t in ("t1", "t2", "t3")]
    + [{"a": t, "b": "c"} for t in ("t1", "t2", "t3")],
}}


@pytest.mark.parametrize("section", [None, LINE, SHARED, THREE_SPINES, SPARE])
def test_a_sequence_of_failures_changes_what_comparing_every_entry_changes(section):
    """Links down, failed (their paths watched under spare ids: the edges' telemetry ids
    change) and back, one after the other: each step's changes are those of comparing every
    switch's entries before and after it (forwarding_changes)."""
    pl = pipeline()
    routes = Routes(fabric(section), max_paths=pl.max_paths)
    links = [name for name, *_ in routes.links()]
    steps = [("failed", links[:1]), ("down", links[:1]), ("failed", links[1:3]),
             ("down", links[:2]),
             ("failed", []), ("up", links[:2]), ("failed", links[-1:]), ("failed", [])]
    seen = 0
    for what, names in steps:
        before = routes.all_forwarding(pl)
        if what == "failed":
            changes = routes.set_links_failed_changes(pl, names)
        else:
            changes = routes.set_links_changes(pl, names, up=what == "up")
        assert changes == routes.forwarding_changes(pl, before)
        seen += bool(changes)
    assert seen >= 2


def test_a_graph_path_cut_vanishes_and_the_others_keep_their_ids():
    routes = Routes(fabric(LINE))
    unit = routes.unit("a->c")
    path2 = routes.pair_paths(unit)[2]
    assert [u.key for u in routes.set_link("b-c", up=False)] == [
        "a->b", "a->c", "b->a", "b->c", "c->a", "c->b"]
    assert routes.pair_paths(unit) == {2: path2}  # no other path left: 1 is out of service
    assert routes.path_ids(routes.unit("b->c")) == [2]  # b a t c (path 2) is left


def test_the_probe_cap_stretches_each_edges_liveness():
    """Under a probe cap an edge that probes more (destination, path) pairs than the cap
    allows installs a longer dead_after (TelemetryConfig.for_targets); its probe targets are
    every path id to every other edge, none for a transit switch."""
    from mpsched.controller.telemetry.config import TelemetryConfig

    net, pl = fabric(), pipeline()
    assert net.probe_targets(net.switch("leaf2")) == [(1, 1), (1, 2), (3, 1), (3, 2)]
    assert net.probe_targets(net.switch("spine1")) == []
    # 4 targets every 10 ms = 400/s; a cap of 200/s: every 20 ms, dead after 100 ms
    entries = Routes(net).forwarding(pl, net.switch("leaf2"), TelemetryConfig(probe_max_pps=200))
    assert pl.liveness_config(1, 1, 100_000) in entries
    assert pl.liveness_config(1, 1, 50_000) not in entries


def test_overlaps_of_a_pairs_paths_are_the_shared_links_against_their_bottlenecks():
    routes = Routes(fabric(SHARED))
    unit = routes.unit("a->c")
    assert [p.switches for p in routes.pair_paths(unit).values()] == [
        ("a", "t3", "c"), ("a", "x", "t1", "c"), ("a", "x", "t2", "c")]
    assert routes.overlaps(unit) == {(2, 3): 0.5, (3, 2): 0.5}
    # a leaf-spine's paths of one pair are link-disjoint; so are two edges' paths
    assert Routes(fabric()).overlaps(Routes(fabric()).unit("leaf1->leaf2")) == {}
    assert Routes(two_edges()).overlaps(Routes(two_edges()).unit("s1")) == {}
    # a re-route recomputes them: with x-t2 down, path 3 is gone and so is the overlap
    routes.set_link("x-t2", up=False)
    assert routes.overlaps(unit) == {}


def test_an_edges_liveness_follows_each_pairs_regime_when_programmed():
    """With regimes every pair starts idle: its liveness entries carry the idle dead_after
    (1 s); a pair with the fast dead_after acknowledged gets the fast one on both edges."""
    from mpsched.controller.telemetry.regimes import ProbeRegimes, Transition

    net, pl = fabric(), pipeline()
    regimes = ProbeRegimes(enabled=True)
    routes = Routes(net, regimes=regimes)

    def dead_after(switch: str) -> dict[tuple[int, int], int]:
        return {(e.match["peer_edge"], e.match["path_id"]): e.params["dead_after_us"]
                for e in routes.forwarding(pl, net.switch(switch))
                if e.table == TABLE_LIVENESS_CONFIG}

    assert set(dead_after("leaf1").values()) == {1_000_000}
    regimes.update(Transition(probe_fast=frozenset({(1, 3)})), (), 0.0)
    assert set(dead_after("leaf1").values()) == {1_000_000}  # probed fast, not settled
    regimes.update(Transition(live_fast=frozenset({(1, 3)})), {(1, 3)}, 0.1)
    assert dead_after("leaf1") == {(2, 1): 1_000_000, (2, 2): 1_000_000,
                                   (3, 1): 50_000, (3, 2): 50_000}
    assert dead_after("leaf3")[(1, 2)] == 50_000 and dead_after("leaf3")[(2, 2)] == 1_000_000
    routes = Routes(net)  # without regimes: every pair active
    assert set(dead_after("leaf1").values()) == {50_000}
