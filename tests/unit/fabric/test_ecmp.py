"""Plain ECMP on a fabric (src/mpsched/fabric/ecmp.py): each switch's groups over its
equal-cost shortest paths, and the plain ECMP program's entries derived from them."""

from __future__ import annotations

import itertools

import pytest

from mpsched import addressing as ap
from mpsched.fabric.ecmp import ecmp_groups, fabric_entries
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import EDGE, Fabric, Link, Switch
from mpsched.fabric.netdesc import describe
from mpsched.fabric.ports import port_map
from mpsched.netcfg import ConfigError, NetCfg, plan_edges
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.plain_ecmp import (
    ACTION_SET_NEXTHOP,
    ACTION_TO_EDGE,
    ACTION_TO_HOST,
    TABLE_NEXTHOP,
    TABLE_ROUTE,
    PlainEcmpPipeline,
)
from tests.plain_p4info import synthetic_plain_ecmp_p4info
from tests.unit.fabric.helpers import build, example, leaf_spine

# Edges a, b, c and transit t1..t4: a reaches b in two hops over t1 or t4 (and in three over
# t2, t3), c in two over t2; t1 reaches c over t3 only.
GRAPH = {"graph": {
    "switches": [{"name": n, "role": "edge"} for n in ("a", "b", "c")]
    + [{"name": n, "role": "transit"} for n in ("t1", "t2", "t3", "t4")],
    "link": {"rate_mbps": 10, "delay_ms": 1},
    "links": [{"a": x, "b": y} for x, y in (
        ("a", "t1"), ("t1", "b"), ("a", "t2"), ("t2", "t3"), ("t3", "b"), ("t2", "c"),
        ("t3", "c"), ("t1", "t3"), ("a", "t4"), ("t4", "b"))],
}}


def net_of(section: dict) -> NetCfg:
    return describe(section, parse_fabric(section), lambda i: f"127.0.0.1:{9558 + i}")


def pipeline(**sizes: int) -> PlainEcmpPipeline:
    return PlainEcmpPipeline(P4Info(synthetic_plain_ecmp_p4info(**sizes)))


def test_a_leaf_hashes_over_every_spine_and_a_spine_goes_straight_down():
    groups = ecmp_groups(build(leaf_spine(4, 2)))
    assert groups["leaf1"] == {2: ("spine1", "spine2"), 3: ("spine1", "spine2"),
                               4: ("spine1", "spine2")}
    assert groups["spine2"] == {1: ("leaf1",), 2: ("leaf2",), 3: ("leaf3",), 4: ("leaf4",)}


def test_a_graph_groups_the_next_hops_of_equal_shortest_paths_only():
    groups = ecmp_groups(build(GRAPH))
    # a to b: two hops over t1 or t4 (t2 -> t3 -> b is three)
    assert groups["a"][2] == ("t1", "t4")
    assert groups["a"][3] == ("t2",)
    assert groups["t1"] == {1: ("a",), 2: ("b",), 3: ("t3",)}
    assert groups["b"][3] == ("t3",)
    assert groups["t2"][2] == ("t3",)  # two hops, as a -> t1 -> b would be three from t2


def test_every_group_member_is_one_hop_closer_on_the_wan():
    """On the WAN example, following any member of any group reaches the destination in
    the shortest number of hops from every switch."""
    fabric = build(example("wan"))
    groups = ecmp_groups(fabric)
    neighbours = {name: set(p.neighbours) for name, p in port_map(fabric).items()}

    def hops(here: str, dst: int) -> int:
        """Hops along the first member of each group (all members are equal-cost)."""
        count = 0
        while here != fabric.edge(dst).name:
            here = groups[here][dst][0]
            count += 1
            assert count <= len(fabric.switches)
        return count

    for name, by_edge in groups.items():
        for dst, members in by_edge.items():
            assert members and set(members) <= neighbours[name]
            lengths = {1 + hops(m, dst) for m in members}
            assert lengths == {hops(name, dst)}, (name, dst, members)
    assert set(groups["den"]) == {1, 2, 3, 4}  # a transit router reaches every edge


