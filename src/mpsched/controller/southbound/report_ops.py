"""The updates of a fabric's report intervals per pair of edges (src/mpsched/controller/telemetry/
report_rates.py; docs/fabric-dataplane.md, "Report intervals").

After each update of the probe regimes (src/mpsched/controller/southbound/regime_ops.py)
`ReportKeeper.sync` moves the data plane's report_config and rtt_config entries towards the regimes:
a pair probed fast reports at the active pair's intervals, the others at the idle pair's. Under the
lock it plans (`plan_sync`: also the pairs whose earlier write failed), counts the pairs going slow
as slow at once, and submits one job per switch through the same write path as the liveness entries
(southbound/writes.py `upsert_forwarding`); once both edges of a pair acknowledged, the pair's
new interval is in force (the state a (re)programmed switch gets, `Routes.forwarding`, and
the one `config.probe_needed` holds a busy path's probes for). The regimes switch a pair's
estimators to its new probe interval and verdicts first (`TelemetryIntake.set_probing`), so
that an idle pair's estimators tolerate its slow reports before they slow down.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.southbound.forwarding import report_sync_entries
from mpsched.controller.southbound.pair_writes import acknowledged, pair_names, submit_entries
from mpsched.controller.telemetry.config import TelemetryConfig
from mpsched.controller.telemetry.report_rates import Sync, plan_sync
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)


class ReportKeeper:
    def __init__(
        self,
        lock: AbstractContextManager[Any],
        routes: Routes,
        telemetry: TelemetryConfig,
        pipeline: Pipeline,
        agents: Sequence[SwitchAgent],
        write_timeout: float,
    ) -> None:
        self.lock = lock
        self.routes = routes
        self.telemetry = telemetry
        self.pipeline = pipeline
        self.agents = agents
        self.write_timeout = write_timeout

    def sync(self, writable: frozenset[int]) -> Sync:
        """One update: the pairs written (both edges among the `writable` edges)."""
        rates = self.routes.reports
        if not rates.regimes:
            return Sync()
        with self.lock:
            sync = plan_sync(self.routes.regimes.state.probed_fast, rates.fast, rates.unsure,
                             writable)
            if not sync:
                return sync
            rates.starting(sync)
            entries = report_sync_entries(self.pipeline, self.routes.net,
                                          self.routes.installed_ids(), self.telemetry,
                                          sync.to_fast, sync.to_slow)
            futures = submit_entries(self.agents, self.pipeline, entries)
        done = acknowledged(self.routes.net, sync.to_fast | sync.to_slow, futures,
                            self.write_timeout, "report intervals")
        with self.lock:
            rates.written(sync, done)
        log.info("report intervals: active %s, idle %s", pair_names(sync.to_fast & done),
                 pair_names(sync.to_slow & done))
        return sync



__all__ = ["ReportKeeper"]
