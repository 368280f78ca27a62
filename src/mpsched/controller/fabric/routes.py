"""The routing state of the network, in one manager: which paths each pair of edges has,
what each switch forwards, and what the scheduler decides for (its units).

Two edges (a description without `fabric`): the switches' own paths from the description;
the scheduler's unit of a switch is the switch's name (its placements towards the peer
edge), as before fabrics. A fabric (docs/fabric.md): the paths of every ordered pair of
edges from `mpsched.fabric.paths.route` on the intact fabric, re-routed by `paths.reroute`
when the operator takes a link administratively down or up (ids of unaffected paths stay)
or the controller infers that a link failed or returned (src/mpsched/controller/fabric/failures.py):
the routing avoids both kinds of down link, kept apart (`links_down`, the operator's;
`links_failed`, inferred). While links are held failed, the paths they cut stay installed
but unweighted, only to be probed (`watch`, tomography.watch_paths), so that their return
is seen;
the scheduler's unit is an ordered pair of edges, keyed ``"<ingress>-><egress>"`` by
switch names (e.g. ``"leaf1->leaf3"``), which is also the telemetry's direction of the
pair's traffic (telemetry/intake_base.py).

Not thread-safe: the controller calls it under its lock (the agents' `forwarding` too); only
the probers' `probe_wanted` reads a pair's paths without it, which is safe because a routing
is replaced whole, never changed in place.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mpsched.controller.fabric.tomography import watch_paths
from mpsched.controller.scheduling.mptcp_placement import path_overlaps
from mpsched.controller.southbound.forwarding import (
    fabric_entries,
    forwarding_entries,
    hop_changes,
    telemetry_entries,
)
from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.controller.telemetry.regimes import ProbeRegimes
from mpsched.controller.telemetry.report_rates import ReportRates
from mpsched.fabric.paths import Failures, Pair, Path, Routing, bottleneck_mbps, reroute, route
from mpsched.fabric.ports import HopKey, Ports, next_hops, port_map
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)

PAIR_JOIN = "->"


def pair_key(ingress: str, egress: str) -> str:
    """The key of the ordered pair of edge switches (also the telemetry's direction)."""
    return f"{ingress}{PAIR_JOIN}{egress}"


@dataclass(frozen=True)
class Unit:
    """What the scheduler decides for: the traffic of `ingress` towards edge `dst_edge`
    (switch `egress`); `key` names it (two edges: the ingress switch's name)."""

    key: str
    ingress: str
    egress: str
    dst_edge: int

    @functools.cached_property
    def direction(self) -> str:
        """Its telemetry direction (`pair_key`), made once: asked per pair per step."""
        return pair_key(self.ingress, self.egress)


def fabric_ports(ports: Mapping[str, Ports], edge: str) -> list[int]:
    """The ports of edge switch `edge` (of a fabric's `port_map`) that face other switches:
    the data plane admits a path tag only from one of them (path_ingress.p4) and keys what
    arrives by the tag's own (source edge, path id), not by the port."""
    return sorted(ports[edge].neighbours.values())


def _key(entry: TableEntry) -> tuple:
    return (entry.table, tuple(sorted(entry.match.items())), entry.priority, entry.is_default)


def entry_changes(
    old: Iterable[TableEntry], new: Iterable[TableEntry]
) -> tuple[list[TableEntry], list[TableEntry]]:
    """(entries to write: new or changed, entries to delete) that turn `old` into `new`."""
    before = {_key(e): e for e in old}
    after = {_key(e): e for e in new}
    write = [e for k, e in after.items() if before.get(k) != e]
    gone = [e for k, e in before.items() if k not in after]
    return write, gone


class Routes:
    def __init__(self, net: NetCfg, max_paths: int | None = None,
                 regimes: ProbeRegimes | None = None) -> None:
        """`max_paths`: the program's paths per pair (Pipeline.max_paths), the ids a watched
        path may take; by default the fabric's k (no spare ids). `regimes`: the pairs' probe
        regimes, whose dead_after each edge's liveness entries carry (by default none: every
        pair active)."""
        self.net = net
        self.regimes = regimes or ProbeRegimes()
        self.fabric = net.topology
        # which pairs report at the active interval (telemetry/report_rates.py)
        self.reports = ReportRates(self.fabric is not None, self.regimes.enabled)
        self.routing: Routing | None = None
        # every switch's ports (they depend on the fabric only): computed once
        self.ports = port_map(self.fabric) if self.fabric is not None else {}
        self.hops: dict[str, dict[HopKey, int]] = {}
        self.links_down: set[str] = set()  # the operator's (PUT /links/{name}/admin)
        # inferred (src/mpsched/controller/fabric/failures.py)
        self.links_failed: frozenset[str] = frozenset()
        # the paths cut by inferred failures, installed only to be probed, and the ids the
        # program has for them
        self.watch: dict[Pair, dict[int, Path]] = {}
        k = self.fabric.paths_per_pair if self.fabric is not None else 0
        self.max_paths = max(k, max_paths or 0)
        self.installed_keys: frozenset[tuple[int, int, int]] = frozenset()
        self.edge_of = {sw.name: net.edge_id(sw) for sw in net.switches}
        self._at: dict[str, list[Unit]] = {}  # the units never change, only their paths
        self._by_key: dict[str, Unit] = {}
        # each unit's paths' bottleneck rates under the current routing (`rates`, read by
        # every control step): computed once per routing
        self._rates: dict[str, dict[int, float | None]] = {}
        self._overlaps: dict[str, dict[tuple[int, int], float]] = {}  # likewise
        self.generation = 0  # counts the routings installed
        # per unit, the routing under which its paths last changed (0: the first): a pair
        # is stepped again when its own paths changed (src/mpsched/controller/scheduling/due.py)
        self.unit_routing: dict[str, int] = {}
        if self.fabric is not None:
            self._install(route(self.fabric))

    @property
    def is_fabric(self) -> bool:
        return self.fabric is not None

    def _install(self, routing: Routing) -> None:
        assert self.fabric is not None
        self.routing = routing
        self.watch = watch_paths(routing.baseline, routing.current, self.links_failed,
                                 self.max_paths)
        table = self.installed_table()
        self.hops = next_hops(self.fabric, table)
        # (source edge, destination edge, path id) of every installed path, for the probers
        self.installed_keys = frozenset((*pair, pid) for pair, paths in table.items()
                                        for pid in paths)
        self._rates = {}
        self._overlaps = {}
        self.generation += 1

    def installed_table(self) -> dict[Pair, dict[int, Path]]:
        """Every pair's installed paths: its current ones and those watched."""
        assert self.routing is not None
        return {pair: {**paths, **self.watch.get(pair, {})}
                for pair, paths in self.routing.current.items()}

    def installed(self, unit: Unit) -> dict[int, Path]:
        """A fabric unit's installed paths by id: its current ones and those watched."""
        if self.routing is None:
            return {}
        pair = (self.net.edge_id(self.net.switch(unit.ingress)), unit.dst_edge)
        return {**self.routing.current.get(pair, {}), **self.watch.get(pair, {})}

    def installed_ids(self) -> list[int]:
        """The path ids some pair has installed (current or watched), with the fabric's
        1..k: the ids whose telemetry settings every edge holds."""
        ids = set(self.net.path_ids())
        ids.update(pid for paths in self.watch.values() for pid in paths)
        return sorted(ids)

    # -- units -----------------------------------------------------------------

    def units(self) -> list[Unit]:
        """Every unit: per switch (two edges) or per ordered pair of edges (a fabric)."""
        return [u for sw in self.net.switches for u in self.units_at(sw.name)]

    def units_at(self, switch: str) -> list[Unit]:
        """The units whose placements `switch` holds (none on a transit switch)."""
        if switch not in self._at:
            self._at[switch] = self._units_at(switch)
        return self._at[switch]

    def _units_at(self, switch: str) -> list[Unit]:
        sw = self.net.switch(switch)
        if not self.is_fabric:
            others = [s.name for s in self.net.switches if s.name != switch]
            egress = others[0] if len(others) == 1 else "?"
            return [Unit(switch, switch, egress, self.net.peer_edge(sw))]
        return [
            Unit(pair_key(switch, self.net.edge_switch(d).name), switch,
                 self.net.edge_switch(d).name, d)
            for d in self.net.peer_edges(sw)
        ]

    def unit(self, key: str) -> Unit:
        """The unit of `key` (KeyError: none)."""
        if not self._by_key:
            self._by_key = {u.key: u for u in self.units()}
        return self._by_key[key]

    def pair_paths(self, unit: Unit) -> dict[int, Path]:
        """A fabric unit's current paths by id ({} with two edges)."""
        if self.routing is None:
            return {}
        pair = (self.net.edge_id(self.net.switch(unit.ingress)), unit.dst_edge)
        return dict(self.routing.current.get(pair, {}))

    def path_ids(self, unit: Unit) -> list[int]:
        """The ids of the unit's paths now (two edges: its switch's paths)."""
        if self.routing is None:
            return sorted(p.id for p in self.net.switch(unit.ingress).paths)
        return sorted(self.pair_paths(unit))

    def rates(self, unit: Unit) -> dict[int, float | None]:
        """A fabric unit's paths' bottleneck rates (Mbit/s; None: not limited)."""
        if self.fabric is None:
            return {}
        rates = self._rates.get(unit.key)
        if rates is None:
            rates = self._rates[unit.key] = {
                pid: bottleneck_mbps(self.fabric, p) for pid, p in self.pair_paths(unit).items()
            }
        return dict(rates)

    def overlaps(self, unit: Unit) -> dict[tuple[int, int], float]:
        """How a fabric unit's paths share links (`mptcp_placement.path_overlaps` over each
        path's links, keyed by name and the switch crossing it, with that direction's
        configured rate): {} with two edges or when its paths are link-disjoint."""
        if self.fabric is None:
            return {}
        got = self._overlaps.get(unit.key)
        if got is None:
            fabric = self.fabric
            links = {
                pid: [((name, src), fabric.link_by_name[name].params(src).rate_mbps)
                      for src, name in zip(p.switches, p.links, strict=False)]
                for pid, p in self.pair_paths(unit).items()
            }
            got = self._overlaps[unit.key] = path_overlaps(links)
        return dict(got)

    # -- forwarding ------------------------------------------------------------

    def forwarding(
        self, pipeline: Pipeline, sw: SwitchCfg, telemetry: TelemetryConfig | None = None,
        hops: dict[HopKey, int] | None = None, path_ids: list[int] | None = None,
    ) -> list[TableEntry]:
        """The switch's forwarding entries under the current routing (or its next `hops`
        and the telemetry of `path_ids`), its telemetry settings those of its probe targets
        (`TelemetryConfig.for_targets`: the probe cap), its liveness by each pair's current
        probe regime (`regimes`)."""
        telemetry = (telemetry or TelemetryConfig()).for_targets(
            len(self.net.probe_targets(sw))
        )
        if self.fabric is None or self.routing is None:
            return forwarding_entries(pipeline, self.net, sw, telemetry)
        ports = fabric_ports(self.ports, sw.name) if self.net.is_edge(sw) else []
        hops = self.hops[sw.name] if hops is None else hops
        return fabric_entries(pipeline, self.net, sw, hops, ports, telemetry,
                              path_ids if path_ids is not None else self.installed_ids(),
                              self._idle_peers(sw), self._slow_peers(sw))

    def _idle_peers(self, sw: SwitchCfg) -> frozenset[int]:
        """The peers of an edge whose pair with it holds the idle dead_after now."""
        return self.regimes.idle_peers(self.edge_of[sw.name], self.net.peer_edges(sw))

    def _slow_peers(self, sw: SwitchCfg) -> frozenset[int]:
        """The peers of an edge whose pair with it reports at the idle intervals now."""
        return self.reports.slow_peers(self.edge_of[sw.name], self.net.peer_edges(sw))

    # -- links -----------------------------------------------------------------

    def links(self) -> list[tuple[str, str, str, bool]]:
        """Every fabric link: (name, a, b, administratively up); [] with two edges."""
        if self.fabric is None:
            return []
        return [(lk.name, lk.a, lk.b, lk.name not in self.links_down) for lk in self.fabric.links]

    def set_link(self, name: str, up: bool) -> list[Unit]:
        """Take link `name` administratively down or up and re-route (`paths.reroute`):
        the units whose paths changed (KeyError: no such link)."""
        return self.set_links([name], up)

    def set_links(self, names: Iterable[str], up: bool) -> list[Unit]:
        """Take the links `names` administratively down or up together (a switch's failure:
        all its links) and re-route once: the units whose paths changed (KeyError: a name
        that is no link)."""
        names = sorted(set(names))
        unknown = [n for n in names if self.fabric is None or n not in self.fabric.link_by_name]
        if unknown or not names:
            raise KeyError(unknown)
        down = (self.links_down - set(names)) if up else (self.links_down | set(names))
        changed = self.set_links_down(down)
        log.info("links %s %s: %d pairs re-routed", ",".join(names), "up" if up else "down",
                 len(changed))
        return changed

    def set_links_down(self, names: Iterable[str]) -> list[Unit]:
        """Exactly the links `names` administratively down (the others up), re-routed
        once: the units whose paths changed (KeyError: a name that is no link)."""
        down = set(names)
        if down == self.links_down:
            return []
        return self._reroute(down, self.links_failed)

    def set_links_failed(self, names: Iterable[str]) -> list[Unit]:
        """Exactly the links `names` held failed (inferred; the operator's states stay),
        re-routed once: the units whose paths changed (KeyError: a name that is no link)."""
        failed = frozenset(names)
        if failed == self.links_failed:
            return []
        return self._reroute(self.links_down, failed)

    def _reroute(self, down: set[str], failed: frozenset[str]) -> list[Unit]:
        unknown = sorted((down | failed) - set(self.fabric.link_by_name if self.fabric else ()))
        if unknown or self.fabric is None or self.routing is None:
            raise KeyError(unknown)
        before = {u.key: self.pair_paths(u) for u in self.units()}
        self.links_down, self.links_failed = down, failed
        self._install(reroute(self.fabric, self.routing, Failures(frozenset(down | failed))))
        changed = [u for u in self.units() if self.pair_paths(u) != before[u.key]]
        for u in changed:
            self.unit_routing[u.key] = self.generation
        return changed

    def forwarding_changes(
        self, pipeline: Pipeline, before: dict[str, list[TableEntry]],
        telemetry: TelemetryConfig | None = None,
    ) -> dict[str, tuple[list[TableEntry], list[TableEntry]]]:
        """Per switch whose forwarding differs from `before` (switch -> its entries), the
        entries to write and those to delete."""
        out = {}
        for sw in self.net.switches:
            write, gone = entry_changes(before[sw.name], self.forwarding(pipeline, sw, telemetry))
            if write or gone:
                out[sw.name] = (write, gone)
        return out

    def set_links_changes(
        self, pipeline: Pipeline, names: Iterable[str], up: bool,
        telemetry: TelemetryConfig | None = None,
    ) -> dict[str, tuple[list[TableEntry], list[TableEntry]]]:
        """`set_links`, then per switch whose forwarding changed the entries to write and
        those to delete: only the switches whose next hops changed are compared (the rest of
        a switch's entries do not depend on the routing), so a spine's failure costs the
        switches it touches, not every entry of the fabric."""
        old, old_ids = self.hops, self.installed_ids()
        self.set_links(names, up)
        return self._changes(pipeline, old, old_ids, telemetry)

    def set_links_failed_changes(
        self, pipeline: Pipeline, names: Iterable[str], telemetry: TelemetryConfig | None = None,
    ) -> dict[str, tuple[list[TableEntry], list[TableEntry]]]:
        """`set_links_failed`, then the entries to write and delete per switch (as
        `set_links_changes`)."""
        old, old_ids = self.hops, self.installed_ids()
        self.set_links_failed(names)
        return self._changes(pipeline, old, old_ids, telemetry)

    def _changes(
        self, pipeline: Pipeline, old: dict[str, dict[HopKey, int]], old_ids: list[int],
        telemetry: TelemetryConfig | None,
    ) -> dict[str, tuple[list[TableEntry], list[TableEntry]]]:
        """Per switch whose next hops (or, on every edge, the path ids whose telemetry it
        holds) changed since `old` and `old_ids`: the entries to write and to delete. Of a
        switch's forwarding (`forwarding`) only these depend on the routing: the entries of
        its changed next hops (`hop_changes`) and an edge's per-path-id telemetry."""
        out = {}
        new_ids = self.installed_ids()
        ids_changed = old_ids != new_ids
        for sw in self.net.switches:
            write: list[TableEntry] = []
            gone: list[TableEntry] = []
            if self.hops.get(sw.name) != old.get(sw.name):
                write, gone = hop_changes(pipeline, self.net.edge_id(sw), old.get(sw.name, {}),
                                          self.hops.get(sw.name, {}))
            if ids_changed and self.net.is_edge(sw):
                tel = (telemetry or TelemetryConfig()).for_targets(
                    len(self.net.probe_targets(sw)))
                peers, idle = self.net.peer_edges(sw), self._idle_peers(sw)
                slow = self._slow_peers(sw)
                more, less = entry_changes(
                    telemetry_entries(pipeline, old_ids, peers, tel, idle, True, slow),
                    telemetry_entries(pipeline, new_ids, peers, tel, idle, True, slow))
                write, gone = write + more, gone + less
            if write or gone:
                out[sw.name] = (write, gone)
        return out

    def all_forwarding(
        self, pipeline: Pipeline, telemetry: TelemetryConfig | None = None
    ) -> dict[str, list[TableEntry]]:
        return {sw.name: self.forwarding(pipeline, sw, telemetry) for sw in self.net.switches}


__all__ = ["PAIR_JOIN", "Routes", "Unit", "fabric_ports", "entry_changes", "pair_key"]
