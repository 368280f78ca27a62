"""The telemetry intake's state (telemetry/intake.py): the estimators per path and
direction, the path counters, what changed since a pair's last step; the directions of a
switch's traffic and the estimator of each (path, direction).

A direction is ``"<ingress>-><egress>"``: the traffic from one edge to the other. With two
edges a switch's traffic has one direction; in a fabric every ordered pair of edges is one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from mpsched.controller.fabric.routes import PAIR_JOIN, Routes, pair_key
from mpsched.controller.telemetry.estimators import (
    EstimatorSettings,
    PathEstimator,
    TelemetryConfig,
)
from mpsched.controller.telemetry.share_cache import LinkShareCache
from mpsched.controller.telemetry.stats import PathStats
from mpsched.controller.telemetry.verdicts import sender_settings, verdict_settings
from mpsched.netcfg import NetCfg


def direction(ingress: str, egress: str) -> str:
    return pair_key(ingress, egress)


class IntakeBase:
    """What the intake keeps, and its directions and estimators by name (see
    `TelemetryIntake`, which adds the reports' ingestion, the probe decisions and the views)."""

    def __init__(
        self,
        net: NetCfg,
        estimators: EstimatorSettings,
        telemetry: TelemetryConfig,
        routes: Routes | None = None,
    ) -> None:
        self.net = net
        self.routes = routes or Routes(net)
        self.regimes = self.routes.regimes  # the pairs' probe regimes (telemetry/regimes.py)
        self.telemetry = telemetry
        # each switch's own settings under the probe cap (TelemetryConfig.for_targets)
        self.switch_telemetry = {
            sw.name: telemetry.for_targets(len(net.probe_targets(sw))) for sw in net.switches
        }
        # when a silent path is dead, and each sender's probe interval per regime by which
        # its estimators judge busy paths (telemetry/verdicts.py)
        self.settings = verdict_settings(estimators, telemetry, self.switch_telemetry,
                                         self.regimes.enabled)
        self._sender_settings = sender_settings(self.settings, self.switch_telemetry,
                                                self.regimes.enabled)
        # per direction (ingress edge, egress edge) of a fabric with regimes, when a report
        # last showed one of its paths busy: which pairs are active (regimes.active_pairs)
        self.busy_at: dict[tuple[int, int], float] = {}
        self.path_ids = sorted(net.path_ids())
        self.rates = {p.id: p.rate_mbps for sw in net.switches for p in sw.paths}
        self.stats = {p: PathStats(p) for p in self.path_ids}
        self.estimators: dict[tuple[int, str], PathEstimator] = {}
        # the same estimators by direction, then path id: a unit's view reads its direction's
        # only (a fabric of E edges has E * (E - 1) directions; scanning every estimator per
        # unit made a control step quadratic in the pairs, docs/results/scale.md)
        self.by_direction: dict[str, dict[int, PathEstimator]] = {}
        # the fabric's link shares (what the other pairs leave of each path's links), kept
        # between steps; the controller sets its port_rates
        self.shares = LinkShareCache(self.routes, self.by_direction)
        # a fabric's directions by (edge switch, its peer edge) and (edge, switch), as asked
        self._towards: dict[tuple[str, int], str] = {}
        self._from_edge: dict[tuple[int, str], str] = {}
        # per direction, how many reports and RTT samples it was handed: a control step may
        # skip a pair whose count did not move (`changes_at`,
        # src/mpsched/controller/scheduling/due.py)
        self.inputs: dict[str, int] = {}
        # per direction, when the first input since its pair's last step came (the stepper
        # takes it: `take_input_since`): how long a pair waited for its step
        self.input_since: dict[str, float] = {}
        # the directions handed an input since the stepper last took them (`take_dirty`)
        self.dirty: set[str] = set()
        # where the next telemetry period's recording starts (`due_records`)
        self._record_next = 0

    def other(self, switch: str) -> str:
        """The far edge of `switch` ("?" unless there are exactly two edges)."""
        others = [sw.name for sw in self.net.switches if sw.name != switch]
        return others[0] if len(others) == 1 else "?"

    def outgoing(self, switch: str) -> str:
        """The direction of `switch`'s outgoing traffic (two edges)."""
        return direction(switch, self.other(switch))

    def towards(self, switch: str, edge: int) -> str:
        """The direction of `switch`'s traffic towards edge `edge` (two edges: its one)."""
        if not self.routes.is_fabric:
            return self.outgoing(switch)
        where = self._peer_towards(switch, edge)
        return where if where is not None else direction(switch, self.net.edge_switch(edge).name)

    def _peer_towards(self, switch: str, edge: int) -> str | None:
        """A fabric edge switch's direction towards its peer edge `edge`, kept (asked per
        report: 16 000 a second at 64 leaves); None when `edge` is not a peer of it."""
        where = self._towards.get((switch, edge))
        if where is None and self.net.is_peer_edge(self.net.switch(switch), edge):
            where = self._towards[(switch, edge)] = direction(
                switch, self.net.edge_switch(edge).name)
        return where

    def _from(self, edge: int, switch: str) -> str:
        """The direction of the traffic from edge `edge` to `switch` (two edges: its one)."""
        if not self.routes.is_fabric:
            return direction(self.other(switch), switch)
        where = self._from_edge.get((edge, switch))
        if where is None:
            where = self._from_edge[(edge, switch)] = direction(
                self.net.edge_switch(edge).name, switch)
        return where

    def estimator(self, path_id: int, where: str) -> PathEstimator:
        """The estimator of (path, direction), counted as handed an input
        (`unit_inputs`): callers add a report or a sample to it."""
        self.inputs[where] = self.inputs.get(where, 0) + 1
        self.dirty.add(where)
        if where not in self.input_since:
            self.input_since[where] = time.time()
        key = (path_id, where)
        est = self.estimators.get(key)
        if est is None:
            # a direction is a pair's key (routes.py)
            sender, receiver = where.split(PAIR_JOIN, 1)
            fast = self._probed_fast(sender, receiver)
            settings = self._sender_settings.get((sender, fast), self.settings)
            est = self.estimators[key] = PathEstimator(path_id, settings)
            self.by_direction.setdefault(where, {})[path_id] = est
        return est

    def _probed_fast(self, sender: str, receiver: str) -> bool:
        """Whether the pair of the two switches is probed every probe interval (always
        without regimes)."""
        if not self.regimes.enabled:
            return True
        edges = self.routes.edge_of
        return self.regimes.probing_fast(edges[sender], edges[receiver])

    def set_probing(self, pairs: Iterable[tuple[int, int]], fast: bool) -> None:
        """The pairs of edges `pairs` are probed fast (else slowly) from now on: both of
        their directions' estimators judge busy paths by that probe interval."""
        for a, e in pairs:
            for src, dst in ((a, e), (e, a)):
                sender = self.net.edge_switch(src).name
                where = direction(sender, self.net.edge_switch(dst).name)
                for est in self.by_direction.get(where, {}).values():
                    est.settings = self._sender_settings[(sender, fast)]
