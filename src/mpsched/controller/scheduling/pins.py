"""MPTCP subflow pins: which path each subflow should use, and what each switch was sent.

The tracker (scheduling/mptcp.py) follows the connections the switches' digests report and
plans a path per subflow by live cost (`costs_for`) among the paths of the subflow's unit
(src/mpsched/controller/fabric/routes.py: its initiator's edge switch with two edges; in a fabric
the pair of
its two edges). `desired` turns the plan into the subflow_pin entries of the edge switches
(with two edges both directions of each subflow on both; in a fabric each direction on the
edge that sends it, where that direction's pair has the path id: a pin's path id is the
route's destination edge's, p4src/include/mptcp.p4), `changes` into the difference with what a
switch was last sent. Not thread-safe: the controller calls it
under its lock.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable, Iterable

from mpsched.controller.fabric.routes import Routes, pair_key
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.ca import live_cost
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, TrafficClass
from mpsched.controller.scheduling.mptcp import (
    Flow,
    MptcpTracker,
    flow_of,
    path_order,
    pin_cost,
)
from mpsched.controller.scheduling.scheduler import Scheduler
from mpsched.netcfg import NetCfg
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)

TCP = 6

PinKey = tuple[str, str, int, int]  # subflow_pin's match: src, dst, sport, dport
Pins = dict[PinKey, int]  # match -> path id
PathStates = Callable[[str], list[PathState]]  # unit (routes.py) -> its paths' states


def class_of(flow: Flow, classes: Iterable[TrafficClass]) -> int:
    """The class a TCP flow's packets fall into (without DSCP: class 0 then)."""
    best = None
    for c in classes:
        if c.id == DEFAULT_CLASS_ID:
            continue
        if c.match.covers_flow(flow.src, flow.dst, TCP, flow.sport, flow.dport) and (
            best is None or c.priority > best.priority
        ):
            best = c
    return DEFAULT_CLASS_ID if best is None else best.id


class PinManager:
    def __init__(self, net: NetCfg, pipeline: Pipeline, routes: Routes | None = None) -> None:
        self.net = net
        self.pipeline = pipeline
        self.routes = routes or Routes(net)
        self.tracker = MptcpTracker()
        self.sent: dict[str, Pins] = {sw.name: {} for sw in net.switches}

    def host_switch(self, ip: str) -> str:
        """The edge switch whose subnets hold `ip` (the first switch if none does)."""
        addr = ipaddress.IPv4Address(ip)
        for sw in self.net.switches:
            if any(addr in ipaddress.IPv4Network(net) for net in sw.subnets):
                return sw.name
        return self.net.switches[0].name

    def unit_of(self, flow: Flow) -> str:
        """The unit of a subflow's direction: the sender's edge switch (two edges), the pair
        of the two edges' switches (a fabric)."""
        src = self.host_switch(flow.src)
        return src if not self.routes.is_fabric else pair_key(src, self.host_switch(flow.dst))

    def costs_for(
        self, flow: Flow, scheduler: Scheduler, states: PathStates
    ) -> dict[int, float]:
        """The usable paths for a subflow and their live costs (`live_cost` under the
        class's CaCost, `pin_cost`): its class's current placement of the initiator's unit,
        alive, admin-up and weighted paths only, in the order that breaks cost ties
        (highest weight first, then path id)."""
        unit = self.unit_of(flow)
        try:
            paths = states(unit)
        except KeyError:  # no such unit: both ends behind one edge of a fabric
            return {}
        pl = scheduler.placement_of(unit, class_of(flow, scheduler.classes.values()))
        weights = pl.weight_map() if pl is not None else {}
        cost = pin_cost(pl.ca if pl is not None else None)
        usable = {s.path_id: s for s in paths if s.alive and s.path_id not in scheduler.admin_down}
        return {p: live_cost(usable[p], cost) for p in path_order(weights, usable)}

    def overlaps_for(self, flow: Flow) -> dict[tuple[int, int], float]:
        """How the paths of a subflow's unit share links (`Routes.overlaps`; {} with two
        edges, whose paths share none)."""
        if not self.routes.is_fabric:
            return {}
        try:
            return self.routes.overlaps(self.routes.unit(self.unit_of(flow)))
        except KeyError:  # both ends behind one edge: no pair
            return {}

    def desired(self, scheduler: Scheduler, states: PathStates, now: float) -> dict[str, Pins]:
        """Per switch, the pin of each subflow in both directions (none without steering)."""
        out: dict[str, Pins] = {sw.name: {} for sw in self.net.switches}
        if not scheduler.params.mptcp.steering or not self.pipeline.has_mptcp:
            return out
        plan = self.tracker.plan(
            lambda flow: self.costs_for(flow, scheduler, states), now, scheduler.params.mptcp,
            self.overlaps_for,
        )
        for flow, old, new in self.tracker.moves:
            log.info("mptcp: subflow %s pinned to path %s (was %s)", flow, new, old)
        for flow, path_id in sorted(plan.items()):
            for sw, f in self._pin_places(flow, path_id):
                if len(out[sw]) >= self.pipeline.max_pins:
                    log.warning("%s: subflow_pin is full; %s not pinned", sw, f)
                    continue
                out[sw][(f.src, f.dst, f.sport, f.dport)] = path_id
        return out

    def _pin_places(self, flow: Flow, path_id: int) -> list[tuple[str, Flow]]:
        """Where a subflow pinned to `path_id` gets a pin: (switch, direction) pairs."""
        if not self.routes.is_fabric:
            return [
                (sw.name, f)
                for sw in self.net.switches
                if path_id in {p.id for p in sw.paths}
                for f in (flow, flow.reversed())
            ]
        places = []
        for f in (flow, flow.reversed()):
            try:
                unit = self.routes.unit(self.unit_of(f))
            except KeyError:  # both ends behind one edge (or no edge's subnet): no pair
                continue
            if path_id in self.routes.path_ids(unit):
                places.append((unit.ingress, f))
        return places

    def entries(self, pins: Pins) -> list[TableEntry]:
        return [self.pipeline.subflow_pin(*key, path_id) for key, path_id in pins.items()]

    def install(self, switch: str, pins: Pins) -> list[TableEntry]:
        """A (re)programmed switch gets every pin: record them as sent, return the entries."""
        self.sent[switch] = dict(pins)
        return self.entries(pins)

    def changes(
        self, switch: str, desired: Pins
    ) -> tuple[list[TableEntry], list[TableEntry], list[TableEntry]]:
        """(new, changed, removed) pin entries of a switch; records `desired` as sent."""
        sent = self.sent[switch]
        new = {k: p for k, p in desired.items() if k not in sent}
        changed = {k: p for k, p in desired.items() if k in sent and sent[k] != p}
        gone = {k: p for k, p in sent.items() if k not in desired}
        self.sent[switch] = dict(desired)
        return self.entries(new), self.entries(changed), self.entries(gone)

    def count(self, reads: Iterable[list], now: float, idle_s: float) -> list[Flow]:
        """The pins' direct counters as read from the switches (per switch, a list of
        (match, counter value)): subflows whose count moved are active; those idle for
        `idle_s` are dropped (returned; their pins go with the next step)."""
        totals: dict[Flow, int] = {}
        for read in reads:
            for match, value in read:
                found = self.tracker.find(flow_of(match))
                if found is not None:
                    key = found[1].flow
                    totals[key] = totals.get(key, 0) + value.packets
        self.tracker.touch(totals, now)
        gone = self.tracker.expire(now, idle_s)
        for flow in gone:
            log.info("mptcp: %s idle, unpinned", flow)
        return gone
