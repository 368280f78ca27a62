"""A scenario's `fabric:` section: a leaf-spine generator or an explicit graph -> `Fabric`.

Pydantic models of the keys (docs/fabric.md, scenarios/README.md). A link's parameters are
those of a scenario path's segment (`SegmentFile`, src/mpsched/lab/scenario_links.py: rate_mbps,
delay_ms, jitter_ms, loss_pct, gilbert, queue_packets, reverse, schedule); `link:` gives the
defaults of every link and a link entry (graph) or an override (leaf-spine) the keys it
changes, each key replacing the default's as a whole. The limits (`max_edges`,
`max_paths`) come from the validation context, by default the compiled program's
(`program_limits`).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
from pathlib import Path
from typing import Annotated, Any

import networkx as nx
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mpsched import addressing as ap
from mpsched.fabric.model import (
    EDGE,
    MAX_EDGES,
    MAX_HOSTS,
    MAX_LINKS,
    MAX_PATHS,
    MAX_TRANSIT,
    ROLES,
    TRANSIT,
    Fabric,
    FabricError,
    Link,
    Switch,
)
from mpsched.fabric.names import reserved
from mpsched.lab.scenario_links import SegmentFile, step_context
from mpsched.proc.layout import p4_artifacts
from mpsched.validation import (
    KeyCheck,
    Loc,
    fail,
    input_error,
    int_in,
    one_of,
    shown,
    validate,
)

log = logging.getLogger(__name__)

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,9}")
# a link's name: its default joins two switch names with "-" (names.py: no reserved name)
LINK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,20}")
LINK_KEYS = ("a", "b", "name")  # a graph link's own keys; the others are its parameters


def _name(value: Any) -> str:
    """A switch name: it becomes a Mininet node and its interfaces ``<name>-eth<n>`` (Linux
    allows 15 characters); "-" joins the two names of a link. The testbed's own node names
    are refused (names.py)."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise ValueError("must be a letter then up to 9 letters, digits or _, got "
                         f"{shown(value)}")
    why = reserved(value)
    if why:
        raise ValueError(f"{why}: give the switch another name")
    return value


Name = Annotated[str, BeforeValidator(_name)]
Hosts = Annotated[int, int_in(1, MAX_HOSTS)]


def program_limits() -> tuple[int, int]:
    """(max_edges, max_paths) of the compiled program: `Pipeline.max_edges`, `max_paths` of
    build/p4's P4Info where it is built (the truth the controller checks, NetCfg.check_limits),
    else the default build's (model.py)."""
    p4info = p4_artifacts().p4info
    try:
        stamp = p4info.stat().st_mtime_ns
    except OSError:
        return MAX_EDGES, MAX_PATHS
    return _p4info_limits(p4info, stamp)


@functools.cache
def _p4info_limits(p4info: Path, stamp: int) -> tuple[int, int]:
    """The limits of the P4Info file as of its modification time `stamp` (the cache key)."""
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline

    try:
        pipeline = Pipeline(P4Info.from_file(p4info))
    except Exception as exc:  # an outdated or broken build must not stop a scenario's check
        log.warning("%s: %s; the default build's limits apply", p4info, exc)
        return MAX_EDGES, MAX_PATHS
    return pipeline.max_edges, pipeline.max_paths


def limits(info: ValidationInfo) -> tuple[int, int]:
    """(max_edges, max_paths) of the validation context, by default the program's."""
    context = info.context or {}
    if "max_edges" in context and "max_paths" in context:
        return context["max_edges"], context["max_paths"]
    max_edges, max_paths = program_limits()
    return context.get("max_edges", max_edges), context.get("max_paths", max_paths)


def _segment(data: Any, loc: Loc, info: ValidationInfo) -> SegmentFile:
    """`data` validated as a link's parameters; an error is located below `loc`."""
    try:
        return SegmentFile.model_validate(data, context=info.context)
    except ValidationError as exc:
        error = exc.errors()[0]
        fail((*loc, *error["loc"]), input_error(exc).message, error.get("input"))


def _merged(defaults: dict, changes: Any, loc: Loc, own: tuple[str, ...]) -> dict:
    """The default link keys with `changes` (an object, less its `own` keys) on top."""
    if not isinstance(changes, dict):
        fail(loc, "must be an object", changes)
    return {**defaults, **{k: v for k, v in changes.items() if k not in own}}


