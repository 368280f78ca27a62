"""A fabric's link shares, kept between control steps.

The link shares (telemetry/sharing.py: every pair's load on every link direction, and what a
pair's path has left) read every pair's alive paths' delivered rates and the port counters'
measured loads. At 64 leaves (16 128 paths) computing them takes tens of milliseconds, so
`LinkShareCache` keeps them per routing and recomputes them no more often than every
SHARES_COST_FACTOR times what computing them took; `refresh` lets the control loop compute
them after a step's writes instead of inside the next step's latency (docs/results/scale.md).

Not thread-safe: the controller calls it under its lock, through the telemetry intake.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.telemetry.estimators import PathEstimator
from mpsched.controller.telemetry.ports import PortRate, link_loads
from mpsched.controller.telemetry.sharing import LinkDir, LinkShare, PathKey, link_shares
from mpsched.fabric.paths import Path

# The shares are computed anew once per control step, but no more often than every this many
# times what computing them took: a small fabric's take well under a millisecond (every
# step), a fabric of 64 leaves' (16 128 paths) tens of ms (every second or so); the goodputs
# they sum are 5 s windows.
SHARES_COST_FACTOR = 20.0

PortRates = Mapping[str, Mapping[int, PortRate]]  # switch -> port -> its latest rate
Shares = dict[LinkDir, LinkShare]


class LinkShareCache:
    """The link shares of the current routing, as of the last computation."""

    def __init__(self, routes: Routes,
                 by_direction: Mapping[str, Mapping[int, PathEstimator]]) -> None:
        self.routes = routes
        self.by_direction = by_direction  # the intake's estimators by direction, then path id
        # each switch's ports' latest transmit rates (the agents' PortMeters; the controller
        # sets it): bounds the other pairs' load on a link
        self.port_rates: Callable[[], PortRates] | None = None
        self._shares: tuple[float, object, Shares] | None = None  # (when, routing, shares)
        self.cost_s = 0.0  # what computing them took last
        # per routing, each pair's key, direction and paths (what a computation walks)
        self._pairs: tuple[object, list[tuple[str, str, dict[int, Path]]]] | None = None

    def get(self, now: float) -> Shares:
        """The shares at `now` ({} with two edges): computed once per control step (`now`)
        and routing, and no more often than every SHARES_COST_FACTOR times their cost."""
        if self.routes.fabric is None or self.routes.routing is None:
            return {}
        cached = self._shares
        if cached is not None and cached[1] is self.routes.routing and (
                cached[0] == now or 0 <= now - cached[0] < SHARES_COST_FACTOR * self.cost_s):
            return cached[2]
        return self._compute(now)

    def refresh(self, now: float, ahead_s: float) -> bool:
        """Compute the shares now if a step `ahead_s` from now would have to (they would be
        stale by then) and they outlive `ahead_s` once computed: the control loop calls it
        after a step's writes, so that the step after it does not spend the computation
        inside its own latency (64 leaves: 20-65 ms in one step of seven, docs/results/
        scale.md). A small fabric's shares, cheaper than `ahead_s` / SHARES_COST_FACTOR,
        stay each step's own. True if computed."""
        routing = self.routes.routing
        if self.routes.fabric is None or routing is None:
            return False
        if SHARES_COST_FACTOR * self.cost_s < ahead_s:
            return False
        cached = self._shares
        if cached is not None and cached[1] is routing and (
                now + ahead_s - cached[0] < SHARES_COST_FACTOR * self.cost_s):
            return False
        self._compute(now)
        return True

    def _compute(self, now: float) -> Shares:
        assert self.routes.fabric is not None
        t0 = time.perf_counter()
        routing = self.routes.routing
        if self._pairs is None or self._pairs[0] is not routing:
            self._pairs = (routing, [(u.key, u.direction, self.routes.pair_paths(u))
                                     for u in self.routes.units()])
        pair_paths: dict[str, dict[int, Path]] = {}
        loads: dict[PathKey, float | None] = {}
        for key, where, paths in self._pairs[1]:
            pair_paths[key] = paths
            ests = self.by_direction.get(where, {})
            for pid in paths:
                est = ests.get(pid)
                if est is not None and est.alive(now) is not False:  # a dead path carries 0
                    loads[(key, pid)] = est.goodput_mbps()
        shares = link_shares(self.routes.fabric, pair_paths, loads, self._measured())
        self._shares = (now, routing, shares)
        self.cost_s = time.perf_counter() - t0
        return shares

    def _measured(self) -> dict[LinkDir, float | None]:
        """Each link direction's load by the port counters ({} when not known)."""
        if self.routes.fabric is None or self.port_rates is None:
            return {}
        loads = link_loads(self.routes.fabric, self.routes.ports, self.port_rates())
        return {(name, d.src): d.mbps for name, pair in loads.items() for d in pair}
