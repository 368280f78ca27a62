"""What `make bench-scale` (src/mpsched/bench/scale.py) measures of a running controller:
its P4Runtime writes, the control loop's latencies and refresh times, the CPU by thread, the
probes sent, the entries a switch holds and a spine failure's re-route, and the histories
filled to their steady state before the RSS is read."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from mpsched.bench.gcpauses import GcPauses
from mpsched.bench.scale_feed import Feeder
from mpsched.bench.scale_model import (
    SizeResult,
    cpu_pct,
    jobs_line,
    machine_mark,
    phases_line,
    rss_mb,
    spine_links,
    stat_cpu_s,
    thread_group,
)
from mpsched.controller.app.core import Controller, UnavailableError
from mpsched.controller.telemetry.history import history_keep
from mpsched.lab.cpu_sampler import CpuSampler
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.stats import percentile


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