class _Model(KeyCheck, BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    _fabric: Fabric = PrivateAttr()

    def fabric(self) -> Fabric:
        return self._fabric


class LeafSpineFile(_Model):
    """`leaf_spine`: every leaf (an edge) linked to every spine (transit); links are
    ``leaf<i>-spine<j>`` (forward = leaf -> spine), paths leaf -> spine -> leaf."""

    leaves: Annotated[int, int_in(2, 255)]
    spines: Annotated[int, int_in(1, 64)]
    hosts_per_leaf: Hosts = 1
    link: dict
    overrides: list[dict] = []

    @model_validator(mode="after")
    def _build(self, info: ValidationInfo) -> LeafSpineFile:
        max_edges, max_paths = limits(info)
        if self.leaves > max_edges:
            fail("leaves", f"at most {max_edges} edges (leaves), got {self.leaves}", self.leaves)
        if self.spines > max_paths:
            fail("spines", f"at most {max_paths} paths per pair (one per spine), got "
                 f"{self.spines}", self.spines)
        leaves = [f"leaf{i}" for i in range(1, self.leaves + 1)]
        spines = [f"spine{j}" for j in range(1, self.spines + 1)]
        _segment(self.link, ("link",), info)
        default: tuple[dict, Loc] = (self.link, ("link",))
        params = {f"{leaf}-{spine}": default for leaf in leaves for spine in spines}
        for i, override in enumerate(self.overrides):
            name = override.get("link")
            if not isinstance(name, str) or name not in params:
                fail(("overrides", i, "link"), f"no such link (links are leaf<i>-spine<j>, i "
                     f"1..{self.leaves}, j 1..{self.spines}), got {name!r}", name)
            if params[name] is not default:
                fail(("overrides", i, "link"), f"{name} is overridden twice", name)
            loc: Loc = ("overrides", i)
            params[name] = (_merged(self.link, override, loc, ("link",)), loc)
        links = []
        for name, (data, where) in params.items():
            leaf, spine = name.split("-")
            links.append(Link(name, leaf, spine, _segment(data, where, info).segment()))
        switches = [Switch(leaf, EDGE, k, self.hosts_per_leaf, (ap.subnet(k),))
                    for k, leaf in enumerate(leaves, start=1)]
        switches += [Switch(spine, TRANSIT) for spine in spines]
        self._fabric = Fabric("leaf_spine", tuple(switches), tuple(links), self.spines)
        return self


class SwitchFile(_Model):
    """`graph.switches[i]`: a name, a role; an edge's hosts and (optionally) subnets."""

    name: Name
    role: Annotated[str, one_of(ROLES)]
    hosts: Hosts = 1
    subnets: list[str] | None = None  # default: the addressing plan's, `mpsched.addressing.subnet`

    @model_validator(mode="before")
    @classmethod
    def _edge_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("role") == TRANSIT:
            for key in ("hosts", "subnets"):
                if key in data:
                    fail(key, "only an edge switch has hosts", data[key])
        return data


class GraphFile(_Model):
    """`graph`: switches, links (a, b, optional name, parameters), the defaults of every
    link (`link`) and how many paths each ordered pair of edges gets (`paths_per_pair`)."""

    switches: list[SwitchFile]
    link: dict = {}
    links: list[dict]
    paths_per_pair: int | None = None  # default: max_paths

    @field_validator("paths_per_pair", mode="before")
    @classmethod
    def _paths_per_pair(cls, value: Any, info: ValidationInfo) -> Any:
        """1..max_paths: the compiled program's paths per pair (`program_limits`)."""
        max_paths = limits(info)[1]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not 1 <= value <= max_paths):
            raise ValueError(f"must be an integer 1..{max_paths} (the paths per pair the "
                             f"compiled program holds, its MAX_PATHS), got {shown(value)}")
        return value

    @model_validator(mode="after")
    def _build(self, info: ValidationInfo) -> GraphFile:
        max_edges, max_paths = limits(info)
        k = self.paths_per_pair or max_paths
        if k > max_paths:
            fail("paths_per_pair", f"at most {max_paths} paths per pair, got {k}", k)
        transit = sum(1 for s in self.switches if s.role == TRANSIT)
        if transit > MAX_TRANSIT:
            fail("switches", f"at most {MAX_TRANSIT} transit switches (docs/fabric.md, "
                 f"\"Bounds\"), got {transit}")
        if len(self.links) > MAX_LINKS:
            fail("links", f"at most {MAX_LINKS} links (docs/fabric.md, \"Bounds\"), got "
                 f"{len(self.links)}")
        switches = _switches(self.switches, max_edges)
        links = _links(self.links, self.link, switches, info)
        fabric = Fabric("graph", switches, links, k)
        _check_connected(fabric, [s.name for s in self.switches])
        self._fabric = fabric
        return self


def _switches(files: list[SwitchFile], max_edges: int) -> tuple[Switch, ...]:
    """Edges get ids 1..E in file order, transit switches follow by name."""
    seen: dict[str, int] = {}
    edges: list[Switch] = []
    transit: list[Switch] = []
    taken: list[tuple[ipaddress.IPv4Network, int]] = []
    for i, s in enumerate(files):
        if s.name in seen:
            fail(("switches", i, "name"), f"duplicate switch name {s.name!r} (also "
                 f"switches[{seen[s.name]}])", s.name)
        seen[s.name] = i
        if s.role == TRANSIT:
            transit.append(Switch(s.name, TRANSIT))
            continue
        edge_id = len(edges) + 1
        if edge_id > max_edges:
            fail("switches", f"at most {max_edges} edge switches, got more")
        subnets = _subnets(s.subnets, edge_id, taken, ("switches", i, "subnets"))
        edges.append(Switch(s.name, EDGE, edge_id, s.hosts, subnets))
    if len(edges) < 2:
        fail("switches", f"at least 2 edge switches, got {len(edges)}")
    return (*edges, *sorted(transit, key=lambda s: s.name))


