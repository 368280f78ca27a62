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
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from mpsched.bench.gcpauses import GcPauses
from mpsched.bench.scale_feed import Feeder
from mpsched.bench.scale_model import (
    SPINES,
    SizeResult,
    cpu_pct,
    fabric_section,
    jobs_line,
    machine_mark,
    meminfo_available_mb,
    memory_fits,
    misses,
    pairs,
    phases_line,
    plot,
    result_lines,
    rss_mb,
    spine_links,
    stat_cpu_s,
    thread_group,
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
from mpsched.controller.app.core import Controller, ControllerSettings, UnavailableError
from mpsched.controller.runtime.gcfreeze import FREEZE_MIN_PATHS
from mpsched.controller.telemetry.history import history_keep
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import ANY_BUILD_MAX_EDGES
from mpsched.fabric.netdesc import describe
from mpsched.lab.cpu_sampler import CpuSampler
from mpsched.p4profiles import SCALE_EDGES
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline, program_probe_port
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry, delete_link, sweep
from mpsched.stats import percentile

log = logging.getLogger("mpsched.bench.scale")

SIZES = (8, 16, 32, 64)
READY_TIMEOUT_S = 600.0
# LLHD with LM3 (as bench-control): the weights follow the changing telemetry, so every pair
# writes in every period
POLICY = "llhd"
CONTROLLER_MB_GUESS = 300.0  # before the first size has measured it


class WriteCounter:
    """Counts P4Runtime Write RPCs and their updates (wraps `P4RuntimeClient.write`)."""

    def __init__(self) -> None:
        self.requests = 0
        self.updates = 0
        self._lock = threading.Lock()
        self._orig = P4RuntimeClient.write

    def install(self) -> None:
        counter, orig = self, self._orig

        def write(client: P4RuntimeClient, updates) -> None:  # type: ignore[no-untyped-def]
            updates = list(updates)
            with counter._lock:
                counter.requests += 1
                counter.updates += len(updates)
            orig(client, updates)

        P4RuntimeClient.write = write  # type: ignore[method-assign]

    def uninstall(self) -> None:
        P4RuntimeClient.write = self._orig  # type: ignore[method-assign]


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


def entries(ctl: Controller) -> tuple[int, int]:
    """The entries of a leaf and of a spine: forwarding, and a leaf's scheduling too."""
    leaf, spine = ctl.net.switch("leaf1"), ctl.net.switch("spine1")
    sched = ctl.stepper.sched_entries(ctl.scheduler, "leaf1", time.time())
    return len(ctl.forwarding(leaf)) + len(sched), len(ctl.forwarding(spine))


def thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's Python threads by group (`thread_group`), and of the
    rest ("native": gRPC's own threads and the like) as the process's total less theirs."""
    ticks = os.sysconf("SC_CLK_TCK")
    groups: dict[str, float] = {}
    for t in threading.enumerate():
        try:
            text = Path(f"/proc/self/task/{t.native_id}/stat").read_text()
        except (OSError, TypeError):
            continue  # ended meanwhile
        group = thread_group(t.name)
        groups[group] = groups.get(group, 0.0) + stat_cpu_s(text, ticks)
    groups["native"] = time.process_time() - sum(groups.values())
    return groups


def probes_sent(ctl: Controller) -> int:
    return sum((a.probe_counts() or {}).get("sent", 0) for a in ctl.agents)


def fill_histories(ctl: Controller, paths: int) -> tuple[int, int]:
    """Every path's recorded history filled to what the recorder holds once it has run as many
    periods as a path keeps (its share of the budget among the fabric's `paths`,
    src/mpsched/controller/telemetry/history.py), dated back from its oldest as far apart as the
    recorder
    takes them: the RSS then counts the steady state, not a few seconds' worth. The share is
    of every path, not of those with an estimator yet: on a loaded machine the feeder may not
    have reached them all, and the paths filled to a larger share would hold more than the
    steady state until the recorder trimmed them. Returns (snapshots per path, in all)."""
    intake = ctl.intake
    with ctl._lock:
        cfg = intake.settings
        paths = max(paths, len(intake.estimators))
        keep = history_keep(paths, cfg.history, cfg.history_budget)
        # the recorder takes `history_per_period` paths a period, in turn
        apart = ctl.settings.telemetry_period * max(1.0, paths / cfg.history_per_period)
        now = time.time()
        for est in intake.estimators.values():
            base = est.snapshot(now)
            first = next(iter(est.history))["t"] if len(est.history) else now
            est.history.prepend([dict(base, t=first - k * apart)
                                 for k in range(keep - len(est.history), 0, -1)])
        return keep, sum(len(est.history) for est in intake.estimators.values())


def measure_loop(ctl: Controller, feeder: Feeder, res: SizeResult, counter: WriteCounter,
                 seconds: float) -> None:
    leaves, st = feeder.leaves, ctl.stepper
    ctl.loop.latencies_ms.clear()
    ctl.loop.phases.clear()
    for agent in ctl.agents:
        agent.job_times.clear()
    st.refresh_ms.clear()
    # the feeder's own CPU, without the controller's handling of what it hands over
    cpu0, wall0, feed0 = time.process_time(), time.monotonic(), feeder.cpu_s - feeder.ingest_s
    ingest0 = feeder.ingest_s
    upd0, probes0, sent0, skipped0 = counter.updates, probes_sent(ctl), feeder.sent, feeder.skipped
    steps0, skips0, iters0 = st.pair_steps, st.pair_skips, ctl.loop.iterations
    deferred0, threads0 = st.pair_deferred, thread_cpu()
    sampler = CpuSampler(dict)
    sampler.start()
    with GcPauses() as pauses:
        time.sleep(seconds)
    wall = time.monotonic() - wall0
    machine_mark(res, sampler.stop())
    threads = thread_cpu()
    lat, refresh = list(ctl.loop.latencies_ms), list(st.refresh_ms)
    res.loop_p50_ms = percentile(lat, 50) if lat else None
    res.loop_p99_ms = percentile(lat, 99) if lat else None
    res.refresh_p99_ms = percentile(refresh, 99) if refresh else None
    res.step_share_pct = ctl.control_stats().step_budget_pct_now
    feed_s = feeder.cpu_s - feeder.ingest_s - feed0
    res.cpu_pct = cpu_pct(time.process_time() - cpu0 - feed_s, wall)
    res.feeder_cpu_pct = cpu_pct(feed_s, wall)
    res.writes_per_s = (counter.updates - upd0) / wall
    res.probe_pps = (probes_sent(ctl) - probes0) / wall / leaves
    res.reports_per_s = (feeder.sent - sent0) / wall
    res.rss_mb = rss_mb()
    steps, skips = st.pair_steps - steps0, st.pair_skips - skips0
    iters = max(1, ctl.loop.iterations - iters0)
    every = ", ".join(f"{cells} every {ms} ms" for ms, cells in feeder.intervals_ms().items())
    print(f"  reports: cells (path and RTT) at the end {every}, "
          f"{feeder.offered_per_s():.0f}/s offered, {res.reports_per_s:.0f}/s handed over "
          f"({(feeder.skipped - skipped0) / wall:.0f}/s skipped: the feeder behind); the "
          f"feeder made them at {res.feeder_cpu_pct:.0f} % of a core (not counted), the "
          f"controller took them at {cpu_pct(feeder.ingest_s - ingest0, wall):.0f} (counted)",
          flush=True)
    print(f"  loop: {len(lat)} writing iterations of {ctl.loop.iterations - iters0}, "
          f"{steps / iters:.0f} pairs stepped, {skips / iters:.0f} skipped and "
          f"{(st.pair_deferred - deferred0) / iters:.0f} left over the budget per iteration; "
          f"refresh p50 {percentile(refresh, 50) if refresh else 0:.0f} ms; a step's share of "
          f"the period {res.step_share_pct} % at the end (step_budget_pct "
          f"{ctl.params().step_budget_pct:g}, cpu_budget_pct {ctl.params().cpu_budget_pct})",
          flush=True)
    print(f"  {phases_line(list(ctl.loop.phases))}", flush=True)
    print(f"  {jobs_line([t for agent in ctl.agents for t in list(agent.job_times)])}", flush=True)
    print(f"  {pauses.line()}", flush=True)
    shares = {g: cpu_pct(v - threads0.get(g, 0.0), wall) for g, v in threads.items()}
    print("  cpu % of a core by thread: " + ", ".join(
        f"{g} {v:.0f}" for g, v in sorted(shares.items(), key=lambda kv: -kv[1])), flush=True)
    mark = {None: "unknown", 0: "no", 1: "YES: the figures measure the machine"}[res.cpu_bound]
    idle = "n/a" if res.machine_idle_pct is None else f"{res.machine_idle_pct:.0f} %"
    print(f"  the machine: idle {idle} of its cores over the measurement; cpu_bound (idle "
          f"< 10 % for over 20 % of it): {mark}", flush=True)


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


def reroute_ms(ctl: Controller, leaves: int) -> float | None:
    """Spine 1's links down in one request until every affected pair's paths are
    re-installed: the new entries and the placements off the vanished paths acknowledged
    by every switch (Operator._reroute's phases but the last, the deletions of the
    entries that went, which the request also awaits: printed beside it). None, said so:
    some switch did not acknowledge within the controller's write timeout."""
    t1 = time.perf_counter()
    try:
        ctl.operator.set_links_admin(spine_links(leaves, 1), False)
    except UnavailableError as error:
        print(f"  spine failure not acknowledged: {error}", flush=True)
        return None
    request_ms = (time.perf_counter() - t1) * 1000
    phases = ctl.operator.last_reroute_ms
    ms = request_ms - phases.get("deletions", 0.0)
    print(f"  spine failure: {ms:.0f} ms until re-installed, {request_ms:.0f} ms with the "
          "deletions: " + ", ".join(f"{k} {v:.0f}" for k, v in phases.items()), flush=True)
    return ms


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
