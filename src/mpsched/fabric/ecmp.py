"""Plain ECMP on a fabric: every switch's groups and the plain ECMP program's entries
(p4src/bench/plain_ecmp.p4; docs/fabric-lab.md, "A plain-forwarding reference").

Groups: a switch's group towards edge e holds its neighbours on the equal-cost shortest
paths (fewest hops, as routers with unit link costs compute them) from it to e, by name
(which is also their port order, src/mpsched/fabric/ports.py), over every link of the fabric:
the entries are written once, so a link's schedule (a failure) does not change them. On a
leaf-spine a leaf's group towards another leaf is every spine and a spine's the leaf
itself; a graph groups what its equal shortest paths share. An edge unreachable from a
switch has no group there (its packets are dropped: no route).

Entries of a switch: a route per address of each of its hosts (a /32 to the host's port,
with the switch's router MAC and the host's, as the scheduler's program delivers,
src/mpsched/controller/southbound/forwarding.py); a route per subnet of every other edge it reaches,
to
that edge's group; and one next hop per member of each group (its port, this switch's MAC
and the neighbour's).
"""

from __future__ import annotations

from collections import Counter

import networkx as nx

from mpsched.fabric.model import Fabric
from mpsched.fabric.ports import port_map
from mpsched.netcfg import ConfigError, NetCfg
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.plain_ecmp import PlainEcmpPipeline

Groups = dict[str, dict[int, tuple[str, ...]]]  # switch -> destination edge id -> neighbours


def ecmp_groups(fabric: Fabric) -> Groups:
    """{switch: {edge id: the neighbours on its equal-cost shortest paths to that edge}}
    for every switch and every edge but the switch itself (module docstring)."""
    graph: nx.Graph = nx.Graph()
    graph.add_nodes_from(s.name for s in fabric.switches)
    graph.add_edges_from(link.ends() for link in fabric.links)
    groups: Groups = {s.name: {} for s in fabric.switches}
    for edge in fabric.edges:
        hops_to = nx.single_source_shortest_path_length(graph, edge.name)
        for name, hops in hops_to.items():
            if name == edge.name:
                continue
            closer = (n for n in graph.neighbors(name) if hops_to.get(n) == hops - 1)
            groups[name][edge.edge_id] = tuple(sorted(closer))
    return {name: dict(sorted(by_edge.items())) for name, by_edge in groups.items()}


def switch_entries(pipeline: PlainEcmpPipeline, net: NetCfg, fabric: Fabric,
                   groups: Groups, name: str) -> list[TableEntry]:
    """The plain ECMP program's entries of switch `name` (module docstring)."""
    sw = net.switch(name)
    ports = port_map(fabric)[name]
    entries = [pipeline.route_to_host(h.ip, h.port, sw.mac, h.mac) for h in sw.hosts]
    for dst, members in groups[name].items():
        entries += [pipeline.route_to_edge(prefix, dst, len(members))
                    for prefix in net.subnets_of(dst)]
        entries += [pipeline.nexthop(dst, m, ports.neighbours[hop], sw.mac, net.switch(hop).mac)
                    for m, hop in enumerate(members)]
    return entries


def fabric_entries(pipeline: PlainEcmpPipeline, net: NetCfg) -> dict[str, list[TableEntry]]:
    """{switch: its entries} for every switch of the fabric `net` describes. ConfigError,
    naming the switch, when `net` is no fabric or a switch's entries exceed a table."""
    fabric = net.topology
    if fabric is None:
        raise ConfigError("fabric", "plain ECMP needs a fabric (two edges joined by `paths` "
                                    "have no fabric to compute groups on)")
    groups = ecmp_groups(fabric)
    out = {}
    for sw in net.switches:
        try:
            entries = switch_entries(pipeline, net, fabric, groups, sw.name)
        except ValueError as error:
            raise ConfigError(f"switches.{sw.name}", str(error)) from None
        used = Counter(e.table for e in entries)
        for table, size in pipeline.table_sizes.items():
            if used[table] > size:
                raise ConfigError(f"switches.{sw.name}",
                                  f"{used[table]} entries in {table}, the program holds {size}")
        out[sw.name] = entries
    return out
