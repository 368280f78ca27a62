"""The operator's side of the routing (src/mpsched/controller/fabric/routes.py): the fabric's links
and the scheduler's pairs as REST views, and a link's administrative state.

A pair is one unit of the scheduler: an ordered pair of a fabric's edges, keyed
``"<ingress>-><egress>"`` (e.g. ``"leaf1->leaf3"``), or, with two edges, a switch's traffic
towards its peer, keyed by the switch's name (as its placements always were). Its view lists
its paths now (ids, switches, links, bottleneck rate), its placement per class, the
current estimates of its paths in its direction and its probe regime, active or idle
(src/mpsched/controller/telemetry/regimes.py; docs/rest.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from mpsched.controller.fabric.routes import Routes, Unit
from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.operator import Operator
from mpsched.controller.model.errors import NotFoundError
from mpsched.controller.northbound import answers, views
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.ports import DirectionLoad, PortRate, link_loads
from mpsched.controller.telemetry.regimes import IDLE
from mpsched.fabric.ports import port_map

PortRates = Mapping[str, Mapping[int, PortRate]]  # switch -> port -> its latest rate


def direction_view(load: DirectionLoad) -> views.LinkDirectionView:
    return views.LinkDirectionView(
        src=load.src, dst=load.dst, port=load.port, rate_mbps=load.rate_mbps,
        mbps=load.mbps, utilisation=load.utilisation,
    )


def cut_off_warning(key: str, has_paths: bool) -> str:
    why = ("every path of it is administratively down" if has_paths
           else "every route crosses a link that is down")
    return f"{key}: no usable path left ({why}); its traffic has nowhere to go"


class FabricOps:
    def __init__(
        self,
        lock: AbstractContextManager[Any],
        routes: Routes,
        keeper: IntentKeeper,
        intake: TelemetryIntake,
        operator: Operator,
        port_rates: Callable[[], PortRates] = dict,
    ) -> None:
        """`port_rates`: each switch's ports' latest transmit rates (the agents' `PortMeter`s,
        src/mpsched/controller/telemetry/ports.py)."""
        self.lock = lock
        self.routes = routes
        self.keeper = keeper
        self.intake = intake
        self.operator = operator
        self.port_rates = port_rates
        self.ports = port_map(routes.fabric) if routes.fabric is not None else {}

    # -- links -------------------------------------------------------------------

    def _crossings(self) -> dict[str, int]:
        """{link name: how many pairs' current paths cross it}."""
        count: dict[str, int] = {}
        for unit in self.routes.units():
            for path in self.routes.pair_paths(unit).values():
                for name in path.links:
                    count[name] = count.get(name, 0) + 1
        return count

    def links(self) -> list[views.LinkView]:
        """Every link of the fabric with its load per direction ([] with two edges)."""
        fabric = self.routes.fabric
        if fabric is None:
            return []
        loads = link_loads(fabric, self.ports, self.port_rates())
        with self.lock:
            crossings = self._crossings()
            failed = self.routes.links_failed
            return [
                views.LinkView(
                    name=name, a=a, b=b, admin="up" if up else "down",
                    inferred="down" if name in failed else "up",
                    alive=up and name not in failed and crossings.get(name, 0) > 0,
                    paths=crossings.get(name, 0),
                    forward=direction_view(loads[name][0]),
                    reverse=direction_view(loads[name][1]),
                )
                for name, a, b, up in self.routes.links()
            ]

    def link(self, name: str) -> views.LinkView:
        for link in self.links():
            if link.name == name:
                return link
        raise NotFoundError(f"no link {name}")

    def set_link_admin(self, name: str, up: bool) -> answers.LinkChangeView:
        """Down: re-route around the link; up: back (operator.py); the link afterwards, with
        a warning for each pair left without a usable path (`cut_off`)."""
        self.operator.set_link_admin(name, up)
        return answers.LinkChangeView(**self.link(name).model_dump(), warnings=self.cut_off())

    def cut_off(self) -> list[str]:
        """A warning per pair (per switch with two edges) none of whose paths is usable: the
        routing left it none (its links are down or held failed) or every one it has is
        administratively down."""
        with self.lock:
            down = self.keeper.scheduler.admin_down
            return [cut_off_warning(u.key, bool(self.routes.path_ids(u)))
                    for u in self.routes.units() if not set(self.routes.path_ids(u)) - down]

    # -- pairs -------------------------------------------------------------------

    def _paths(self, unit: Unit) -> list[views.PairPathView]:
        if not self.routes.is_fabric:
            return [
                views.PairPathView(id=p.id, hops=1, switches=[unit.ingress, unit.egress],
                                   links=[], rate_mbps=p.rate_mbps)
                for p in sorted(self.routes.net.switch(unit.ingress).paths, key=lambda p: p.id)
            ]
        rates = self.routes.rates(unit)
        return [
            views.PairPathView(id=pid, hops=path.hops, switches=list(path.switches),
                               links=list(path.links), rate_mbps=rates[pid])
            for pid, path in sorted(self.routes.pair_paths(unit).items())
        ]

    def _view(self, unit: Unit, now: float) -> views.PairView:
        scheduler = self.keeper.scheduler
        telemetry = {}
        for pid in self.routes.path_ids(unit):
            snap = self.intake.snapshots(pid, now).get(unit.direction)
            if snap is not None:
                telemetry[str(pid)] = snap
        edges = self.routes.edge_of
        probing = self.routes.regimes.regime(edges[unit.ingress], unit.dst_edge)
        return views.PairView(
            id=unit.key, ingress=unit.ingress, egress=unit.egress, dst_edge=unit.dst_edge,
            probing="idle" if probing == IDLE else "active", paths=self._paths(unit),
            placement={
                str(cid): views.placement_view(scheduler.placement_of(unit.key, cid))
                for cid in sorted(scheduler.classes)
            },
            telemetry=telemetry,
        )

    def pairs(self) -> list[views.PairView]:
        now = time.time()
        with self.lock:
            return [self._view(u, now) for u in self.routes.units()]

    def pair(self, key: str) -> views.PairView:
        now = time.time()
        with self.lock:
            try:
                unit = self.routes.unit(key)
            except KeyError:
                raise NotFoundError(f"no pair {key}") from None
            return self._view(unit, now)
