"""Telemetry intake: what the switches report, per path and direction, and the path states
the scheduler decides on.

A direction is ``"<ingress>-><egress>"``: the egress edge's path reports and the ingress
edge's RTT reports of the traffic from one edge to the other go to the estimator of that
(path, direction) (src/mpsched/controller/telemetry/estimators.py). With two edges a switch's
traffic has
one direction; in a fabric every ordered pair of edges is one (a path report names its
ingress, `src_edge`; an RTT report its egress, `peer_edge`). The counters each switch's agent
polls go to the path's `PathStats`. `unit_view` gives the scheduler the paths of one unit
(src/mpsched/controller/fabric/routes.py: a switch's traffic, or a fabric pair's) as seen for its
direction; a
fabric pair's path ids that it does not have now (re-routed away) are out of service there,
and its paths' capacity is what the other pairs leave of their links (telemetry/sharing.py).

Not thread-safe: the controller calls it under its lock (except `probe_wanted`, see there).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from mpsched.controller.fabric.routes import PAIR_JOIN, Routes, Unit, pair_key
from mpsched.controller.model.paths import PathCounters, PathState
from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.telemetry.config import IDLE_PROBE_INTERVAL_S
from mpsched.controller.telemetry.estimators import (
    EstimatorSettings,
    PathEstimator,
    TelemetryConfig,
    probe_needed,
)
from mpsched.controller.telemetry.history import history_keep
from mpsched.controller.telemetry.share_cache import LinkShareCache
from mpsched.controller.telemetry.sharing import path_available_mbps
from mpsched.controller.telemetry.stats import PathStats, Sample
from mpsched.controller.telemetry.verdicts import sender_settings, verdict_settings
from mpsched.netcfg import NetCfg

log = logging.getLogger(__name__)

MIN_RTO_MS = 200.0  # Linux's lower bound of the retransmission timeout

# estimators recorded per hold of the lock (`record`; a snapshot takes about 10 µs: 5 ms a hold)
RECORD_CHUNK = 500


def direction(ingress: str, egress: str) -> str:
    return pair_key(ingress, egress)


class TelemetryIntake:
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

    # -- what the agents hand over -------------------------------------------

    def on_sample(self, switch: str, samples: dict[int, Sample]) -> None:
        for path_id, sample in samples.items():
            self.stats[path_id].update(switch, sample)

    def ingest_report(self, report: PathReport) -> None:
        """A path report of the egress edge `report.switch` (traffic from `src_edge`), of a
        path id of the network or of a watched path (routes.py)."""
        if report.path_id not in self.stats and report.path_id not in self.routes.installed_ids():
            log.debug("report for unknown path %d ignored", report.path_id)
            return
        where = self._from(report.src_edge, report.switch)
        est = self.estimator(report.path_id, where)
        est.add_report(report)
        if est.busy_at == report.received_at and self.regimes.enabled:
            self.busy_at[(report.src_edge, self.routes.edge_of[report.switch])] = est.busy_at

    def ingest_rtt(self, switch: str, path_id: int, rtt_ms: float, at: float) -> None:
        """An RTT sample measured by the ingress edge `switch` for its traffic on a path."""
        if path_id in self.stats:
            self.estimator(path_id, self.outgoing(switch)).add_rtt(rtt_ms, at)

    def ingest_rtt_report(self, report: RttReport) -> None:
        """An RTT report of the ingress edge `report.switch` (its traffic on a path): the
        RTT sample, the path's retransmission count and bytes in flight."""
        if report.path_id not in self.stats:
            return
        if not self.routes.is_fabric:
            where: str | None = self.outgoing(report.switch)
        else:
            where = self._peer_towards(report.switch, report.peer_edge)
        if where is None:
            log.debug("%s: RTT report towards edge %d ignored (no peer edge)",
                      report.switch, report.peer_edge)
            return
        est = self.estimator(report.path_id, where)
        est.add_rtt(report.rtt_us / 1000, report.received_at)
        est.add_rtt_report(report.retrans, report.inflight_bytes, report.received_at)

    def record(self, now: float,
               hold: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        """This period's share of the estimators (`due_records`) into their histories,
        each `hold()` (the controller's lock, after a waiting control step) for
        RECORD_CHUNK estimators, so that a large fabric's recording does not hold up a
        control step."""
        hold = hold or contextlib.nullcontext
        with hold():
            due, keep = self.due_records()
        for i in range(0, len(due), RECORD_CHUNK):
            with hold():
                for est in due[i:i + RECORD_CHUNK]:
                    est.record(now, keep)

    def due_records(self) -> tuple[list[PathEstimator], int]:
        """The estimators to record this telemetry period, and how many snapshots each keeps
        (`history.history_keep`): all of them, or on a fabric of more paths than
        `history_per_period` that many, in turn (each path about every paths / that periods;
        estimators are only ever added, so the turn is stable)."""
        cfg = self.settings
        ests = list(self.estimators.values())
        keep = history_keep(len(ests), cfg.history, cfg.history_budget)
        per = cfg.history_per_period
        if len(ests) <= per:
            return ests, keep
        start = self._record_next % len(ests)
        due = (ests[start:] + ests[:start])[:per]
        self._record_next = (start + per) % len(ests)
        return due, keep

    def probe_wanted(self, switch: str, dst_edge: int, path_id: int, now: float) -> bool:
        """Should `switch` probe its path `path_id` towards edge `dst_edge` now? An idle
        pair's path only once its last probe is an idle interval old (regimes.py); an active
        pair's not while its own traffic on the path keeps the far edge measured
        (`probe_needed`, with `probe_idle_only`, for the pair's report interval in force,
        telemetry/report_rates.py). Whether a fabric pair has the path id
        installed now is `probe_installed`'s, which the prober asks first
        (src/mpsched/controller/southbound/prober.py). Called from the probers' threads without the
        controller's lock (a race only costs a probe)."""
        cfg = self.switch_telemetry[switch]
        if self.regimes.enabled:
            idle_s, tick_s = cfg.idle_interval_s, self.probe_tick_s(switch)
            if idle_s is not None and tick_s is not None:
                due = self.regimes.idle_probe_wanted(switch, self.routes.edge_of[switch],
                                                     dst_edge, path_id, now, idle_s, tick_s)
                if due is not None:
                    return due
        if not cfg.probe_idle_only:
            return True
        where = self.towards(switch, dst_edge)
        est = self.estimators.get((path_id, where))
        if est is None:
            return True
        try:
            rtt_min = est.rtt_min_ms()
        except IndexError:  # the window emptied under us
            return True
        pair = self.routes.reports.intervals(cfg, self.routes.edge_of[switch], dst_edge)
        return probe_needed(now, est.busy_at, rtt_min, cfg, pair.report_us)

    def probe_tick_s(self, switch: str) -> float:
        """How long `switch`'s prober waits between rounds now: its probe interval while any
        pair of its edge is probed fast, else the idle interval (nothing is due more often;
        a pair that turns active pokes the prober, src/mpsched/controller/southbound/regime_ops.py).
        Called from the probers' threads without the controller's lock (the regimes' state is
        replaced whole, never changed in place)."""
        cfg = self.switch_telemetry[switch]
        fast_s, idle_s = cfg.probe_interval_s, cfg.idle_interval_s
        if fast_s is None:  # no probes: no prober asks
            return IDLE_PROBE_INTERVAL_S
        if not self.regimes.enabled or idle_s is None:
            return fast_s
        edge = self.routes.edge_of[switch]
        if any(edge in pair for pair in self.regimes.state.probed_fast):
            return fast_s
        return idle_s

    def probe_installed(self, switch: str, dst_edge: int, path_id: int) -> bool:
        """Whether `switch` has its path `path_id` towards edge `dst_edge` installed now: one
        of the pair's current paths or a watched one (routes.py); always with two edges."""
        if not self.routes.is_fabric:
            return True
        return (self.routes.edge_of[switch], dst_edge, path_id) in self.routes.installed_keys

    # -- what the scheduler and the views read ---------------------------------

    def path_state(
        self, path_id: int, where: str, now: float, rate: float | None = None,
        bottleneck: float | None = None,
    ) -> PathState:
        """One path as its estimator of direction `where` sees it (`rate`: its capacity, else
        the description's rate for the path id; `bottleneck`: a fabric path's configured
        rate, when `rate` is what other pairs leave of it)."""
        est = self.estimators.get((path_id, where))
        rate = rate if rate is not None else self.rates.get(path_id)
        if est is None:
            return PathState(path_id, alive=True, capacity_mbps=rate, bottleneck_mbps=bottleneck)
        rtt_min, rtt_max = est.rtt_min_max_ms()
        # srtt, rttvar and in-flight age towards a neutral prior on a path without RTT
        # reports (estimators.py): an idle path is not judged by its last busy moment
        srtt, rttvar = est.srtt_aged_ms(now), est.rttvar_aged_ms(now)
        rto = None
        if srtt is not None and rttvar is not None:
            rto = max(MIN_RTO_MS, srtt + 4 * rttvar)
        counters = est.counters()
        return PathState(
            path_id,
            alive=est.alive(now) is not False,
            srtt_ms=srtt,
            rttvar_ms=rttvar,
            rtt_min_ms=rtt_min,
            rtt_max_ms=rtt_max,
            loss_rate=est.loss_rate(),
            goodput_mbps=est.goodput_mbps(),
            capacity_mbps=rate if rate else est.capacity_mbps(),
            inflight_bytes=est.inflight_aged(now),
            owd_ms=est.owd_ms(),
            owd_series_ms=est.owd_series_ms(64),
            retrans=est.retrans(),
            reordered=est.reordered(),
            rto_ms=rto,
            owd_raw_ms=est.owd_raw_ms(),
            counters=None if counters is None else PathCounters(*counters),
            bottleneck_mbps=bottleneck,
        )

    def path_states(self, switch: str, now: float) -> list[PathState]:
        """The paths as seen for `switch`'s outgoing traffic (its direction's estimators)."""
        where = self.outgoing(switch)
        return [self.path_state(pid, where, now) for pid in self.path_ids]

    def unit_view(self, unit: Unit, now: float) -> SwitchView:
        """What the scheduler's step for `unit` reads: its path states, and the flow
        reordering measured by the far edge (the egress of its traffic). A fabric pair's
        path ids it does not have now are dead there (out of service)."""
        where = unit.direction
        ooo = {pid: est.flow_ooo_total() for pid, est in self.by_direction.get(where, {}).items()}
        if not self.routes.is_fabric:
            return SwitchView(unit.key, self.path_states(unit.ingress, now), ooo)
        rates = self.routes.rates(unit)
        shares = self.shares.get(now)
        paths = self.routes.pair_paths(unit)
        states = []
        for pid in self.path_ids:
            if pid not in rates:
                states.append(PathState(pid, alive=False))
                continue
            available = path_available_mbps(shares, unit.key, paths[pid])
            rate = available if available is not None else rates[pid]
            states.append(self.path_state(pid, where, now, rate, rates[pid]))
        return SwitchView(unit.key, states, ooo)

    def unit_inputs(self, unit: Unit) -> int:
        """How many reports and RTT samples the unit's direction was handed so far."""
        return self.inputs.get(unit.direction, 0)

    def take_dirty(self) -> set[str]:
        """The directions handed an input since the last call (scheduling/due.py)."""
        dirty, self.dirty = self.dirty, set()
        return dirty

    def take_input_since(self, unit: Unit) -> float | None:
        """When the first input since the last call for the unit's direction came (None:
        none since); the next input starts anew."""
        return self.input_since.pop(unit.direction, None)

    def changes_at(self, unit: Unit, now: float, age_step_s: float) -> float:
        """When `unit_view` changes without another input (`PathEstimator.changes_at` of its
        direction's estimators; math.inf: not before one)."""
        ests = self.by_direction.get(unit.direction, {})
        return min((e.changes_at(now, age_step_s) for e in ests.values()), default=math.inf)

    def switch_view(self, switch: str, now: float) -> SwitchView:
        """The view of a two-edge switch's one unit (`unit_view`)."""
        return self.unit_view(self.routes.units_at(switch)[0], now)

    def snapshots(self, path_id: int, now: float) -> dict[str, dict[str, Any]]:
        """Per direction, the current estimates of one path."""
        return {
            d: est.snapshot(now)
            for (p, d), est in sorted(self.estimators.items())
            if p == path_id
        }

    def histories(self, path_id: int) -> dict[str, list[dict[str, Any]]]:
        """Per direction, the recorded history of one path."""
        return {
            d: list(est.history) for (p, d), est in sorted(self.estimators.items()) if p == path_id
        }

    def history_since(self, since: float, direction: str | None = None
                      ) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """Per path (id as a string) and direction (`direction` only, if given), the history
        entries newer than `since`."""
        out: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for (p, d), est in sorted(self.estimators.items()):
            if direction is not None and d != direction:
                continue
            out.setdefault(str(p), {})[d] = est.history.since(since)
        return out
