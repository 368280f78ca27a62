"""The controller's state and operations, independent of os-ken and HTTP.

`Controller` owns the intended state (path weights), one `SwitchAgent` per
switch, and the per-path statistics. Its methods block the calling native
thread; the os-ken application runs them off the eventlet hub.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import wait
from dataclasses import dataclass, field

from mpsched.netcfg import NetCfg
from mpsched.p4runtime import P4RuntimeClient
from mpsched.pipeline import Pipeline

from .reports import RttReport
from .southbound import SwitchAgent, TelemetryConfig
from .stats import PathStats, Sample
from .telemetry import EstimatorSettings, PathEstimator, PathReport
from .weights import MAX_WEIGHT

log = logging.getLogger(__name__)

DEFAULT_CLASS = 0


class NotFoundError(LookupError):
    pass


class UnavailableError(RuntimeError):
    """A switch did not acknowledge a change."""


@dataclass(frozen=True)
class ControllerSettings:
    poll_interval: float = 1.0
    write_timeout: float = 5.0
    default_weight: int = 1
    telemetry_period: float = 1.0  # how often each path's estimates go into its history
    estimators: EstimatorSettings = field(default_factory=EstimatorSettings)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)


class Controller:
    def __init__(
        self,
        net: NetCfg,
        pipeline: Pipeline,
        bmv2_json: str,
        settings: ControllerSettings | None = None,
    ) -> None:
        self.net = net
        self.pipeline = pipeline
        self.settings = settings or ControllerSettings()
        ids = net.path_ids()
        too_high = [p for p in ids if p > pipeline.max_paths]
        if too_high:
            raise ValueError(f"path ids {too_high} exceed the program's {pipeline.max_paths} paths")
        self._lock = threading.Lock()
        self._weights = {p: self.settings.default_weight for p in ids}
        self._rates = {p.id: p.rate_mbps for sw in net.switches for p in sw.paths}
        self._stats = {p: PathStats(p) for p in ids}
        self._telemetry: dict[tuple[int, str], PathEstimator] = {}
        self._stop = threading.Event()
        self._recorder = threading.Thread(target=self._record_loop, name="telemetry", daemon=True)
        self.agents = [
            SwitchAgent(
                sw,
                net,
                pipeline,
                bmv2_json,
                self.weights,
                self._on_sample,
                on_report=self.ingest_report,
                on_rtt=self.ingest_rtt_report,
                poll_interval=self.settings.poll_interval,
                telemetry=self.settings.telemetry,
            )
            for sw in net.switches
        ]

    # -- lifecycle -------------------------------------------------------

    def start(self) -> None:
        for agent in self.agents:
            agent.start()
        self._recorder.start()

    def wait_ready(self, timeout: float) -> bool:
        return all(agent.wait_ready(timeout) for agent in self.agents)

    def stop(self) -> None:
        self._stop.set()
        for agent in self.agents:
            agent.stop()
        for agent in self.agents:
            agent.join(timeout=5)

    # -- state -----------------------------------------------------------

    def weights(self) -> dict[int, int]:
        with self._lock:
            return dict(self._weights)

    def _on_sample(self, switch: str, samples: dict[int, Sample]) -> None:
        with self._lock:
            for path_id, sample in samples.items():
                self._stats[path_id].update(switch, sample)

    # -- telemetry -------------------------------------------------------

    def direction(self, ingress: str, egress: str) -> str:
        return f"{ingress}->{egress}"

    def _other(self, switch: str) -> str:
        others = [sw.name for sw in self.net.switches if sw.name != switch]
        return others[0] if len(others) == 1 else "?"

    def _estimator(self, path_id: int, direction: str) -> PathEstimator:
        key = (path_id, direction)
        if key not in self._telemetry:
            self._telemetry[key] = PathEstimator(path_id, self.settings.estimators)
        return self._telemetry[key]

    def ingest_report(self, report: PathReport) -> None:
        """A path report of the egress edge `report.switch` (traffic from the other edge)."""
        with self._lock:
            if report.path_id not in self._weights:
                log.debug("report for unknown path %d ignored", report.path_id)
                return
            direction = self.direction(self._other(report.switch), report.switch)
            self._estimator(report.path_id, direction).add_report(report)

    def ingest_rtt(self, switch: str, path_id: int, rtt_ms: float, at: float) -> None:
        """An RTT sample measured by the ingress edge `switch` for its traffic on a path."""
        with self._lock:
            if path_id in self._weights:
                direction = self.direction(switch, self._other(switch))
                self._estimator(path_id, direction).add_rtt(rtt_ms, at)

    def ingest_rtt_report(self, report: RttReport) -> None:
        """An RTT report of the ingress edge `report.switch` (its traffic on a path): the
        RTT sample, the path's retransmission count and bytes in flight."""
        at = report.received_at
        self.ingest_rtt(report.switch, report.path_id, report.rtt_us / 1000, at)
        with self._lock:
            if report.path_id in self._weights:
                direction = self.direction(report.switch, self._other(report.switch))
                self._estimator(report.path_id, direction).add_rtt_report(
                    report.retrans, report.inflight_bytes, at
                )

    def _record_loop(self) -> None:
        while not self._stop.wait(self.settings.telemetry_period):
            now = time.time()
            with self._lock:
                for est in self._telemetry.values():
                    est.record(now)

    def telemetry(self, path_id: int) -> dict:
        """Current estimates and the short history of one path, per direction."""
        now = time.time()
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            return {
                "id": path_id,
                "directions": {
                    d: {"current": est.snapshot(now), "history": list(est.history)}
                    for (p, d), est in sorted(self._telemetry.items())
                    if p == path_id
                },
            }

    def telemetry_since(self, since: float) -> dict:
        """History snapshots newer than `since` (seconds since the epoch), for polling."""
        with self._lock:
            out: dict[str, dict[str, list[dict]]] = {}
            for (p, d), est in sorted(self._telemetry.items()):
                out.setdefault(str(p), {})[d] = [s for s in est.history if s["t"] > since]
            return {"now": round(time.time(), 3), "paths": out}

    def path_ids(self) -> list[int]:
        return sorted(self._weights)

    def path(self, path_id: int) -> dict:
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            stats = self._stats[path_id]
            view = {
                "id": path_id,
                "weight": self._weights[path_id],
                "configured_rate_mbps": self._rates.get(path_id),
            }
            view.update(stats.totals())
            view["by_switch"] = {name: s.to_dict() for name, s in sorted(stats.by_switch.items())}
            now = time.time()
            view["telemetry"] = {
                d: est.snapshot(now)
                for (p, d), est in sorted(self._telemetry.items())
                if p == path_id
            }
            return view

    def paths(self) -> list[dict]:
        return [self.path(p) for p in self.path_ids()]

    def switches(self) -> list[dict]:
        return [
            {
                "name": a.sw.name,
                "device_id": a.sw.device_id,
                "grpc_address": a.sw.grpc_address,
                "state": a.status.state,
                "error": a.status.error,
                "since": a.status.since,
            }
            for a in self.agents
        ]

    # -- operations ------------------------------------------------------

    def set_weight(self, path_id: int, weight: int) -> dict:
        """Set one path's weight on every switch; returns the path once all acknowledged."""
        if not 0 <= weight <= MAX_WEIGHT:
            raise ValueError(f"weight must be 0..{MAX_WEIGHT}")
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            self._weights[path_id] = weight
            entry = self.pipeline.weights(DEFAULT_CLASS, self._weights)

        def job(client: P4RuntimeClient) -> None:
            client.modify(entry)

        futures = {a.sw.name: a.submit(job) for a in self.agents}
        done, pending = wait(futures.values(), timeout=self.settings.write_timeout)
        failed = [f"{name}: timed out" for name, f in futures.items() if f in pending]
        failed += [
            f"{name}: {f.exception()}"
            for name, f in futures.items()
            if f in done and f.exception() is not None
        ]
        if failed:
            # The intended weight stays; a switch that comes back is reprogrammed with it.
            raise UnavailableError("; ".join(failed))
        log.info("path %d weight -> %d", path_id, weight)
        return self.path(path_id)
