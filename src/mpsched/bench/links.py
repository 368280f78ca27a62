"""Accuracy of linkem on a veth pair: delay, loss, rate, CPU (`make bench-links`).

ns1 -> linkem -> ns2 (mpsched.testing.linkbed); UDP probes (mpsched.testing.udpprobe)
timestamp each datagram at send (payload) and at the kernel's receive
(SO_TIMESTAMPNS): both namespaces share one clock, so one-way delay is measured
directly. Prints a table of configured vs measured, then exactly four lines:

    delay_err_ms_p50=  worst |median one-way delay - configured| (10 and 50 ms,
                       100 Mbit/s link, 20 Mbit/s offered; the table adds each
                       case's spread, and jitter's: the IQR without and with
                       4 ms of jitter on 20 ms, and whether anything was reordered)
    loss_rel_err=      worst |measured - configured| / configured (1, 5, 10 % Bernoulli)
    rate_rel_err=      worst |receive rate - configured| / configured (5, 20, 50 Mbit/s,
                       offered 25 % above the rate; Ethernet frame bytes)
    cpu_pct=           linkem's CPU time / wall time during the 20 Mbit/s delay runs (worst)

Before those four lines, a CPU sweep (`--cpu-rates`, skipped with `--cpu-rates ''`):
1200-byte UDP payloads one way at each offered rate, no loss, rate limit 1 Gbit/s
(well above the load), without delay and with 10 ms (as on the testbed's paths);
linkem's utime+stime over the run as % of one core, and per Mbit/s (Ethernet
frame bits) and per kpkt/s. One linkem runs per path, so these
are per-path figures. `--cpu-only` runs the sweep alone.

The one-way delay includes the frame's serialisation at the link rate (0.1 ms
for 1250 bytes at 100 Mbit/s), as on a real link.
"""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from mpsched.emu.params import GilbertElliott, LinkParams
from mpsched.proc import cpulimit, prereqs
from mpsched.stats import iqr, percentile
from mpsched.testing import udpprobe as up
from mpsched.testing.linkbed import LinkBed, ProbeResult

log = logging.getLogger(__name__)

DELAY_CASES_MS = (10.0, 50.0)
DELAY_LINK_MBPS = 100.0
DELAY_LOAD_MBPS = 20.0
DELAY_PAYLOAD = 1250 - up.FRAME_OVERHEAD
LOSS_CASES = ((0.01, 200_000), (0.05, 100_000), (0.10, 100_000))
LOSS_PPS = 40_000.0
LOSS_PAYLOAD = 64
RATE_CASES_MBPS = (5.0, 20.0, 50.0)
RATE_OVERLOAD = 1.25
RATE_PAYLOAD = 1472
RATE_QUEUE = 100
CPU_RATES_MBPS = (10.0, 25.0, 50.0, 100.0)
CPU_PAYLOAD = 1200
CPU_SECONDS = 5.0
CPU_LINK_MBPS = 1000.0
CPU_DELAYS_MS = (0.0, 10.0)
JITTER_DELAY_MS = 20.0
JITTER_MS = 4.0
JITTER_PPS = 500.0
GE = GilbertElliott(p=0.02, r=0.25, loss_good=0.0, loss_bad=1.0)


@dataclass
class Row:
    what: str
    configured: str
    measured: str
    error: str
    note: str = ""


@dataclass
class Figures:
    delay_err_ms: float = 0.0
    loss_rel_err: float = 0.0
    rate_rel_err: float = 0.0
    cpu_pct: float = 0.0


def _counts(bed: LinkBed) -> dict[str, int]:
    return dict(bed.em.stats()["ab"])


def _delta(before: dict[str, int], after: dict[str, int], key: str) -> int:
    return after[key] - before[key]


def bench_delay(bed: LinkBed, scale: float, rows: list[Row], fig: Figures) -> None:
    pps = up.pps_for_mbps(DELAY_LOAD_MBPS, DELAY_PAYLOAD)
    count = max(500, int(pps * 5 * scale))
    for delay in DELAY_CASES_MS:
        bed.em.set("ab", LinkParams(delay_ms=delay, rate_mbps=DELAY_LINK_MBPS, queue_packets=1000))
        bed.wait_idle()
        res = bed.probe(pps=pps, count=count, size=DELAY_PAYLOAD, drain_s=0.2 + delay / 1e3)
        owd = up.one_way_delays_ms(res.records)
        p50 = percentile(owd, 50)
        err = abs(p50 - delay)
        cpu = 100 * res.linkem_cpu_s / res.wall_s
        fig.delay_err_ms = max(fig.delay_err_ms, err)
        fig.cpu_pct = max(fig.cpu_pct, cpu)
        rows.append(Row(
            f"delay @{DELAY_LOAD_MBPS:g}M/{DELAY_LINK_MBPS:g}M", f"{delay:g} ms",
            f"p50 {p50:.3f} ms", f"{err:.3f} ms",
            f"IQR {iqr(owd):.3f} p1 {percentile(owd, 1):.3f} p99 {percentile(owd, 99):.3f} "
            f"max {max(owd):.2f}; {_received(res)}; linkem cpu {cpu:.1f} %",
        ))


