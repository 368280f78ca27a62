"""`make bench-scale`: the control plane on leaf-spine fabrics of growing size.

Per size (leaves, 4 spines), one `simple_switch_grpc` per switch (no ports carrying
traffic; a leaf's probe port on a veth whose other end the controller's probers write to,
unless `--probes packet-out`) runs the program built for many edges (`make p4-scale`:
MAX_EDGES 64, p4src/include/sizes.p4), and the real controller (the same `Controller` the
os-ken app hosts, in this process) programs them from empty. A feeder
(src/mpsched/bench/scale_feed.py) hands over synthetic telemetry for every path of every ordered
pair of leaves as the leaves would send it: a path report as the far leaf sends it and an RTT
report as the near one does, each once per the interval the controller set for the pair
(src/mpsched/controller/telemetry/report_rates.py: an active pair's, an idle pair's, or the leaf's
own when the report cap, `--report-max-pps`, and each leaf's share of the budget of all of them,
`--report-budget-pps`, stretch it further), spread over time, with values that change every
time (every pair carries data, so every pair turns active); the policy is
LLHD with LM3 (as in bench-control), so every pair is active and its weights change with its
reports (the loop steps the pairs whose inputs changed, most overdue first within its time
budget, src/mpsched/controller/scheduling/due.py).

Per size: the time to program every switch from empty (pipeline and forwarding), the
control-loop latency (reading the estimates -> every switch acknowledged its writes)
p50/p99, the pairs' refresh time p99 (a pair's first input since its last step -> its next
step), the process's RSS (every path's recorded history filled to its steady state first)
and CPU (% of one core, less what the feeder spends making up the reports; the controller's
handling of them counts), the P4Runtime updates per second in
the loop, the reports handed over per second, the entries
an edge and a transit switch hold, the probes each leaf sends per second (the controller's
defaults, or the cap of `--probe-max-pps`), and the time from a spine's failure (all its
links administratively down through the controller, one re-route) until every switch
acknowledged the new forwarding and the affected pairs' placements off the failed paths.
Sizes run in order; the run stops early, saying why, when the machine's memory or the
programming time does not allow the next. Ends with `scale_<figure>_<leaves>=`
lines (docs/targets.md).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from mpsched.bench.scale_feed import Feeder
from mpsched.bench.scale_measure import (
    WriteCounter,
    entries,
    fill_histories,
    measure_loop,
    reroute_ms,
)
from mpsched.bench.scale_model import (
    SPINES,
    SizeResult,
    fabric_section,
    meminfo_available_mb,
    memory_fits,
    misses,
    pairs,
    plot,
    result_lines,
)
from mpsched.bench.scale_switches import (
    artifacts,
    probe_veths,
    start_switches,
    stop_switches,
    switch_rss_mb,
)
from mpsched.controller.app.cli import (
    add_measurement_options,
    add_step_budget_option,
    cpu_budget_pct,
    step_budget_pct,
    telemetry_config,
)
from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.runtime.gcfreeze import FREEZE_MIN_PATHS
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import ANY_BUILD_MAX_EDGES
from mpsched.fabric.netdesc import describe
from mpsched.p4profiles import SCALE_EDGES
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline, program_probe_port
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry, delete_link, sweep

log = logging.getLogger("mpsched.bench.scale")

SIZES = (8, 16, 32, 64)
READY_TIMEOUT_S = 600.0
# LLHD with LM3 (as bench-control): the weights follow the changing telemetry, so every pair
# writes in every period
POLICY = "llhd"
CONTROLLER_MB_GUESS = 300.0  # before the first size has measured it


def controller(leaves: int, switches: list[Bmv2Switch], args: argparse.Namespace,
               probe_ifaces: dict[str, str] | None = None) -> Controller:
    """The controller of the fabric of `leaves` leaves on `switches` (by device id);
    `probe_ifaces`: the controller's end of each edge's probe port, by switch name."""
    section = fabric_section(leaves)
    fabric = parse_fabric(section, max_edges=ANY_BUILD_MAX_EDGES)
    net = describe(section, fabric, lambda device_id: switches[device_id - 1].grpc_address,
                   probe_ifaces=probe_ifaces)
    art = artifacts()
    settings = ControllerSettings(
        telemetry=args.telemetry,
        poll_interval=args.poll_interval,
        counter_budget_cps=args.counter_budget_cps or None,
        control_period_ms=args.period_ms,
        step_budget_pct=args.step_budget_pct,
        cpu_budget_pct=args.cpu_budget,
        default_policy=POLICY,
        gc_freeze_min_paths=args.gc_freeze_min_paths,
    )
    ctl = Controller(net, Pipeline(P4Info.from_file(art.p4info)), str(art.bmv2_json), settings)
    ctl.scheduler.set_class_policy(0, {"lm3": True})  # as bench-control: weights change
    return ctl


def run_size(leaves: int, args: argparse.Namespace, log_dir: Path, registry: Registry,
             counter: WriteCounter) -> SizeResult:
    res = SizeResult(leaves)
    fabric = parse_fabric(fabric_section(leaves), max_edges=ANY_BUILD_MAX_EDGES)
    port = probe_port(args)
    veths = probe_veths(fabric, registry) if port is not None else {}
    switches = start_switches(leaves + SPINES, log_dir, registry,
                              {i: {port: ends[0]} for i, ends in veths.items()})
    names = {i: sw.name for i, sw in enumerate(fabric.switches, start=1)}
    try:
        ctl = controller(leaves, switches, args, {names[i]: e[1] for i, e in veths.items()})
        feeder = Feeder(ctl, leaves)
        # the CPU budget sees what a controller spends, not what making up the reports costs
        ctl.governor.cpu_clock = lambda: time.process_time() - feeder.made_s()
        upd0, t0 = counter.updates, time.perf_counter()
        ctl.start()
        try:
            if not ctl.wait_ready(READY_TIMEOUT_S):
                raise SystemExit(f"bench-scale: {leaves} leaves not programmed within "
                                 f"{READY_TIMEOUT_S:.0f} s")
            res.program_s = time.perf_counter() - t0
            print(f"  programmed in {res.program_s:.1f} s: {counter.updates - upd0} updates",
                  flush=True)
            res.switch_rss_mb = switch_rss_mb(switches)
            print(f"  one BMv2 process, programmed: {res.switch_rss_mb:.0f} MiB RSS at most",
                  flush=True)
            feeder.start()
            time.sleep(args.warmup)
            keep, held = fill_histories(ctl, pairs(leaves) * SPINES)
            print(f"  histories: {keep} snapshots per path, {held} in all (filled; "
                  f"{len(ctl.intake.estimators)} of {pairs(leaves) * SPINES} paths reported)",
                  flush=True)
            # the filling held the lock: the feeder's backlog and the loop settle first
            time.sleep(args.warmup)
            measure_loop(ctl, feeder, res, counter, args.seconds)
            feeder.halt.set()
            feeder.join(timeout=30)
            res.entries_edge, res.entries_transit = entries(ctl)
            res.reroute_ms = reroute_ms(ctl, leaves)
        finally:
            feeder.halt.set()
            ctl.stop()
    finally:
        stop_switches(switches)
        for switch_end, _ in veths.values():
            delete_link(switch_end)
            registry.forget_link(switch_end)
    return res


def probe_port(args: argparse.Namespace) -> int | None:
    """The program's probe port when the probes go through it (`--probes port`)."""
    if args.probes != "port":
        return None
    return program_probe_port(artifacts().p4info)


