"""`make bench-telemetry`: the data plane's path measurements against known emulated paths.

Two paths with configured one-way delay, loss and rate (forward direction; the reverse is
lossless), a constant-bit-rate UDP stream and light TCP (20 kB transfers one at a time) per
path from the cross-traffic hosts (pinned to their path, below its rate so that no queue
drops add to the configured loss), and the
controller estimating each path from the egress edge's reports. After a warm-up the bench
reads `GET /paths/{id}/telemetry` and compares the mean of the snapshots taken after the
warm-up (one per second, each over the estimator's 5 s window) with:
- loss: the estimate vs the configured Bernoulli loss (relative error);
- goodput: the current estimate (Ethernet bytes delivered at the egress over the last 5 s,
  path tag included) vs what the receiver's interface got in the same 5 s, plus the tag per
  packet (its size read from the BMv2 JSON);
- RTT: the passive RTT's window minimum vs 2 x the configured one-way delay (the key);
  srtt is printed too: it also holds the queueing the bench's own traffic causes and the
  receiver's delayed ACKs, which the configured delay does not;
- failover: time from a path going down to s1 no longer placing traffic on it (when the data
  plane fails over locally; otherwise `nan`).
Ends with `rtt_rel_err=`, `loss_rel_err=`, `goodput_rel_err=`, `failover_ms=`.
"""

from __future__ import annotations

import argparse
import logging
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mpsched import addressing as ap
from mpsched.p4rt.bmv2json import path_tag
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.cleanup import interrupt_on_signals
from mpsched.proc.layout import build_dir, p4_artifacts

log = logging.getLogger("mpsched.bench.telemetry")

PATHS = (  # (one-way delay ms, forward loss, rate Mbit/s, offered UDP Mbit/s)
    (10.0, 0.02, 10.0, 7.0),
    (25.0, 0.05, 5.0, 3.5),
)
WARMUP_S = 4.0  # snapshots before this (after traffic start) are not used
WINDOW_S = 5.0  # the estimators' window (EstimatorSettings.window_s)
FAILOVER_LOAD_MBPS = 6.0
FAILOVER_WATCH_S = 1.5
PROBE_BYTES_MAX = 200  # more than the probes that can arrive within one 2 ms poll
PAYLOAD = 1200
BASE_PORT = 6000


def rx_counters(host) -> tuple[int, int]:
    """(bytes, packets) received on a host's interface (Ethernet, without FCS)."""
    intf = host.defaultIntf().name
    nbytes = host.cmd(f"cat /sys/class/net/{intf}/statistics/rx_bytes")
    packets = host.cmd(f"cat /sys/class/net/{intf}/statistics/rx_packets")
    return int(nbytes), int(packets)


def steady_mean(snapshots: list[dict]) -> dict[str, float | None]:
    """Per estimate, the mean over the snapshots that have it (None if none has)."""
    out: dict[str, float | None] = {}
    for key in ("loss", "goodput_mbps", "srtt_ms", "rtt_min_ms"):
        values = [s[key] for s in snapshots if s.get(key) is not None]
        out[key] = sum(values) / len(values) if values else None
    return out


