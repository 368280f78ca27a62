"""Port numbering and the next-hop table each switch needs to forward a fabric's paths.

Ports (docs/fabric.md, "Ports"): an edge switch's host ports are 1..H (host k on port k);
then every switch has one port per link, numbered on from H + 1 (1 on a transit switch) in
the order of the neighbours' names. The numbering depends only on the fabric, not on the
order of the file's lists.

Next hops: a path id is one ordered pair's (paths.py), so two sources' path 1 towards the
same destination may leave a transit switch by different ports; a switch therefore looks up
(source edge, destination edge, path id), all three carried by the path tag. The destination
edge has no entry: it takes the tag off and delivers by the host's address.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from mpsched.fabric.model import Fabric
from mpsched.fabric.paths import Pair, Path

HopKey = tuple[int, int, int]  # (source edge id, destination edge id, path id)


@dataclass(frozen=True)
class Ports:
    """A switch's ports: those of its hosts, and the port towards each neighbour switch."""

    hosts: tuple[int, ...]
    neighbours: dict[str, int]


def port_map(fabric: Fabric) -> dict[str, Ports]:
    """{switch: its `Ports`} (module docstring)."""
    out = {}
    for switch in fabric.switches:
        hosts = tuple(range(1, switch.hosts + 1))
        others = sorted(link.other(switch.name) for link in fabric.links_of(switch.name))
        first = len(hosts) + 1
        out[switch.name] = Ports(hosts, {n: port for port, n in enumerate(others, start=first)})
    return out


def next_hops(fabric: Fabric, table: Mapping[Pair, Mapping[int, Path]]
              ) -> dict[str, dict[HopKey, int]]:
    """{switch: {(source edge, destination edge, path id): port}} for every path of `table`
    (e.g. `Routing.current`), at every switch of it but the destination edge."""
    ports = port_map(fabric)
    hops: dict[str, dict[HopKey, int]] = {s.name: {} for s in fabric.switches}
    for (src, dst), paths in sorted(table.items()):
        for pid, path in sorted(paths.items()):
            for here, there in itertools.pairwise(path.switches):
                hops[here][(src, dst, pid)] = ports[here].neighbours[there]
    return {name: dict(sorted(entries.items())) for name, entries in hops.items()}