def check_memory(leaves: int, done: list[SizeResult]) -> str | None:
    """Why `leaves` cannot run now (None: it fits), from the last size's measurements."""
    last = done[-1] if done else None
    per_switch = last.switch_rss_mb if last and last.switch_rss_mb else 0.0
    ctl_mb = last.rss_mb if last and last.rss_mb else CONTROLLER_MB_GUESS
    if last is not None and last.rss_mb:
        ctl_mb = last.rss_mb * leaves * (leaves - 1) / pairs(last.leaves)
    available = meminfo_available_mb(Path("/proc/meminfo").read_text())
    if memory_fits(leaves + SPINES, per_switch, ctl_mb, available):
        return None
    return (f"{leaves + SPINES} switches of {per_switch:.0f} MiB and a controller of about "
            f"{ctl_mb:.0f} MiB do not fit in 80 % of the {available:.0f} MiB available")


def report(results: list[SizeResult]) -> None:
    for line in plot(results):
        print(line)
    for line in misses(results):
        print(f"over target: {line}")
    for line in result_lines(results):
        print(line)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="mpsched bench scale", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), metavar="LEAVES",
                   help=f"leaf counts, in order (default: {' '.join(map(str, SIZES))}; at "
                        f"most {SCALE_EDGES}, the build's MAX_EDGES)")
    p.add_argument("--seconds", type=float, default=10.0,
                   help="loop measurement per size (default: %(default)s)")
    p.add_argument("--warmup", type=float, default=3.0,
                   help="feeding before the measurement (default: %(default)s)")
    p.add_argument("--period-ms", type=float, default=ControllerSettings.control_period_ms,
                   help="control period (default: %(default)s)")
    add_step_budget_option(p)
    # the controller's own options of how often the switches probe, report and are read
    # (its defaults, checks and help: `mpsched controller --help`)
    add_measurement_options(p)
    p.add_argument("--gc-freeze-min-paths", type=int, default=FREEZE_MIN_PATHS,
                   help="ControllerSettings.gc_freeze_min_paths: paths with estimates before "
                        "the controller freezes its state out of the garbage collector's full "
                        "collections; 0: never (default: %(default)s, the controller's)")
    p.add_argument("--probes", choices=("port", "packet-out"), default="port",
                   help="how the controller sends its probes: frames onto each leaf's probe "
                        "port over a veth (as the testbed does; needs root) or P4Runtime "
                        "PacketOuts (default: %(default)s)")
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    if any(n < 2 or n > SCALE_EDGES for n in args.sizes):
        p.error(f"--sizes: 2..{SCALE_EDGES} leaves")
    if args.gc_freeze_min_paths < 0:
        p.error("--gc-freeze-min-paths: must be >= 0 (0: never)")
    if not args.counter_budget_cps >= 0:
        p.error(f"--counter-budget-cps: must be >= 0 (0: no budget), got "
                f"{args.counter_budget_cps}")
    try:
        step_budget_pct(args)
        args.cpu_budget = cpu_budget_pct(args)
        args.telemetry = telemetry_config(args)
    except ValueError as error:
        p.error(str(error))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = prereqs.missing("simple_switch_grpc")
    if args.probes == "port" and not prereqs.is_root():
        problems.append("--probes port: the probe ports' veths need root (or --probes "
                        "packet-out)")
    problems += [f"{m}: missing; run `make p4-scale`" for m in artifacts().missing()]
    if problems:
        print("bench-scale: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-scale")
    if refused is not None:
        return refused
    for line in sweep():
        log.info("cleaned up: %s", line)
    registry, counter = Registry(), WriteCounter()
    counter.install()
    results: list[SizeResult] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for leaves in args.sizes:
                why = check_memory(leaves, results)
                if why is not None:
                    print(f"bench-scale: stopping before {leaves} leaves: {why}", flush=True)
                    break
                print(f"{leaves} leaves, {SPINES} spines, {pairs(leaves)} pairs", flush=True)
                results.append(run_size(leaves, args, Path(tmp), registry, counter))
    except KeyboardInterrupt:
        print("bench-scale: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        counter.uninstall()
        registry.close()
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