def _subnets(given: list[str] | None, edge_id: int,
             taken: list[tuple[ipaddress.IPv4Network, int]], loc: Loc) -> tuple[str, ...]:
    """An edge's subnets (default: the addressing rule's); none may overlap another's."""
    texts = given if given is not None else [ap.subnet(edge_id)]
    if not texts:
        fail(loc, "at least one subnet", texts)
    out = []
    for j, text in enumerate(texts):
        try:
            net = ipaddress.IPv4Network(text)
        except (ValueError, TypeError):
            fail((*loc, j), f"must be an IPv4 network such as 10.0.1.0/24, got {text!r}", text)
        for other, owner in taken:
            if net.overlaps(other):
                fail((*loc, j), f"overlaps {other} of edge {owner}", text)
        taken.append((net, edge_id))
        out.append(str(net))
    return tuple(out)


def _links(files: list[dict], defaults: dict, switches: tuple[Switch, ...],
           info: ValidationInfo) -> tuple[Link, ...]:
    """The graph's links: known ends, no self-loop, unique names and pairs."""
    if not isinstance(defaults, dict):
        fail("link", "must be an object", defaults)
    names = {s.name for s in switches}
    by_name: dict[str, int] = {}
    by_pair: dict[frozenset[str], int] = {}
    links = []
    for i, entry in enumerate(files):
        data = _merged(defaults, entry, ("links", i), LINK_KEYS)
        for end in ("a", "b"):
            if not isinstance(entry.get(end), str) or entry[end] not in names:
                fail(("links", i, end), f"no switch named {entry.get(end)!r}", entry.get(end))
        a, b = entry["a"], entry["b"]
        if a == b:
            fail(("links", i, "b"), f"a link from {a} to itself", b)
        name = entry.get("name", f"{a}-{b}")
        _link_name(name, names, ("links", i, "name"))
        if name in by_name:
            fail(("links", i, "name"), f"duplicate link name {name!r} (also "
                 f"links[{by_name[name]}])", name)
        if frozenset((a, b)) in by_pair:
            fail(("links", i), f"a second link between {a} and {b} (also "
                 f"links[{by_pair[frozenset((a, b))]}])")
        by_name[name], by_pair[frozenset((a, b))] = i, i
        links.append(Link(name, a, b, _segment(data, ("links", i), info).segment()))
    return tuple(links)


def _link_name(name: Any, switches: set[str], loc: Loc) -> None:
    """A link's name: LINK_NAME, neither a switch's nor one the testbed keeps (names.py)."""
    if not isinstance(name, str) or not LINK_NAME.fullmatch(name):
        fail(loc, "must be a letter then up to 20 letters, digits, _ or -, got "
             f"{shown(name)}", name)
    why = reserved(name) or (f"{name!r} is a switch's name" if name in switches else None)
    if why:
        fail(loc, f"{why}: give the link another name", name)


def _check_connected(fabric: Fabric, order: list[str]) -> None:
    """Every edge reaches every other edge over the links: the first edge (in file order)
    that the first edge does not reach is refused."""
    graph: nx.Graph = nx.Graph()
    graph.add_nodes_from(sorted(fabric.by_name))
    graph.add_edges_from(sorted(link.ends() for link in fabric.links))
    first = fabric.edges[0].name
    reached = nx.node_connected_component(graph, first)
    for edge in fabric.edges:
        if edge.name not in reached:
            fail(("switches", order.index(edge.name)),
                 f"edge {edge.name} has no path to edge {first}")


class FabricFile(_Model):
    """A scenario's `fabric`: either `leaf_spine` or `graph`."""

    leaf_spine: LeafSpineFile | None = None
    graph: GraphFile | None = None

    @model_validator(mode="after")
    def _one(self) -> FabricFile:
        if self.leaf_spine is not None and self.graph is not None:
            fail("graph", "give either leaf_spine or graph, not both")
        chosen = self.leaf_spine or self.graph
        if chosen is None:
            fail("leaf_spine", "missing (a fabric is either leaf_spine or graph)")
        self._fabric = chosen.fabric()
        return self


def parse_fabric(data: Any, source: str | None = None, *, max_edges: int | None = None,
                 max_paths: int | None = None, context: dict | None = None) -> Fabric:
    """A `fabric:` section (already parsed) as a `Fabric`; raises `FabricError` naming the
    field below the section. The limits default to the compiled program's
    (`program_limits`); `context["base_dir"]` is where a schedule's trace files are; the
    section's schedules share one budget of steps (`step_context`)."""
    default_edges, default_paths = program_limits()
    context = {**step_context(context),
               "max_edges": default_edges if max_edges is None else max_edges,
               "max_paths": default_paths if max_paths is None else max_paths}
    return validate(FabricFile, data, error=FabricError, source=source,
                    context=context).fabric()