def bench_jitter(bed: LinkBed, scale: float, rows: list[Row]) -> None:
    """The delay's spread without and with jitter (informational: the key lines hold the
    delay error); a FIFO never reorders."""
    count = max(300, int(JITTER_PPS * 5 * scale))
    for jitter in (0.0, JITTER_MS):
        bed.em.set("ab", LinkParams(delay_ms=JITTER_DELAY_MS, jitter_ms=jitter))
        bed.wait_idle()
        res = bed.probe(pps=JITTER_PPS, count=count, size=200,
                        drain_s=0.2 + 2 * JITTER_DELAY_MS / 1e3)
        owd = up.one_way_delays_ms(res.records)
        rows.append(Row(
            "delay spread", f"{JITTER_DELAY_MS:g} ms, jitter {jitter:g} ms",
            f"p50 {percentile(owd, 50):.3f} ms, IQR {iqr(owd):.3f} ms", "",
            f"p5 {percentile(owd, 5):.3f} p95 {percentile(owd, 95):.3f}; "
            f"reordered {up.reordered(res.records)}; {_received(res)}",
        ))


def _received(res: ProbeResult) -> str:
    return (f"{len(res.records)}/{res.sent['sent']} rx, rcvbuf drops "
            f"{res.received['rcvbuf_drops']}, sender {res.sent['pps']:.0f} pps")


def bench_loss(bed: LinkBed, scale: float, rows: list[Row], fig: Figures) -> None:
    for loss, n in LOSS_CASES:
        count = max(2000, int(n * scale))
        bed.em.set("ab", LinkParams(loss=loss))
        bed.wait_idle()
        before = _counts(bed)
        res = bed.probe(pps=LOSS_PPS, count=count, size=LOSS_PAYLOAD)
        after = _counts(bed)
        measured = up.loss_fraction(count, res.records)
        err = abs(measured - loss) / loss
        fig.loss_rel_err = max(fig.loss_rel_err, err)
        emulated = _delta(before, after, "drop_loss") / max(1, _delta(before, after, "rx"))
        rows.append(Row(
            "loss bernoulli", f"{loss:.2%}", f"{measured:.3%}", f"{err:.1%} rel",
            f"linkem dropped {emulated:.3%}; {_received(res)}",
        ))
    count = max(2000, int(100_000 * scale))
    bed.em.set("ab", LinkParams(gilbert=GE))
    res = bed.probe(pps=LOSS_PPS, count=count, size=LOSS_PAYLOAD)
    runs = up.loss_runs(count, res.records)
    mean_run = sum(runs) / len(runs) if runs else 0.0
    rows.append(Row(
        "loss gilbert-elliott", f"{GE.mean_loss():.2%}, runs {1 / GE.r:.2f}",
        f"{up.loss_fraction(count, res.records):.3%}, runs {mean_run:.2f}", "",
        f"p={GE.p} r={GE.r} (informational)",
    ))


def bench_rate(bed: LinkBed, scale: float, rows: list[Row], fig: Figures) -> None:
    for rate in RATE_CASES_MBPS:
        pps = up.pps_for_mbps(rate * RATE_OVERLOAD, RATE_PAYLOAD)
        count = max(300, int(pps * 3 * scale))
        bed.em.set("ab", LinkParams(rate_mbps=rate, queue_packets=RATE_QUEUE))
        bed.wait_idle()
        before = _counts(bed)
        res = bed.probe(pps=pps, count=count, size=RATE_PAYLOAD, drain_s=0.5)
        after = _counts(bed)
        measured = up.frame_rate_bps(res.records, skip_s=0.3) / 1e6
        err = abs(measured - rate) / rate
        fig.rate_rel_err = max(fig.rate_rel_err, err)
        rows.append(Row(
            "rate", f"{rate:g} Mbit/s", f"{measured:.3f} Mbit/s", f"{err:.2%} rel",
            f"offered {rate * RATE_OVERLOAD:g}, queue {RATE_QUEUE}: tail drops "
            f"{_delta(before, after, 'drop_queue')}; {_received(res)}",
        ))


@dataclass(frozen=True)
class CpuPoint:
    delay_ms: float
    offered_mbps: float
    received_mbps: float
    kpps: float
    cpu_pct: float

    @property
    def per_mbps(self) -> float:
        return self.cpu_pct / self.received_mbps if self.received_mbps else 0.0

    @property
    def per_kpps(self) -> float:
        return self.cpu_pct / self.kpps if self.kpps else 0.0


