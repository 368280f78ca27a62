"""Paths of a fabric: up to k loop-free paths per ordered pair of edges, numbered 1..k.

Which paths (docs/fabric.md, "Paths"):

- leaf-spine: one per spine, leaf -> spine -> leaf, in spine order (path j through spine j).
  A path through another leaf would cross two more links and a leaf's host-facing switch, and
  a fabric's paths are meant to be the equal ones of CONGA (Alizadeh et al., SIGCOMM 2014).
- graph: from the first `CANDIDATES_PER_PATH * k` simple paths in order of hop count, ties
  broken by summed delay (the configured one-way delay of each link in the direction
  crossed), then by the switch names along the path (`networkx.shortest_simple_paths`, Yen's
  algorithm), pick k greedily: each time the candidate sharing the fewest links with the paths
  already picked, the earlier candidate on a tie. The first path is the shortest; then a
  link-disjoint one is preferred to a shorter one that shares links, because every link is one
  queue shared by every path that crosses it: paths sharing a link congest and fail together,
  and load balancing across them buys little. The bound keeps Yen's algorithm cheap and
  stops a long detour from being chosen only for being disjoint.

Numbering (`Routing`): the paths of the intact fabric (the baseline) are numbered in the
order picked. After failures (links or switches down) the pick starts from the surviving
paths - first the baseline's, then those picked after earlier failures - and fills the free
places by the rule above. A surviving path keeps its id; a path picked again gets the id it
had before if that is free; another new path takes the lowest free id. So the paths a
failure does not touch keep their ids, and once everything is back the baseline is too.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from mpsched.fabric.model import Fabric

CANDIDATES_PER_PATH = 4  # candidates examined per path wanted (graph fabrics)
Pair = tuple[int, int]  # (source edge id, destination edge id)


@dataclass(frozen=True, order=True)
class Path:
    """A loop-free path: its switches from source to destination edge, and its links."""

    switches: tuple[str, ...]
    links: tuple[str, ...]

    @property
    def hops(self) -> int:
        return len(self.links)

    @functools.cached_property
    def directions(self) -> tuple[tuple[str, str], ...]:
        """The link directions it crosses, from its source edge on: (link, the switch the
        direction leaves); kept, since the link shares walk every path of every pair
        (src/mpsched/controller/telemetry/sharing.py)."""
        return tuple(zip(self.links, self.switches, strict=False))


@dataclass(frozen=True)
class Failures:
    """What is down: links and switches (a switch down takes its links with it)."""

    links: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()

    def alive(self, path: Path) -> bool:
        return not (self.links & set(path.links) or self.switches & set(path.switches))

    def up_links(self, fabric: Fabric) -> list[str]:
        return sorted(link.name for link in fabric.links if link.name not in self.links
                      and not self.switches & set(link.ends()))

    @classmethod
    def at(cls, fabric: Fabric, t: float | None, extra: Iterable[str] = ()) -> Failures:
        """The links down at `t` s by their schedules (None: none), and the links or
        switches named in `extra`."""
        extra = set(extra)
        down = {link.name for link in fabric.links if t is not None and not link.up_at(t)}
        return cls(frozenset(down | (extra & set(fabric.link_by_name))),
                   frozenset(extra & set(fabric.by_name)))


def _path(fabric: Fabric, switches: list[str]) -> Path:
    by_ends = fabric.link_by_ends
    hops = itertools.pairwise(switches)
    return Path(tuple(switches), tuple(by_ends[frozenset(h)] for h in hops))


def leaf_spine_candidates(fabric: Fabric, failures: Failures, pair: Pair) -> list[Path]:
    """leaf -> spine -> leaf for every spine, in spine order, those alive."""
    src, dst = fabric.edge(pair[0]).name, fabric.edge(pair[1]).name
    paths = [_path(fabric, [src, spine, dst]) for spine in fabric.spines()]
    return [p for p in paths if failures.alive(p)]


def _digraph(fabric: Fabric, failures: Failures) -> nx.DiGraph:
    """Both directions of every link up; the weight orders by hops, then summed delay: a hop
    weighs more than the delays of all links together."""
    hop = 1.0 + sum(max(link.params(end).delay_ms for end in link.ends())
                    for link in fabric.links)
    graph: nx.DiGraph = nx.DiGraph()
    graph.add_nodes_from(sorted(set(fabric.by_name) - failures.switches))
    for name in failures.up_links(fabric):
        link = fabric.link_by_name[name]
        for u, v in (link.ends(), link.ends()[::-1]):
            graph.add_edge(u, v, weight=hop + link.params(u).delay_ms)
    return graph


def graph_candidates(fabric: Fabric, failures: Failures, pair: Pair, limit: int) -> list[Path]:
    """The first `limit` simple paths by (hops, summed delay, switch names)."""
    src, dst = fabric.edge(pair[0]).name, fabric.edge(pair[1]).name
    graph = _digraph(fabric, failures)
    if src not in graph or dst not in graph or not nx.has_path(graph, src, dst):
        return []
    found = itertools.islice(nx.shortest_simple_paths(graph, src, dst, weight="weight"), limit)
    paths = [_path(fabric, list(p)) for p in found]
    return sorted(paths, key=lambda p: (p.hops, path_delay_ms(fabric, p), p.switches))


def candidates(fabric: Fabric, failures: Failures, pair: Pair) -> list[Path]:
    if fabric.kind == "leaf_spine":
        return leaf_spine_candidates(fabric, failures, pair)
    return graph_candidates(fabric, failures, pair, CANDIDATES_PER_PATH * fabric.paths_per_pair)


def pick(candidates: list[Path], keep: list[Path], k: int) -> list[Path]:
    """`keep` (up to k), then greedily the candidate sharing the fewest links with those
    picked, the earlier one on a tie, until there are k."""
    picked = list(keep[:k])
    rest = [c for c in candidates if c not in picked]
    while len(picked) < k and rest:
        used = {link for p in picked for link in p.links}
        best = min(range(len(rest)), key=lambda i: (len(used & set(rest[i].links)), i))
        picked.append(rest.pop(best))
    return picked


def number(picked: list[Path], previous: Mapping[int, Path], memory: Mapping[Path, int],
           k: int) -> dict[int, Path]:
    """Ids 1..k: a path of `previous` keeps its id, a path with an id in `memory` gets it
    back if free, any other takes the lowest free id."""
    ids = {pid: p for pid, p in previous.items() if p in picked}
    new = [p for p in picked if p not in ids.values()]
    for p in new:
        if memory.get(p, 0) and memory[p] not in ids:
            ids[memory[p]] = p
    for p in new:
        if p not in ids.values():
            ids[min(set(range(1, k + 1)) - set(ids))] = p
    return dict(sorted(ids.items()))


@dataclass(frozen=True)
class Routing:
    """The numbered paths of every ordered pair of edges (`current`), those of the intact
    fabric (`baseline`), the failures they were computed for, and every id each path has had
    (`memory`)."""

    baseline: dict[Pair, dict[int, Path]]
    current: dict[Pair, dict[int, Path]]
    failures: Failures = field(default_factory=Failures)
    memory: dict[Pair, dict[Path, int]] = field(default_factory=dict)


def route(fabric: Fabric) -> Routing:
    """The paths of the intact fabric."""
    table = {}
    for pair in fabric.pairs():
        picked = pick(candidates(fabric, Failures(), pair), [], fabric.paths_per_pair)
        table[pair] = {i: p for i, p in enumerate(picked, start=1)}
    memory = {pair: {p: i for i, p in paths.items()} for pair, paths in table.items()}
    return Routing(table, table, Failures(), memory)


def reroute(fabric: Fabric, routing: Routing, failures: Failures) -> Routing:
    """The paths after `failures` (what is down now; an empty set: everything is back),
    numbered from `routing` (see the module's docstring)."""
    current, memory = {}, {}
    k = fabric.paths_per_pair
    for pair in fabric.pairs():
        before = routing.current.get(pair, {})
        base = list(routing.baseline[pair].values())
        later = [p for p in before.values() if p not in base]
        keep = [p for p in base + later if failures.alive(p)]
        picked = pick(candidates(fabric, failures, pair), keep, k)
        remembered = routing.memory.get(pair, {})
        current[pair] = number(picked, before, remembered, k)
        memory[pair] = {**remembered, **{p: i for i, p in current[pair].items()}}
    return Routing(routing.baseline, current, failures, memory)


def path_delay_ms(fabric: Fabric, path: Path, t: float = 0.0) -> float:
    """The one-way delay of `path` at `t`: each link's, in the direction crossed."""
    return sum(fabric.link_by_name[name].params(src, t).delay_ms
               for src, name in zip(path.switches, path.links, strict=False))


def bottleneck_mbps(fabric: Fabric, path: Path, t: float = 0.0) -> float | None:
    """The slowest link's rate along `path` at `t` (None: no link limits the rate)."""
    rates = [fabric.link_by_name[name].params(src, t).rate_mbps
             for src, name in zip(path.switches, path.links, strict=False)]
    limited = [r for r in rates if r is not None]
    return min(limited) if limited else None
