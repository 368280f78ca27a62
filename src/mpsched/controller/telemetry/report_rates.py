"""How often each pair of edges reports (pure): the report and RTT report intervals the
controller sets per (peer edge, path) in the data plane (report_config, rtt_config;
docs/fabric-dataplane.md, "Report intervals").

Two edges keep the configured intervals (`TelemetryConfig.report_interval_us`,
`rtt_interval_us`: 10 ms by default). On a fabric a pair of edges reports at the rate the
controller consumes, which is far below one report per 10 ms:

- an *active* pair (one that carried data within `idle_after_s`, src/mpsched/controller/telemetry/
  regimes.py) every ACTIVE_REPORT_INTERVAL_US. The control loop steps a pair at most once per
  control period (100 ms by default, scheduling/params_changes.py CONTROL_PERIOD_MS; a pair's
  step only reads its latest view, scheduling/due.py), and the estimators keep 5 s windows
  (windows.py `window_s`) of cumulative counters, so loss and goodput are the same from any
  two points of the window and capacity needs a few points per 1 s stretch. What a slower
  report costs is the verdicts: a path counts as dead, and its RTT as stale, after
  REPORTS_PER_VERDICT (4) report intervals at least (telemetry/verdicts.py). 250 ms is the
  longest interval that keeps both at their 1 s defaults (`EstimatorSettings.dead_after_s`,
  `stale_after_s`), and every report it sends reaches a step (2.5 control periods apart);
- an *idle* pair (probes only) every IDLE_REPORT_INTERVAL_US: nothing is scheduled on it,
  its reports only keep its paths alive for the controller, whose verdict for them stretches
  to REPORTS_PER_VERDICT seconds (`verdicts.sender_settings`).

A switch whose report cap stretches its own intervals beyond these (`for_targets`, a large
fabric) keeps its own. `ReportRates` holds which pairs' reports run at the active interval
in the data plane now (`fast`): those acknowledged by both edges. The pairs follow their probe
regime (src/mpsched/controller/southbound/report_ops.py): a pair probed fast reports fast once both
its edges acknowledged the write; one that turned idle counts as slow from the moment its write is
sent, so that nothing reads a faster interval than the data plane may have
(`config.probe_needed` holds a busy path's probes for the interval in force).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from mpsched.controller.telemetry.config import TelemetryConfig
from mpsched.controller.telemetry.regimes import EdgePair, edge_pair

ACTIVE_REPORT_INTERVAL_US = 250_000  # an active pair's, on a fabric (module docstring)
IDLE_REPORT_INTERVAL_US = 1_000_000  # an idle pair's, on a fabric


@dataclass(frozen=True)
class Intervals:
    """The report and RTT report intervals of one (peer edge, path) cell, µs."""

    report_us: int
    rtt_us: int


def pair_intervals(own: TelemetryConfig, fabric: bool, slow: bool) -> Intervals:
    """The intervals a switch with settings `own` (its own, `TelemetryConfig.for_targets`)
    sets for a peer: two edges its own; on a fabric the active pair's, or with `slow` the idle
    pair's, unless its own are longer."""
    if not fabric:
        return Intervals(own.report_interval_us, own.rtt_interval_us)
    floor = IDLE_REPORT_INTERVAL_US if slow else ACTIVE_REPORT_INTERVAL_US
    return Intervals(max(own.report_interval_us, floor), max(own.rtt_interval_us, floor))


@dataclass(frozen=True)
class Sync:
    """The pairs whose intervals one update writes: to the active ones (`to_fast`), to the
    idle ones (`to_slow`)."""

    to_fast: frozenset[EdgePair] = frozenset()
    to_slow: frozenset[EdgePair] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.to_fast or self.to_slow)


def plan_sync(wanted_fast: frozenset[EdgePair], fast: frozenset[EdgePair],
              unsure: frozenset[EdgePair], writable: Collection[int]) -> Sync:
    """What moves the data plane's report intervals towards `wanted_fast` (the pairs probed
    fast): `fast` are those it has acknowledged at the active interval, `unsure` those whose
    slow write failed (the data plane may still report fast). Only pairs both of whose edges
    are `writable` are written."""

    def both(pair: EdgePair) -> bool:
        return pair[0] in writable and pair[1] in writable

    return Sync(
        to_fast=frozenset(p for p in wanted_fast - fast if both(p)),
        to_slow=frozenset(p for p in (fast | unsure) - wanted_fast if both(p)),
    )


class ReportRates:
    """Which pairs of a fabric report at the active interval now (`fast`; the others at the
    idle one), read by the routing (each edge's report entries) and the probers
    (`report_interval_us`). `regimes` False (two edges, or a fabric without probe regimes):
    every pair active, for good. Replaced whole, never changed in place: the probers read it
    without the controller's lock."""

    def __init__(self, fabric: bool = False, regimes: bool = False) -> None:
        self.fabric = fabric
        self.regimes = regimes
        self.fast: frozenset[EdgePair] = frozenset()
        self.unsure: frozenset[EdgePair] = frozenset()  # slow writes not acknowledged

    def is_slow(self, a: int, b: int) -> bool:
        """Whether the pair of edges `a` and `b` reports at the idle interval (or may)."""
        return self.regimes and edge_pair(a, b) not in self.fast

    def slow_peers(self, edge: int, peers: Iterable[int]) -> frozenset[int]:
        """The peers of `edge` whose pair with it reports at the idle interval."""
        return frozenset(e for e in peers if self.is_slow(edge, e))

    def intervals(self, own: TelemetryConfig, a: int, b: int) -> Intervals:
        """The intervals in force for the pair of edges `a` and `b` on an edge with settings
        `own` (two edges: `b` is not looked at)."""
        return pair_intervals(own, self.fabric, self.fabric and self.is_slow(a, b))

    def starting(self, sync: Sync) -> None:
        """Before `sync`'s writes: its pairs going slow count as slow at once."""
        self.fast = self.fast - sync.to_slow

    def written(self, sync: Sync, acknowledged: Collection[EdgePair]) -> None:
        """After `sync`'s writes, of which those of the pairs `acknowledged` were
        acknowledged by both edges."""
        done = frozenset(acknowledged)
        self.fast = self.fast | (sync.to_fast & done)
        self.unsure = (self.unsure | sync.to_slow) - done


__all__ = [
    "ACTIVE_REPORT_INTERVAL_US", "IDLE_REPORT_INTERVAL_US", "Intervals", "ReportRates", "Sync",
    "pair_intervals", "plan_sync",
]
