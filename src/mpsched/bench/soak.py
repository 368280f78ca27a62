"""`make soak`: the controller and the switches over a long run with the policy changing every
few seconds; does anything grow?

h1 - s1 =(three paths: 10, 10, 5 Mbit/s, linkem)= s2 - h2, eight closed-loop TCP flows
h1 -> h2 for the whole run, and the default class's policy changed every `--change-every-s`
seconds, cycling through every policy (LM3 on and off) and flowlet gaps. Every
`--sample-every-s` seconds the bench samples each process (the controller, each BMv2): its
resident memory (VmRSS), open file descriptors and threads, and the controller's control-loop
latency p99 (`GET /decisions`: reading the estimates -> every switch acknowledged). The first
`--warmup-s` seconds are the baseline. Before the flows start, each switch's pool of packet
header vectors is filled (`--warm-frames`, src/mpsched/bench/soak_warm.py): its high-water mark
would otherwise read as growth.

Growth from the first sample to the last cannot tell a leak from a warm-up: a process that
allocates once (a BMv2 stepping up 9 MB when a table first fills) shows the same growth as one
that leaks. So the bench also fits a line to each process's RSS from `--slope-after-s`
seconds on (default 600: after the first 10 minutes) and reports its slope: a leak keeps a
slope, a warm-up does not. The line is Theil-Sen's (the median of the slopes between every
two samples), which one step after 10 minutes (a switch reaching a new high-water mark in a
burst) does not tilt unless it falls in the middle third of the window, and steps that keep
coming do; the least-squares slope, which one such step tilts wherever it falls, is printed
beside it.

Ends with `soak_rss_growth_pct=` (the largest growth of any process's RSS from its first
sample after the warm-up to its last, in %), `soak_rss_slope_kb_per_min=` (the largest
per-process Theil-Sen RSS slope after `--slope-after-s`, kB per minute; NaN when the run ends
before three samples were taken there; target <= 50), `soak_rss_ls_slope_kb_per_min=` (the
largest least-squares slope over the same samples), `soak_fds_growth=` and
`soak_threads_growth=` (the largest rise of any process's open file descriptors and threads
from the most in the first quarter of the samples after the warm-up to the most in the last
quarter; flat is 0) and `soak_loop_p99_ms=` (the
largest control-loop p99 sampled after the warm-up; target <= 20).

With `--fabric` (`make soak FABRIC=4x2`) the same runs on a leaf-spine under all-to-all
traffic, with link flaps and a spine restart besides the policy changes, and samples every
linkem too (src/mpsched/bench/soak_fabric.py; loop p99 target <= 100 there).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from mpsched import addressing as ap
from mpsched.bench.soak_plan import policy_changes
from mpsched.bench.soak_series import (
    SAMPLES_HEADER,
    Series,
    largest,
    proc_sample,
    read_samples,
    sample_row,
)
from mpsched.bench.soak_warm import WARM_FRAMES, warm_switch
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.cleanup import interrupt_on_signals
from mpsched.proc.layout import build_dir, p4_artifacts

log = logging.getLogger("mpsched.bench.soak")

FLOW_PORT = 7101


def warm_edges(procs: dict[str, int], frames: int, emulator: str) -> None:
    """s1's and s2's pools of packet header vectors filled before the flows start
    (soak_warm.py): through the first path's link emulator `emulator` (src/mpsched/topo/testbed.py:
    `e1`), whose port 1 faces s1 and port 2 s2."""
    if frames <= 0:
        return
    for name, iface in (("s1", f"{emulator}-eth1"), ("s2", f"{emulator}-eth2")):
        pid = procs[name]
        warm_switch(name, iface, lambda pid=pid: proc_sample(pid).rss_kb, frames)


def run(out_dir: Path, minutes: float, change_s: float, sample_s: float, warmup_s: float,
        warm_frames: int = WARM_FRAMES):
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    duration = minutes * 60
    gen = [sys.executable, "-m", "mpsched.traffic.gen"]
    spec = TopoSpec.from_rates((10.0, 10.0, 5.0), backend="linkem", log_dir=out_dir)
    loop_p99: list[float] = []
    with (out_dir / "samples.csv").open("w") as samples, Testbed(spec) as bed:
        ctl, rest = start_controller(bed.netcfg_path, out_dir / "controller.log", bed.registry)
        try:
            procs = {"controller": ctl.pid}
            procs |= {s.name: s.bmv2.process.pid for s in bed.net.switches if hasattr(s, "bmv2")}
            series = {name: Series(name, pid, []) for name, pid in procs.items()}
            warm_edges(procs, warm_frames, bed.links[min(bed.links)].name)
            port = str(FLOW_PORT)
            sink = bed.host("h2").popen([*gen, "sink", "--port", port,
                                         "--out", str(out_dir / "sink.json")])  # fmt: skip
            time.sleep(0.5)
            flows = bed.host("h1").popen([
                *gen, "flows", "--dst", ap.H2_IP, "--port", port, "--flows", "8",
                "--size-kb", "256", "--seconds", str(duration),
                "--out", str(out_dir / "flows.json"),
            ])  # fmt: skip
            changes = policy_changes()
            samples.write(SAMPLES_HEADER + "\n")
            start = time.monotonic()
            next_change, next_sample = start, start + warmup_s
            print(f"{'t_s':>6} {'process':<11} {'rss_kb':>8} {'fds':>5} {'threads':>7} "
                  f"{'loop_p99_ms':>11}")  # fmt: skip
            while (now := time.monotonic()) - start < duration:
                if now >= next_change:
                    rest.put("/classes/0/policy", next(changes))
                    next_change += change_s
                if now >= next_sample:
                    p99 = rest.get("/decisions?limit=1")["loop"]["latency_ms_p99"]
                    if p99 is not None:
                        loop_p99.append(p99)
                    for s in series.values():
                        sample = proc_sample(s.pid)
                        s.samples.append((now - start, sample))
                        samples.write(sample_row(now - start, s.name, s.pid, sample, p99))
                        print(f"{now - start:6.0f} {s.name:<11} {sample.rss_kb:8d} "
                              f"{sample.fds:5d} {sample.threads:7d} "
                              f"{'' if s.name != 'controller' else p99!s:>11}")  # fmt: skip
                    samples.flush()
                    next_sample += sample_s
                dead = bed.dead_switches()
                if dead or ctl.poll() is not None:
                    raise RuntimeError(f"died during the soak: {dead or ['controller']}")
                time.sleep(0.05)
            flows.wait(timeout=30)
            sink.terminate()
            sink.wait(timeout=10)
        finally:
            stop_controller(ctl, bed.registry)
    return series, loop_p99


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench soak",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--minutes", type=float, default=10.0, help="length of the run")
    p.add_argument("--change-every-s", type=float, default=5.0, help="policy change period")
    p.add_argument("--sample-every-s", type=float, default=10.0, help="sampling period")
    p.add_argument("--warmup-s", type=float, default=60.0, help="baseline starts after this")
    p.add_argument("--slope-after-s", type=float, default=600.0,
                   help="fit the RSS slope to the samples from this time on (after a "
                        "restarted process's restart)")
    p.add_argument("--summarise", metavar="CSV", type=Path, default=None,
                   help="run nothing: the figures and key=value lines of a finished soak's "
                        "samples.csv (build/logs/soak*/samples.csv), with --slope-after-s and "
                        "--warmup-s as it ran")
    p.add_argument("--warm-frames", type=int, default=WARM_FRAMES, metavar="N",
                   help="before the first sample (and on a fabric after the restart), bursts of "
                        "N frames each switch drops until three in a row barely grow its RSS: its "
                        "pool of packet header vectors filled, whose high-water mark would read "
                        "as growth (src/mpsched/bench/soak_warm.py; "
                        f"default {WARM_FRAMES}; 0: none)")
    f = p.add_argument_group("on a fabric (src/mpsched/bench/soak_fabric.py)")
    f.add_argument("--fabric", metavar="FILE|LxS|1", default=None,
                   help="soak a fabric: a fabric scenario file, a leaf-spine shape (4x2: "
                        "scenarios/fabric-leaf-spine.yaml with that many leaves and spines) "
                        "or 1 (that file as it is)")
    f.add_argument("--flap-every-s", type=float, default=60.0,
                   help="a link fails this often (alternately through linkem and admin)")
    f.add_argument("--flap-down-s", type=float, default=5.0, help="for this long")
    f.add_argument("--restart-at-s", type=float, default=120.0,
                   help="kill a spine's BMv2 and start it again at this time (< 0: never)")
    f.add_argument("--restart", metavar="SWITCH", default=None,
                   help="the switch restarted (default: the first spine)")
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    if args.warm_frames < 0:
        p.error("--warm-frames must be >= 0")
    for name in ("minutes", "change_every_s", "sample_every_s", "flap_every_s", "flap_down_s"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be > 0")
    if not 0 <= args.warmup_s < args.minutes * 60:
        p.error("--warmup-s must be >= 0 and shorter than the run")
    if args.summarise is not None:
        return summarise_file(args.summarise, args.warmup_s, args.slope_after_s)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = prereqs.missing("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    problems += [f"{m}: missing; run `make p4`" for m in p4_artifacts().missing()]
    if problems:
        print("soak: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "soak")
    if refused is not None:
        return refused
    interrupt_on_signals()
    out_dir = build_dir() / "logs" / ("soak-fabric" if args.fabric else "soak")
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        if args.fabric:
            return run_fabric(args, out_dir)
        series, loop_p99 = run(
            out_dir, args.minutes, args.change_every_s, args.sample_every_s, args.warmup_s,
            args.warm_frames,
        )
    except KeyboardInterrupt:
        print("soak: interrupted; cleaned up", file=sys.stderr)
        return 130
    summarise(list(series.values()), loop_p99, args.slope_after_s)
    return 0


def run_fabric(args: argparse.Namespace, out_dir: Path) -> int:
    """The soak on a fabric (src/mpsched/bench/soak_fabric.py); 1 if the restarted switch was
    not programmed again."""
    from mpsched.bench.soak_fabric import FabricOptions, FabricSoak, load_fabric
    from mpsched.validation import InputError

    try:
        sc = load_fabric(args.fabric)
        opts = FabricOptions(
            args.minutes, args.change_every_s, args.sample_every_s, args.warmup_s,
            args.flap_every_s, args.flap_down_s,
            args.restart_at_s if args.restart_at_s >= 0 else None, args.restart,
            args.warm_frames,
        )
        soak = FabricSoak(sc, out_dir, opts)
    except (InputError, ValueError) as exc:
        print(f"soak: {exc}", file=sys.stderr)
        return 2
    print(f"soak: {sc.name}, {args.minutes:g} min; samples in {out_dir / 'samples.csv'}",
          flush=True)
    soak.run()
    reprogrammed = soak.report()
    summarise(soak.lives.sampled(), soak.loop_p99, args.slope_after_s)
    return 0 if reprogrammed else 1


def summarise_file(path: Path, warmup_s: float, slope_after_s: float) -> int:
    """`summarise` a finished soak's samples.csv; 2 if it cannot be read."""
    try:
        series, loop_p99 = read_samples(path, warmup_s)
    except (OSError, ValueError) as exc:
        print(f"soak: {exc}", file=sys.stderr)
        return 2
    if not any(s.samples for s in series):
        print(f"soak: {path}: no samples", file=sys.stderr)
        return 2
    summarise(series, loop_p99, slope_after_s)
    return 0


