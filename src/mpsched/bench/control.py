"""`make bench-control`: control-loop latency, telemetry in -> table write acknowledged.

For 2, 4 and 8 paths, one BMv2 `simple_switch_grpc` runs the program built for that many
paths (build/p4 for up to 4, build/p4-8paths for 8), and the real controller (the same
`Controller` the os-ken app hosts: estimators, scheduler, P4Runtime agent) programs it.
A feeder injects synthetic telemetry for every path as the switches' digests would
(a path report and an RTT report per path every 10 ms, with RTTs and rates that change all the
time), so the policy's weights change every period and every iteration writes.

One sample = one control-loop iteration that wrote: from the moment the loop reads the
telemetry (estimators -> path states) through the policy (LLHD with LM3, or FD-MVQS with
its CTADP prediction and MVQS parameters, alternately per path count run) to the
switch's acknowledgement of every P4Runtime write (placement, MVQS parameters). Ends
with `control_p99_ms_<n>=` for n = 2, 4, 8 (target: p99 <= 20 ms at 8 paths). Percentiles
interpolate between order statistics (`mpsched.stats.percentile`).
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.netcfg import NetCfg, PathCfg, plan_edges
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry, sweep
from mpsched.proc.layout import P4Artifacts, p4_artifacts, p4_artifacts_for_paths
from mpsched.stats import percentile

log = logging.getLogger("mpsched.bench.control")

PATH_COUNTS = (2, 4, 8)
FEED_INTERVAL_S = 0.010  # the switches' default report interval per path
POLICIES = ("llhd", "fdmvqs")


def artifacts_for(n: int) -> P4Artifacts:
    return p4_artifacts() if n <= 4 else p4_artifacts_for_paths(8)


def netcfg(address: str, n: int) -> NetCfg:
    """s1 at `address` with n paths of 10, 20, ... Mbit/s on ports 2.., and s2."""
    return plan_edges(address, tuple(PathCfg(i, i + 1, 10.0 * i) for i in range(1, n + 1)))


class Feeder(threading.Thread):
    """Telemetry for s1's paths as the far edge (path reports) and s1 (RTT reports) send it.
    Subclasses choose the bytes in flight reported (`inflight`) and hear of every report
    handed over (`fed`)."""

    def __init__(self, ctl: Controller, n: int, seed: int) -> None:
        super().__init__(name="feeder", daemon=True)
        self.ctl, self.n = ctl, n
        self.rng = random.Random(seed)
        self.halt = threading.Event()

    def inflight(self, path_id: int) -> int:
        return int(self.rng.uniform(0, 200_000))

    def fed(self, path_id: int) -> None:
        """Path `path_id`'s reports of this round are with the controller."""

    def run(self) -> None:
        seq = dict.fromkeys(range(1, self.n + 1), 0)
        rx_bytes = dict.fromkeys(range(1, self.n + 1), 0)
        t_us = 1_000_000
        while not self.halt.wait(FEED_INTERVAL_S):
            now = time.time()
            t_us += int(FEED_INTERVAL_S * 1e6)
            for p in range(1, self.n + 1):
                rtt_us = int(self.rng.uniform(5_000, 80_000))
                seq[p] += 50
                rx_bytes[p] += int(self.rng.uniform(0.2, 1.0) * 1500 * 50)
                owd = rtt_us // 2
                self.ctl.on_report(
                    PathReport(
                        "s2",
                        p,
                        seq[p],
                        t_us - owd + 7_000_000,
                        t_us,
                        seq[p],
                        rx_bytes[p],
                        self.rng.randrange(0, 3),
                        0,
                        self.rng.randrange(0, 40),
                        now,
                    )
                )
                self.ctl.on_rtt(RttReport("s1", p, 2, rtt_us, 0, self.inflight(p), now))
                self.fed(p)


def measure(
    n: int, policy: str, seconds: float, period_ms: float, log_dir: Path, registry: Registry
) -> list[float]:
    art = artifacts_for(n)
    sw = Bmv2Switch(name=f"bench-ctl{n}", device_id=1, ports={}, log_dir=log_dir, registry=registry)
    sw.start()
    try:
        pipeline = Pipeline(P4Info.from_file(art.p4info))
        if pipeline.max_paths < n:
            raise SystemExit(f"{art.p4info}: {pipeline.max_paths} paths, need {n}")
        ctl = Controller(
            netcfg(sw.grpc_address, n),
            pipeline,
            str(art.bmv2_json),
            ControllerSettings(
                poll_interval=1.0,
                telemetry=TelemetryConfig(probe_interval_s=None),
                default_policy=policy,
                control_period_ms=period_ms,
            ),
        )
        if policy == "llhd":
            ctl.scheduler.set_class_policy(0, {"lm3": True})
        ctl.start()
        feeder = Feeder(ctl, n, seed=n)
        try:
            if not ctl.agents[0].wait_ready(30):
                raise SystemExit(f"s1 ({n} paths) not ready: {ctl.agents[0].status}")
            feeder.start()
            time.sleep(1.0)  # estimators filled
            ctl.loop.latencies_ms.clear()
            time.sleep(seconds)
            return list(ctl.loop.latencies_ms)
        finally:
            feeder.halt.set()
            ctl.stop()
    finally:
        sw.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench control",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=8.0,
        help="measurement per path count " "and policy (default: %(default)s)",
    )
    p.add_argument(
        "--period-ms", type=float, default=20.0, help="control period (default: %(default)s)"
    )
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = prereqs.missing("simple_switch_grpc")
    for n in PATH_COUNTS:
        problems += [f"{m}: missing; X" for m in artifacts_for(n).missing()]
    if problems:
        print("bench-control: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-control")
    if refused is not None:
        return refused
    for line in sweep():
        log.info("cleaned up: %s", line)
    registry = Registry()
    p99: dict[int, float] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in PATH_COUNTS:
                samples: list[float] = []
                for policy in POLICIES:
                    got = measure(n, policy, args.seconds, args.period_ms, Path(tmp), registry)
                    print(
                        f"{n} paths {policy:7s} {len(got):5d} writes"
                        f"  p50 {percentile(got, 50):6.2f} ms"
                        f"  p99 {percentile(got, 99):6.2f} ms  max {max(got):6.2f} ms",
                        flush=True,
                    )
                    samples += got
                p99[n] = percentile(samples, 99)
                print(
                    f"{n} paths all     {len(samples):5d} writes  p50 "
                    f"{percentile(samples, 50):6.2f} ms  p99 {p99[n]:6.2f} ms",
                    flush=True,
                )
    except KeyboardInterrupt:
        print("bench-control: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        registry.close()
    for n in PATH_COUNTS:
        print(f"control_p99_ms_{n}={p99[n]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
