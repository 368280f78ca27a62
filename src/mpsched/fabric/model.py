"""The fabric: edge and transit switches joined by undirected links (docs/fabric.md).

A scenario's `fabric:` section (a leaf-spine generator or an explicit graph,
src/mpsched/fabric/files.py) normalises to one `Fabric`. Every link is one emulated link: one
queue per direction, shared by every path that crosses it in that direction. An edge switch
is both ingress and egress (hosts behind it); a transit switch only forwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from mpsched import addressing as ap
from mpsched.emu.params import LinkParams
from mpsched.emu.schedule import params_at
from mpsched.emu.segment import MAX_PATHS, Segment
from mpsched.validation import InputError

__all__ = [
    "ANY_BUILD_MAX_EDGES", "ANY_BUILD_MAX_PATHS", "EDGE", "KINDS", "MAX_EDGES", "MAX_HOSTS",
    "MAX_LINKS", "MAX_PATHS", "MAX_TRANSIT", "ROLES", "TRANSIT", "Fabric", "FabricError", "Link",
    "Switch",
]  # fmt: skip

# Edge switches a fabric may have (its edge ids are 1..MAX_EDGES) and paths per ordered pair
# of edges: the default build's (`make p4`: MAX_EDGES of p4src/include/sizes.p4, MAX_PATHS of
# defines.p4; a unit test holds them to the source). The validator takes the compiled
# program's own where it is built (files.program_limits: Pipeline.max_edges, max_paths).
MAX_EDGES = 8
# The most any build holds: edge ids are edge_id_t (8 bits, p4src/include/defines.p4) and
# paths per pair MAX_PATHS 4 or 8. A network description parses its fabric within these;
# the controller then checks the compiled program's own limits (NetCfg.check_limits).
ANY_BUILD_MAX_EDGES = 255
ANY_BUILD_MAX_PATHS = 8
# Transit switches a fabric may have. Each is one BMv2 process (about 80 MiB, docs/scaling.md)
# as an edge is: with the default build's 8 edges a fabric is at most 72 of them, about the 68
# that `make bench-scale` starts on the lab's two-core machine (64 leaves, 4 spines); and the
# paths of a graph at the bound are computed within seconds (docs/fabric.md, "Bounds").
MAX_TRANSIT = 64
# Links: as many as the largest leaf-spine any build holds (every leaf to every spine).
MAX_LINKS = ANY_BUILD_MAX_EDGES * ANY_BUILD_MAX_PATHS
# hosts behind one edge switch: host k is .k of the edge's subnet (more addresses above them)
MAX_HOSTS = ap.FABRIC_HOST_SLOTS
EDGE, TRANSIT = "edge", "transit"
ROLES = (EDGE, TRANSIT)
KINDS = ("leaf_spine", "graph")


class FabricError(InputError):
    """An invalid fabric: `field` names the bad key of the file."""


@dataclass(frozen=True)
class Switch:
    """A switch: `role` edge (with `edge_id` 1..E, `hosts` and their `subnets`) or transit."""

    name: str
    role: str
    edge_id: int = 0  # 0: a transit switch
    hosts: int = 0
    subnets: tuple[str, ...] = ()

    @property
    def is_edge(self) -> bool:
        return self.role == EDGE


@dataclass(frozen=True)
class Link:
    """An undirected link between switches `a` and `b`: one emulated link whose `segment`
    holds the parameters and schedules of each direction (forward = a -> b)."""

    name: str
    a: str
    b: str
    segment: Segment = field(default_factory=Segment)

    def ends(self) -> tuple[str, str]:
        return (self.a, self.b)

    def other(self, switch: str) -> str:
        """The switch at the other end from `switch`."""
        return self.b if switch == self.a else self.a

    def params(self, source: str, t: float = 0.0) -> LinkParams:
        """The parameters of the direction leaving `source`, at `t` s (schedules applied)."""
        seg = self.segment
        base, events = ((seg.forward, seg.forward_events) if source == self.a
                        else (seg.reverse, seg.reverse_events))
        # without a schedule the base holds at every t (params_at would build and validate
        # a copy per call: a fabric's routing asks per path and link, docs/results/scale.md)
        return params_at(base, events, t) if events else base

    def up_at(self, t: float) -> bool:
        """Whether the link carries traffic both ways at `t` (a failure cuts a direction)."""
        return self.params(self.a, t).up and self.params(self.b, t).up


@dataclass(frozen=True)
class Fabric:
    """Switches (edges first, by edge id; then transit switches by name) and links (by name).

    `kind` is how it was described: "leaf_spine" (paths leaf -> spine -> leaf, one per spine)
    or "graph" (k shortest simple paths, src/mpsched/fabric/paths.py); `paths_per_pair` is k."""

    kind: str
    switches: tuple[Switch, ...]
    links: tuple[Link, ...]
    paths_per_pair: int = MAX_PATHS

    @cached_property
    def by_name(self) -> dict[str, Switch]:
        return {s.name: s for s in self.switches}

    @cached_property
    def link_by_name(self) -> dict[str, Link]:
        return {link.name: link for link in self.links}

    @cached_property
    def link_by_ends(self) -> dict[frozenset[str], str]:
        """A link's name by the two switches it joins (a path's hops: paths.py)."""
        return {frozenset(link.ends()): link.name for link in self.links}

    @cached_property
    def edges(self) -> tuple[Switch, ...]:
        """The edge switches by edge id (1..E)."""
        return tuple(sorted((s for s in self.switches if s.is_edge), key=lambda s: s.edge_id))

    def edge(self, edge_id: int) -> Switch:
        return self.edges[edge_id - 1]

    def pairs(self) -> list[tuple[int, int]]:
        """Every ordered pair (source edge id, destination edge id), source first."""
        ids = [s.edge_id for s in self.edges]
        return [(a, b) for a in ids for b in ids if a != b]

    def links_of(self, switch: str) -> list[Link]:
        """The links at `switch`, by the name of the switch at their other end."""
        mine = [link for link in self.links if switch in link.ends()]
        return sorted(mine, key=lambda link: link.other(switch))

    def spines(self) -> list[str]:
        """A leaf-spine fabric's spines (its transit switches) in index order."""
        return list(self._spines)

    @cached_property
    def _spines(self) -> tuple[str, ...]:
        # once: the routing asks per pair (4032 times at 64 leaves, docs/results/scale.md)
        transit = [s.name for s in self.switches if not s.is_edge]
        return tuple(sorted(transit, key=lambda n: (len(n), n)))
