"""Telemetry intake: what the switches report, per path and direction, and the path states
the scheduler decides on.

The egress edge's path reports and the ingress edge's RTT reports of the traffic from one
edge to the other go to the estimator of that (path, direction)
(src/mpsched/controller/telemetry/estimators.py; the directions and estimators:
telemetry/intake_base.py). A path report names its ingress, `src_edge`; an RTT report its
egress, `peer_edge`. The counters each switch's agent polls go to the path's `PathStats`.
`unit_view` gives the scheduler the paths of one unit as seen for its direction
(telemetry/intake_views.py); `probe_wanted` tells the probers which probes go
(telemetry/probe_decisions.py).

Not thread-safe: the controller calls it under its lock (except `probe_wanted`, see there).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.telemetry.estimators import PathEstimator
from mpsched.controller.telemetry.history import history_keep
from mpsched.controller.telemetry.intake_views import IntakeViews
from mpsched.controller.telemetry.probe_decisions import ProbeDecisions
from mpsched.controller.telemetry.stats import Sample

log = logging.getLogger(__name__)

# estimators recorded per hold of the lock (`record`; a snapshot takes about 10 µs: 5 ms a hold)
RECORD_CHUNK = 500


class TelemetryIntake(ProbeDecisions, IntakeViews):
    """Reports and counters in (here), probe decisions (probe_decisions.py) and path states
    out (intake_views.py), over the estimators of intake_base.py."""

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