def summarise(series: list[Series], loop_p99: list[float], slope_after_s: float) -> None:
    """Per process its RSS growth and slope, fds and threads; then the key=value lines."""
    series = [s for s in series if s.samples]
    for s in series:
        first, last = s.samples[0][1], s.samples[-1][1]
        print(
            f"{s.name}: rss {first.rss_kb} -> {last.rss_kb} kB ({s.rss_growth_pct():+.1f} %, "
            f"{s.rss_slope_kb_per_min(slope_after_s):.1f} kB/min from "
            f"{s.born_s + slope_after_s:g} s, least squares "
            f"{s.rss_ls_slope_kb_per_min(slope_after_s):.1f}), "
            f"fds {first.fds} -> {last.fds} ({s.span('fds')}), "
            f"threads {first.threads} -> {last.threads} ({s.span('threads')})"
        )
    growth = max(s.rss_growth_pct() for s in series)
    slope = largest([s.rss_slope_kb_per_min(slope_after_s) for s in series])
    ls_slope = largest([s.rss_ls_slope_kb_per_min(slope_after_s) for s in series])
    print(f"soak_rss_growth_pct={growth:.1f}")
    print(f"soak_rss_slope_kb_per_min={slope:.1f}")
    print(f"soak_rss_ls_slope_kb_per_min={ls_slope:.1f}")
    print(f"soak_fds_growth={max(s.growth('fds') for s in series)}")
    print(f"soak_threads_growth={max(s.growth('threads') for s in series)}")
    print(f"soak_loop_p99_ms={max(loop_p99) if loop_p99 else float('nan')}")


if __name__ == "__main__":
    sys.exit(main())