def bench_cpu(bed: LinkBed, rates: tuple[float, ...], scale: float) -> list[CpuPoint]:
    """linkem's CPU at each offered rate (one direction, nothing dropped or delayed)."""
    points = []
    for delay, mbps in ((d, r) for d in CPU_DELAYS_MS for r in rates):
        pps = up.pps_for_mbps(mbps, CPU_PAYLOAD)
        count = max(500, int(pps * CPU_SECONDS * scale))
        bed.em.set("ab", LinkParams(delay_ms=delay, rate_mbps=CPU_LINK_MBPS,
                                    queue_packets=10_000))
        bed.wait_idle()
        res = bed.probe(pps=pps, count=count, size=CPU_PAYLOAD, drain_s=0.1 + delay / 1e3)
        rx = len(res.records)
        frame_bits = up.frame_bits(CPU_PAYLOAD)
        points.append(CpuPoint(
            delay_ms=delay,
            offered_mbps=mbps,
            received_mbps=rx * frame_bits / res.wall_s / 1e6,
            kpps=rx / res.wall_s / 1e3,
            cpu_pct=100 * res.linkem_cpu_s / res.wall_s,
        ))
    return points


def print_cpu(points: list[CpuPoint]) -> None:
    if not points:
        return
    print(f"linkem CPU per path ({CPU_PAYLOAD}-byte UDP payload, one direction, "
          "% of one core)")
    print(f"{'delay ms':>8} {'offered Mbit/s':>14} {'rx Mbit/s':>10} {'kpkt/s':>8} {'cpu %':>7} "
          f"{'%/Mbit/s':>9} {'%/kpkt/s':>9}")
    for p in points:
        print(f"{p.delay_ms:8g} {p.offered_mbps:14g} {p.received_mbps:10.1f} {p.kpps:8.2f} "
              f"{p.cpu_pct:7.1f} {p.per_mbps:9.3f} {p.per_kpps:9.3f}")


def print_report(rows: list[Row], fig: Figures) -> None:
    table = [Row("what", "configured", "measured", "error", "notes"), *rows]
    cols = ("what", "configured", "measured", "error")
    widths = {c: max(len(getattr(r, c)) for r in table) for c in cols}
    for r in table:
        print("  ".join(getattr(r, c).ljust(widths[c]) for c in cols), r.note)
    print(f"delay_err_ms_p50={fig.delay_err_ms:.3f}")
    print(f"loss_rel_err={fig.loss_rel_err:.4f}")
    print(f"rate_rel_err={fig.rate_rel_err:.4f}")
    print(f"cpu_pct={fig.cpu_pct:.1f}")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="mpsched bench links",
        description=__doc__.split("\n\n")[0] + " Needs root, ethtool and `make linkem`.",
        epilog="Targets: delay err <= 0.5 ms, loss within 10 % relative, rate within 5 %.",
    )
    ap.add_argument("--seed", type=int, default=1, help="linkem's random seed (default 1)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply packet counts and durations (e.g. 0.2 for a quick look)")
    ap.add_argument("--cpu-rates", default=",".join(f"{r:g}" for r in CPU_RATES_MBPS),
                    help="offered Mbit/s of the CPU sweep, comma-separated; '' skips it "
                         "(default %(default)s)")
    ap.add_argument("--cpu-only", action="store_true",
                    help="run the CPU sweep alone (no accuracy runs, no key lines)")
    ap.add_argument("--linkem", type=Path, default=None,
                    help="linkem binary to measure (default: build/bin/linkem)")
    ap.add_argument("-v", "--verbose", action="store_true")
    cpulimit.add_option(ap)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    try:
        cpu_rates = tuple(float(r) for r in args.cpu_rates.split(",") if r.strip())
    except ValueError:
        ap.error(f"--cpu-rates: not a comma-separated list of numbers: {args.cpu_rates!r}")
    if any(r <= 0 for r in cpu_rates):
        ap.error(f"--cpu-rates: rates must be > 0: {args.cpu_rates!r}")
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    problems = prereqs.missing("root", "ethtool", "linkem")
    if problems:
        for p in problems:
            log.error("missing %s", p)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-links")
    if refused is not None:
        return refused
    rows: list[Row] = []
    fig = Figures()
    points: list[CpuPoint] = []
    try:
        with LinkBed(seed=args.seed, binary=args.linkem) as bed:
            if not args.cpu_only:
                bench_delay(bed, args.scale, rows, fig)
                bench_jitter(bed, args.scale, rows)
                bench_loss(bed, args.scale, rows, fig)
                bench_rate(bed, args.scale, rows, fig)
            points = bench_cpu(bed, cpu_rates, args.scale)
    except KeyboardInterrupt:
        log.error("interrupted; everything was removed")
        return 130
    print_cpu(points)
    if not args.cpu_only:
        print_report(rows, fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
