"""Helpers shared by the telemetry's unit tests."""

from __future__ import annotations

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.model.reports import PathReport
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from tests.unit.controller.fakes import fabric


def report(t_s: float, packets: int, nbytes: int, lost: int = 0, reordered: int = 0,
           owd_us: int = 10_000, at: float | None = None, flow_ooo: int = 0) -> PathReport:
    rx = int(t_s * 1e6)
    return PathReport("s2", 1, packets, rx - owd_us + 5_000_000, rx, packets % 2**32,
                      nbytes % 2**32, lost % 2**32, reordered, flow_ooo % 2**32,
                      t_s if at is None else at)


def feed(intake: TelemetryIntake, src_edge: int, path: int, mbps: float, until: float) -> None:
    """Three seconds of path reports at leaf3 from edge `src_edge` on `path`, delivering
    `mbps`, the last at `until`."""
    for k in range(31):
        t = until - 3 + k * 0.1
        rx = int(t * 1e6)
        intake.ingest_report(PathReport("leaf3", path, k + 1, rx - 1_000, rx, 20 * (k + 1),
                                        int(mbps * 12_500 * (k + 1)), 0, 0, 0, t, src_edge))


def fabric_intake() -> TelemetryIntake:
    """The intake of the fakes' leaf-spine (3 leaves, 2 spines, 10 Mbit/s links)."""
    net = fabric()
    return TelemetryIntake(net, EstimatorSettings(), TelemetryConfig(), Routes(net))


def capacities(intake: TelemetryIntake, pair: str, now: float) -> dict[int, tuple]:
    """{path id: (capacity, bottleneck)} of a pair's view at `now`."""
    view = intake.unit_view(intake.routes.unit(pair), now)
    return {p.path_id: (p.capacity_mbps, p.bottleneck_mbps) for p in view.paths}