def test_an_unreachable_edge_has_no_group():
    """A fabric file must be connected (files.py); a model built otherwise may not be."""
    edges = tuple(Switch(n, EDGE, i, 1, (ap.subnet(i),)) for i, n in enumerate("abc", 1))
    fabric = Fabric("graph", edges, (Link("a-b", "a", "b"),))
    groups = ecmp_groups(fabric)
    assert groups == {"a": {2: ("b",)}, "b": {1: ("a",)}, "c": {}}


def test_a_leaf_delivers_to_its_hosts_and_hashes_over_its_uplinks():
    net = net_of(leaf_spine(3, 2, hosts_per_leaf=2))
    entries = fabric_entries(pipeline(), net)
    leaf1 = entries["leaf1"]
    hosts = [e for e in leaf1 if e.action == ACTION_TO_HOST]
    assert [(e.match["dst_addr"], dict(e.params)) for e in hosts] == [
        ((ap.host_ip(1, k), 32), {"port": k, "smac": ap.router_mac(1), "dmac": ap.host_mac(1, k)})
        for k in (1, 2)]
    routes = {e.match["dst_addr"]: dict(e.params) for e in leaf1 if e.action == ACTION_TO_EDGE}
    assert routes == {("10.0.2.0", 24): {"dst_edge": 2, "group_size": 2},
                      ("10.0.3.0", 24): {"dst_edge": 3, "group_size": 2}}
    hops = {(e.match["dst_edge"], e.match["member"]): dict(e.params)
            for e in leaf1 if e.table == TABLE_NEXTHOP}
    spine_mac = {s: net.switch(s).mac for s in ("spine1", "spine2")}
    assert hops == {(dst, m): {"port": 3 + m, "smac": ap.router_mac(1),
                               "dmac": spine_mac[f"spine{m + 1}"]}
                    for dst, m in itertools.product((2, 3), (0, 1))}
    assert all(e.action == ACTION_SET_NEXTHOP for e in leaf1 if e.table == TABLE_NEXTHOP)


def test_a_spine_routes_every_edge_subnet_to_its_one_port():
    net = net_of(leaf_spine(3, 2))
    spine = fabric_entries(pipeline(), net)["spine2"]
    assert not [e for e in spine if e.action == ACTION_TO_HOST]
    routes = {e.match["dst_addr"]: e.params["dst_edge"] for e in spine if e.table == TABLE_ROUTE}
    assert routes == {(f"10.0.{e}.0", 24): e for e in (1, 2, 3)}
    hops = {e.match["dst_edge"]: (e.match["member"], e.params["port"], e.params["dmac"])
            for e in spine if e.table == TABLE_NEXTHOP}
    assert hops == {e: (0, e, ap.router_mac(e)) for e in (1, 2, 3)}


def test_every_subnet_of_an_edge_is_routed_to_its_group():
    entries = fabric_entries(pipeline(), net_of(example("wan")))
    to_nyc = sorted(e.match["dst_addr"] for e in entries["sea"]
                    if e.action == ACTION_TO_EDGE and e.params["dst_edge"] == 4)
    assert to_nyc == [("10.0.4.0", 24), ("10.1.4.0", 24)]


def test_a_switch_needing_more_entries_than_a_table_holds_is_refused():
    net = net_of(leaf_spine(3, 2))
    with pytest.raises(ConfigError, match=r"switches\.leaf1: 4 entries in "
                                          r"PlainIngress\.ecmp_nexthop, the program holds 3"):
        fabric_entries(pipeline(nexthop_size=3), net)


def test_two_edges_without_a_fabric_are_refused():
    with pytest.raises(ConfigError, match="plain ECMP needs a fabric"):
        fabric_entries(pipeline(), plan_edges("127.0.0.1:9559", ()))