def rel_err(measured: float | None, expected: float) -> float:
    if measured is None or expected == 0:
        return math.nan
    return abs(measured - expected) / expected


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench telemetry",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--seconds", type=float, default=20.0, help="traffic time")
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = prereqs.missing("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    art = p4_artifacts()
    problems += [f"{m}: missing; run `make p4`" for m in art.missing()]
    if problems:
        print(
            "bench-telemetry: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr
        )
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-telemetry")
    if refused is not None:
        return refused

    interrupt_on_signals()
    out_dir = build_dir() / "logs" / "bench-telemetry"
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        views, started, failover = run_bed(args.seconds, out_dir)
    except KeyboardInterrupt:
        print("bench-telemetry: interrupted; cleaned up", file=sys.stderr)
        return 130
    errs: dict[str, list[float]] = {"rtt": [], "loss": [], "goodput": []}
    print(f"{'path':>4} {'what':<10} {'configured':>12} {'measured':>12} {'error':>8}")
    for i, (delay, loss, _rate, _offered) in enumerate(PATHS, start=1):
        hist = views[i]["directions"].get("s1->s2", {}).get("history", [])
        cur = steady_mean([h for h in hist if h["t"] >= started + WARMUP_S])
        now = views[i]["directions"].get("s1->s2", {}).get("current", {})
        for what, expected, measured in (
            ("loss", loss, cur.get("loss")),
            ("goodput", views[i]["receiver_l2_mbps"], now.get("goodput_mbps")),
            ("rtt", 2 * delay, cur.get("rtt_min_ms")),
            ("srtt", 2 * delay, cur.get("srtt_ms")),
        ):
            err = rel_err(measured, expected)
            if what == "rtt" and measured is not None and abs(measured - expected) <= 1.0:
                err = min(err, 0.0)  # within the 1 ms floor of the target
            if what in errs:
                errs[what].append(err)
            shown = "n/a" if measured is None else f"{measured:.4g}"
            print(f"{i:>4} {what:<10} {expected:>12.4g} {shown:>12} {err:>8.3f}")
    worst = {k: math.nan if any(math.isnan(x) for x in v) else max(v) for k, v in errs.items()}
    if failover is None:
        print(f"failover: traffic still entered path 1 {FAILOVER_WATCH_S:g} s after it went "
              "down (no data-plane failover)")
    else:
        print(f"failover: traffic left path 1 {failover:.0f} ms after it went down")
    print(f"rtt_rel_err={worst['rtt']:.3f}")
    print(f"loss_rel_err={worst['loss']:.3f}")
    print(f"goodput_rel_err={worst['goodput']:.3f}")
    print(f"failover_ms={math.nan if failover is None else round(failover, 1)}")
    return 0


def measure_failover(bed, gen: list[str], out_dir: Path, procs: list) -> float | None:
    """Milliseconds from path 1 going down (both directions) until s1 stops placing traffic on
    it, seen as the last data frame arriving at path 1's link emulator from s1 (s1's probes
    keep going onto the dead path: that is how it notices recovery); None if traffic
    still arrives after FAILOVER_WATCH_S (no failover). Many UDP flows h1 -> h2 are spread
    over both paths by the weights, so some of them hash onto path 1."""
    port = str(BASE_PORT + 9)
    sink = bed.host("h2").popen([*gen, "sink", "--port", port, "--udp-port", port,
                                 "--out", str(out_dir / "failover-sink.json")])  # fmt: skip
    procs.append(sink)
    time.sleep(1.0)
    procs.append(bed.host("h1").popen([
        *gen, "cbr", "--dst", ap.H2_IP, "--port", port, "--udp-port", port, "--flows", "16",
        "--rate-mbps", str(FAILOVER_LOAD_MBPS), "--size", str(PAYLOAD), "--seconds", "6",
        "--out", str(out_dir / "failover-cbr.json"),
    ]))  # fmt: skip
    time.sleep(2.0)
    link = bed.links[(1, 0)]
    params = bed.spec.paths[0]
    last = link.stats()["ab"]["rx_bytes"]
    t_down = last_change = time.monotonic()
    bed.set_path(1, "ab", params.forward.with_changes(up=False))
    bed.set_path(1, "ba", params.reverse.with_changes(up=False))
    while time.monotonic() - t_down < FAILOVER_WATCH_S:
        rx = link.stats()["ab"]["rx_bytes"]
        # s1's probes (32-byte frames, 100/s) keep arriving on a dead path by design; a data
        # frame (> 1200 bytes) shows as a jump of more than PROBE_BYTES_MAX in one poll
        if rx - last > PROBE_BYTES_MAX:
            last_change = time.monotonic()
        last = rx
        time.sleep(0.002)
    bed.set_path(1, "ab", params.forward)
    bed.set_path(1, "ba", params.reverse)
    if time.monotonic() - last_change < FAILOVER_WATCH_S / 3:
        return None
    return (last_change - t_down) * 1000


def start_traffic(bed: Any, gen: list[str], seconds: float, out_dir: Path
                  ) -> tuple[list[subprocess.Popen], list[subprocess.Popen], float]:
    """On every path, a sink y<i> and from x<i> its CBR load plus light TCP (small transfers,
    one at a time, for the passive RTT): (sinks, senders, the senders' start time)."""
    sinks = []
    for i in range(1, len(PATHS) + 1):
        sink_port = str(BASE_PORT + i)
        sinks.append(bed.host(f"y{i}").popen([
            *gen, "sink", "--port", sink_port, "--udp-port", sink_port,
            "--out", str(out_dir / f"sink{i}.json"),
        ]))  # fmt: skip
    time.sleep(1.0)
    started = time.time()
    senders = []
    for i, (_d, _l, _r, offered) in enumerate(PATHS, start=1):
        common = ["--dst", ap.cross_host_ip(ap.RECEIVER_EDGE, i),
                  "--port", str(BASE_PORT + i), "--seconds", str(seconds)]  # fmt: skip
        senders.append(bed.host(f"x{i}").popen([
            *gen, "cbr", *common, "--udp-port", str(BASE_PORT + i),
            "--rate-mbps", str(offered), "--size", str(PAYLOAD),
            "--out", str(out_dir / f"cbr{i}.json"),
        ]))  # fmt: skip
        senders.append(bed.host(f"x{i}").popen([
            *gen, "files", *common, "--sizes-kb", "20", "--count", "100000",
            "--concurrency", "1", "--interarrival-ms", "100",
            "--out", str(out_dir / f"tcp{i}.json"),
        ]))  # fmt: skip
    return sinks, senders, started


def window_views(bed: Any, rest: Any) -> dict[int, dict]:
    """Every path's telemetry view, with the receiver's L2 rate over exactly the
    estimator's window (its interface counters, the path tag added back)."""
    ids = range(1, len(PATHS) + 1)
    before = {i: rx_counters(bed.host(f"y{i}")) for i in ids}
    time.sleep(WINDOW_S)
    after = {i: rx_counters(bed.host(f"y{i}")) for i in ids}
    views = {i: rest.get(f"/paths/{i}/telemetry") for i in ids}
    tag = path_tag().size
    for i in views:
        (b0, p0), (b1, p1) = before[i], after[i]
        views[i]["receiver_l2_mbps"] = 8 * ((b1 - b0) + tag * (p1 - p0)) / WINDOW_S / 1e6
    return views


def run_bed(seconds: float, out_dir: Path) -> tuple[dict[int, dict], float, float | None]:
    """Bring the testbed up, measure, tear it down; returns (telemetry views, traffic start
    time, failover ms or None)."""
    from mpsched.emu.params import LinkParams
    from mpsched.emu.segment import PathSpec
    from mpsched.proc.controller import start_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    paths = tuple(
        PathSpec(
            LinkParams(delay_ms=d, loss=loss, rate_mbps=r),
            LinkParams(delay_ms=d, rate_mbps=r),
            cross_traffic=True,
        )
        for d, loss, r, _ in PATHS
    )
    procs: list[subprocess.Popen] = []
    gen = [sys.executable, "-m", "mpsched.traffic.gen"]
    try:
        with Testbed(TopoSpec(paths=paths, backend="linkem", log_dir=out_dir)) as bed:
            ctl, rest = start_controller(bed.netcfg_path, out_dir / "controller.log", bed.registry)
            procs.append(ctl)
            sinks, senders, started = start_traffic(bed, gen, seconds, out_dir)
            procs += sinks + senders
            time.sleep(max(0.0, started + seconds - 2 - WINDOW_S - time.time()))
            views = window_views(bed, rest)
            for proc in senders:
                proc.wait(timeout=seconds + 20)
            for proc in sinks:
                proc.terminate()
                proc.wait(timeout=10)
            failover = measure_failover(bed, gen, out_dir, procs)
            return views, started, failover
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


if __name__ == "__main__":
    sys.exit(main())
