"""The updates of a fabric's probe regimes (src/mpsched/controller/telemetry/regimes.py;
docs/fabric-controller.md,
"Probe regimes").

Every REGIME_CHECK_S a thread of the controller asks `RegimeKeeper.update`: under the lock,
which pairs of edges are active now (`active_pairs`, from the estimators' busy_at) and what
changes (`plan`); the pairs whose probes speed up or slow down do so at once (the probers
ask `TelemetryIntake.probe_wanted`, the estimators judge busy paths by the new interval), and
the liveness entries of the pairs whose dead_after changes are MODIFYd on both their edges,
one write per switch for all of them, through the same write path as a re-route's entries
(southbound/writes.py `upsert_forwarding`, a job of each switch's agent). Once both edges of
a pair acknowledged, its new dead_after is the state that a (re)programmed switch gets
(`Routes.forwarding`); a pair whose write failed is planned again at the next update. Only
the primary controller updates, and only edges whose agents are ready are written. After
each update the pairs' report intervals follow their probes (report_ops.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.southbound.forwarding import regime_entries
from mpsched.controller.southbound.pair_writes import acknowledged, pair_names, submit_entries
from mpsched.controller.southbound.report_ops import ReportKeeper
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.regimes import EdgePair, Transition, active_pairs, plan
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)

REGIME_CHECK_S = 0.1  # how often the pairs' regimes are updated


class RegimeKeeper:
    def __init__(
        self,
        lock: AbstractContextManager[Any],
        routes: Routes,
        intake: TelemetryIntake,
        pipeline: Pipeline,
        agents: Sequence[SwitchAgent],
        write_timeout: float,
    ) -> None:
        self.lock = lock
        self.routes = routes
        self.regimes = routes.regimes
        self.intake = intake
        self.pipeline = pipeline
        self.agents = agents
        self.write_timeout = write_timeout
        # a pair probed fast for this long has been heard of on every working path: the
        # longest fast dead_after of any edge (each its own under the probe cap)
        self.settle_s = max((c.dead_after_us for c in intake.switch_telemetry.values()),
                            default=0) / 1e6
        self.reports = ReportKeeper(lock, routes, intake.telemetry, pipeline, agents,
                                    write_timeout)

    def _ready_edges(self) -> frozenset[int]:
        net = self.routes.net
        return frozenset(net.edge_id(a.sw) for a in self.agents
                         if a.status.state == "ready" and net.is_edge(a.sw))

    def update(self, now: float) -> Transition:
        """One update at `now` (the estimators' clock): the changes it planned; then the
        report intervals' (`ReportKeeper.sync`)."""
        change = self._update(now)
        self.reports.sync(self._ready_edges())
        return change

    def _update(self, now: float) -> Transition:
        if not self.regimes.enabled:
            return Transition()
        with self.lock:
            active = active_pairs(self.intake.busy_at, now, self.intake.telemetry.idle_after_s)
            change = plan(self.regimes.state, active, now, self.settle_s, self._ready_edges())
            if not change:
                return change
            # the probes change at once: faster is always safe, slower only comes for pairs
            # whose slow dead_after was acknowledged at an earlier update
            self.regimes.update(Transition(probe_fast=change.probe_fast,
                                           probe_slow=change.probe_slow), (), now)
            self.intake.set_probing(change.probe_fast, fast=True)
            self.intake.set_probing(change.probe_slow, fast=False)
            self._poke(change.probe_fast)
            futures = self._submit(change)
        written = acknowledged(self.routes.net, change.writes, futures, self.write_timeout,
                               "probe regimes: liveness")
        with self.lock:
            self.regimes.update(Transition(live_fast=change.live_fast,
                                           live_slow=change.live_slow), written, now)
        log.info("probe regimes: active %s, idle %s; dead_after fast %s, idle %s",
                 pair_names(change.probe_fast), pair_names(change.probe_slow),
                 pair_names(change.live_fast & written), pair_names(change.live_slow & written))
        return change

    def _poke(self, pairs: frozenset[EdgePair]) -> None:
        """A round of probes now on both edges of each pair that turned fast: their probers may
        be ticking at the idle interval (TelemetryIntake.probe_tick_s), and the fast probes must
        run for settle_s before the fast dead_after is written."""
        net = self.routes.net
        edges = {e for pair in pairs for e in pair}
        for agent in self.agents:
            if net.is_edge(agent.sw) and net.edge_id(agent.sw) in edges:
                agent.poke_prober()

    def _submit(self, change: Transition) -> dict[str, Future]:
        """One job per switch with entries to write (under the lock)."""
        if not change.writes:
            return {}
        entries = regime_entries(self.pipeline, self.routes.net, self.routes.installed_ids(),
                                 self.intake.telemetry, change.live_fast, change.live_slow)
        return submit_entries(self.agents, self.pipeline, entries)



__all__ = ["REGIME_CHECK_S", "RegimeKeeper"]
