"""The controller the UI benchmark measures the dashboard on: one BMv2 switch with the 4-path
program, the real `Controller`, and synthetic telemetry (src/mpsched/bench/ui.py's docstring: a
feeder as `make bench-control`'s, and 10 minutes of history filled in at once).
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

from mpsched.bench.control import Feeder as ControlFeeder

N_PATHS = 4
HISTORY_S = 600


class Feeder(ControlFeeder):
    """bench-control's synthetic telemetry; `mark(value)` makes path 1's reported bytes in
    flight `value` from then on and returns when the controller holds it."""

    def __init__(self, ctl: Any, n: int, seed: int) -> None:
        super().__init__(ctl, n, seed)
        self.marker: int | None = None
        self.marked = threading.Event()
        self.marked_at = 0.0

    def mark(self, value: int) -> float:
        self.marked.clear()
        self.marker = value
        if not self.marked.wait(5):
            raise RuntimeError("feeder stalled")
        return self.marked_at

    def inflight(self, path_id: int) -> int:
        if path_id == 1 and self.marker is not None:
            return self.marker
        return self.rng.randrange(0, 100_000) * 2 + 1  # odd: never a marker

    def fed(self, path_id: int) -> None:
        if path_id == 1 and self.marker is not None and not self.marked.is_set():
            self.marked_at = time.time()  # the estimator holds it from here on
            self.marked.set()


def backfill(ctl: Any, seconds: int, seed: int) -> int:
    """Fill every estimator's history with `seconds` snapshots, one per second back from now
    (see the module's docstring); returns how many snapshots there are in all."""
    rng = random.Random(seed)
    now = time.time()
    total = 0
    with ctl._lock:
        for est in ctl.intake.estimators.values():
            base = est.snapshot(now)
            past = []
            for k in range(seconds - len(est.history), 0, -1):
                snap = dict(base, t=round(now - k, 3))
                for key, value in base.items():
                    if key != "t" and isinstance(value, float):
                        snap[key] = round(value * rng.uniform(0.7, 1.3), 3)
                past.append(snap)
            est.history.prepend(past)
            total += len(est.history)
    return total


def bench_settings() -> Any:
    """The controller's settings in the UI benches: llhd, no probes (telemetry is fed),
    HISTORY_S of history per path."""
    from mpsched.controller.app.core import ControllerSettings
    from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig

    return ControllerSettings(
        poll_interval=1.0,
        telemetry=TelemetryConfig(probe_interval_s=None),
        estimators=EstimatorSettings(history=HISTORY_S),
        default_policy="llhd",
    )


def start_controller(workdir: Path, registry: Any) -> tuple[Any, Any]:
    """A BMv2 switch and the controller on it (N_PATHS paths, llhd, no probes): (switch,
    controller), both started."""
    from mpsched.bench.control import artifacts_for, netcfg
    from mpsched.controller.app.core import Controller
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline
    from mpsched.proc.bmv2 import Bmv2Switch

    art = artifacts_for(N_PATHS)
    sw = Bmv2Switch(name="bench-ui", device_id=1, ports={}, log_dir=workdir, registry=registry)
    sw.start()
    try:
        ctl = Controller(
            netcfg(sw.grpc_address, N_PATHS),
            Pipeline(P4Info.from_file(art.p4info)),
            str(art.bmv2_json),
            bench_settings(),
        )
        ctl.start()
    except BaseException:
        sw.stop()
        raise
    return sw, ctl
