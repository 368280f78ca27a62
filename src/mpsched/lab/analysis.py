"""From one run's raw reports to a `report.RunResult`: the metrics of one run.

A fabric scenario's run goes to `fabric_analysis.py` (the same metrics over its flows, and
per ordered pair of edges). Which traffic counts: the scenario's main workloads (bulk, files,
flows: h1 -> h2) are measured; cross traffic (vbr, cross_bulk) only loads the paths. The
measurement window is [warmup_s, duration_s] after traffic start. Every metric
formula lives in `metrics.py` (reordering: `reorder.py`); this module only selects the data:

- goodput_mbps: bytes the h2 sinks received in the window (`metrics.goodput_mbps`).
- goodput_frac: goodput / time-averaged capacity, where capacity at a time is
  the sum over paths of `PathSpec.rate_at` (slowest segment, 0 while down).
- path<i>_mbps: mean forward rate delivered by path i's link emulator (Ethernet
  bytes s1 -> s2, cross traffic pinned to the path included); series "path<i>".
- path<i>_offered_mbps: what s1 placed onto path i (its path_tx counter), drops
  on the link included.
- fct_mean_s, fct_p99_s: transfers of files/flows/poisson workloads, FCT
  counted from each flow's arrival; a transfer still running at the end counts
  with the time it had run (the sender's end - its arrival: a lower bound of its
  FCT), so a policy that leaves its slowest flows unfinished does not look
  faster; failed transfers are left out. completed_frac: completed / started
  transfers (one still running at the end, or failed, is not completed).
- per size bucket b of `metrics.FCT_BUCKETS` (lt100k: < 100 kB, 100k_1m:
  100 kB-1 MB, gt1m: > 1 MB) with at least one started transfer:
  fct_<b>_mean_s, fct_<b>_p99_s, slowdown_<b>_mean, slowdown_<b>_p99,
  completed_frac_<b>, flows_<b> (completed); slowdown_mean, slowdown_p99 over
  every transfer with an FCT (censored ones included, as above). Slowdown =
  FCT / `metrics.best_ideal_fct_s` of its size on the scenario's paths at t=0
  (`Scenario.path_baselines`).
- offered_load_pct: the summed `load_pct` of the poisson workloads (so a load
  sweep's runs can be put side by side).
- rtt_p50_ms, rtt_p99_ms: senders' TCP_INFO smoothed RTT samples.
- retrans: tcpi_total_retrans summed over the senders' sockets.
- ooo_packets, reorder_ratio, reorder_degree: RFC 4737 over the IPv4 IDs of
  each h1 -> h2 TCP flow in the receiver-side capture.
- jain: Jain's index over the goodput of the bulk workloads' connections.
- reaction_time_s (scenarios where a path goes down inside the window): time from
  the first failure until the total goodput is back at 90 % of what it was in the
  5 s before, scaled by the capacity left in the next second (`metrics.reaction_time`, held for
  2 s); 0 when the goodput never dips below that, NaN when it never recovers.
- cpu_idle_pct, cpu_low_idle_pct, cpu_bound, cpu_shares (`cpu.py`): the
  machine's CPU idle (mean, and % of the window below the scenario's
  `cpu_bound.idle_below_pct`), the rule's verdict, and each process's CPU share
  between the samples that enclose the window.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

from mpsched import addressing as ap
from mpsched.emu.schedule import Step
from mpsched.lab import fabric_analysis, metrics, pcap, reorder
from mpsched.lab.report import RunResult
from mpsched.lab.run_window import censored_fct_s, cpu_load, interp
from mpsched.lab.runner import RunRaw
from mpsched.stats import percentile

log = logging.getLogger(__name__)

MAIN_KINDS = ("bulk", "files", "flows", "poisson")
BIN_S = 1.0
NAN = float("nan")


def capacity_mbps(raw: RunRaw, start: float, end: float, step: float = 0.1) -> float:
    """Time-average over [start, end] (s after traffic start) of the up paths' forward rates."""
    return raw.scenario.mean_capacity_mbps(start, end, step)


def first_failure(raw: RunRaw) -> float | None:
    """Time of the first scheduled event that takes a path segment down (forward)."""
    times = [
        e.at_s
        for p in raw.scenario.topo.paths
        for seg in p.segments()
        for e in seg.forward_events
        if isinstance(e, Step) and e.changes.get("up") is False
    ]
    return min(times, default=None)


def reaction_time_s(
    raw: RunRaw, total: list[tuple[float, float]], w0: float, w1: float
) -> float | None:
    t_down = first_failure(raw)
    if t_down is None or not w0 + 1 <= t_down < w1 - 2:
        return None
    before = [r for t, r in total if t_down - 5 <= t < t_down]
    cap_before = capacity_mbps(raw, max(0.0, t_down - 5), t_down)
    cap_after = capacity_mbps(raw, t_down, min(w1, t_down + 1))
    if not before or cap_before <= 0:
        return None
    target = 0.9 * (sum(before) / len(before)) * cap_after / cap_before
    dips = [t for t, r in total if t_down <= t <= t_down + 3 and r < target]
    if not dips:
        return 0.0
    return dips[0] - t_down + metrics.reaction_time(total, dips[0], target, hold_s=2.0)


def bucket_metrics(
    raw: RunRaw, flows: list[tuple[int, float | None, bool]]
) -> dict[str, float]:
    """FCT and slowdown per size bucket, and the slowdown over all transfers with an FCT, of
    ``flows`` ((size, fct_s or None, censored) per started transfer)."""
    paths = raw.scenario.path_baselines()

    def ideal(size: int) -> float:
        return metrics.best_ideal_fct_s(size, paths)

    m: dict[str, float] = {}
    for name, st in metrics.bucket_stats(flows, ideal).items():
        m[f"fct_{name}_mean_s"] = st.fct_mean
        m[f"fct_{name}_p99_s"] = st.fct_p99
        m[f"slowdown_{name}_mean"] = st.slowdown_mean
        m[f"slowdown_{name}_p99"] = st.slowdown_p99
        m[f"completed_frac_{name}"] = st.completed_frac
        m[f"flows_{name}"] = float(st.completed)
    slow = [f / ideal(s) for s, f, _ in flows if f is not None]
    if slow:
        m["slowdown_mean"] = math.fsum(slow) / len(slow)
        m["slowdown_p99"] = percentile(slow, 99)
    return m


def _sink_series(report: dict[str, Any], t0: float) -> list[tuple[float, float]]:
    return [(t - t0, float(b)) for t, b in report.get("total", [])]


def analyse(raw: RunRaw) -> RunResult:
    sc = raw.scenario
    if sc.fabric is not None:  # flows between many edges, metrics per pair too
        return fabric_analysis.analyse(raw)
    w0, w1 = min(sc.warmup_s, sc.duration_s / 2), sc.duration_s
    main = [i for i, w in enumerate(sc.workload) if w.kind in MAIN_KINDS]
    m, series = goodput(raw, main, w0, w1)
    m.update(path_rates(raw, w0, w1, series))
    senders = Senders()
    for i in main:
        senders.add(i, raw.reports.get(f"send{i}", {}))
    m.update(senders.metrics(raw))
    m["jain"] = jain(raw, main, w1)
    extents = reordering(raw, m)
    load = cpu_load(raw, w0, w1)
    m.update(load.pop("metrics"))
    return RunResult(
        scenario=sc.name,
        policy=raw.policy,
        run=raw.run,
        seed=raw.seed,
        duration_s=sc.duration_s,
        metrics=m,
        series=series,
        fct=senders.fct,
        rtt_ms=senders.rtt,
        reorder_extents=extents,
        **load,
    )


def goodput(
    raw: RunRaw, main: list[int], w0: float, w1: float
) -> tuple[dict[str, float], dict[str, list[tuple[float, float]]]]:
    """Goodput at the receivers of the `main` workloads in the window [w0, w1]: the metrics
    goodput_mbps, goodput_frac and reaction_time_s, and the series "total"."""
    sc, t0 = raw.scenario, raw.t0
    m: dict[str, float] = {}
    delivered = 0.0
    sink_series = []
    for i in main:
        rep = raw.reports.get(f"sink{i}", {})
        s = _sink_series(rep, t0)
        sink_series.append(s)
        delivered += interp(s, w1) - interp(s, w0)
    m["goodput_mbps"] = metrics.goodput_mbps(delivered, w1 - w0)
    capacity = capacity_mbps(raw, w0, w1)
    m["goodput_frac"] = (
        metrics.goodput_fraction(m["goodput_mbps"], capacity) if capacity > 0 else NAN
    )
    edges = [k * BIN_S for k in range(int(sc.duration_s / BIN_S) + 1)]
    total = [(t, sum(interp(s, t) for s in sink_series)) for t in edges]
    series = {"total": metrics.rate_series(total)}
    reaction = reaction_time_s(raw, series["total"], w0, w1)
    if reaction is not None:
        m["reaction_time_s"] = reaction
    return m, series


def path_rates(
    raw: RunRaw, w0: float, w1: float, series: dict[str, list[tuple[float, float]]]
) -> dict[str, float]:
    """Per path the rate its link delivered (path<i>_mbps; into `series` as "path<i>") and the
    rate s1 offered to it (path<i>_offered_mbps) in the window."""
    m: dict[str, float] = {}
    for source, suffix in ((raw.link_tx, ""), (raw.path_counters, "_offered")):
        for path_id in sorted({p for _, c in source for p in c}):
            samples = [(t - raw.t0, float(c[path_id])) for t, c in source if path_id in c]
            if not suffix:
                series[f"path{path_id}"] = metrics.rate_series(samples)
            sent = interp(samples, w1) - interp(samples, w0) if samples else 0.0
            m[f"path{path_id}{suffix}_mbps"] = metrics.goodput_mbps(sent, w1 - w0)
    return m


@dataclass
class Senders:
    """What the main workloads' senders report: FCTs, RTT samples, retransmissions."""

    fct: list[tuple[int, float]] = field(default_factory=list)
    # every started transfer: (size, FCT or None, censored: still running at the end)
    flows: list[tuple[int, float | None, bool]] = field(default_factory=list)
    rtt: list[float] = field(default_factory=list)
    retrans: int = 0
    failed_transfers: int = 0
    started: int = 0
    censored: list[float] = field(default_factory=list)  # FCT lower bounds, still running

    def add(self, workload: int, rep: dict[str, Any]) -> None:
        """The report of workload number `workload`'s sender."""
        if "error" in rep:
            log.warning("workload %d: %s", workload, rep["error"])
        for stream in rep.get("streams", []):
            self.rtt += [x for x in stream.get("rtt_ms", []) if x > 0]
            self.retrans += stream.get("retrans") or 0
        for tr in rep.get("transfers", []):
            self._transfer(tr, rep)

    def _transfer(self, tr: dict[str, Any], rep: dict[str, Any]) -> None:
        self.started += 1
        if "fct_s" in tr:
            self.fct.append((int(tr["size"]), float(tr["fct_s"])))
            self.flows.append((int(tr["size"]), float(tr["fct_s"]), False))
        elif "error" in tr:
            self.failed_transfers += 1
            self.flows.append((int(tr["size"]), None, False))
        else:
            ran = censored_fct_s(tr, rep)
            self.flows.append((int(tr["size"]), ran, True))
            if ran is not None:
                self.censored.append(ran)
        if tr.get("rtt_ms"):
            self.rtt.append(float(tr["rtt_ms"]))
        self.retrans += tr.get("retrans") or 0

    def metrics(self, raw: RunRaw) -> dict[str, float]:
        """transfers, completed_frac, FCT and slowdown (also per size bucket), the offered
        load, RTT percentiles and retrans (see the module's docstring)."""
        m: dict[str, float] = {}
        if self.started:
            m["transfers"] = float(len(self.fct))
            m["failed_transfers"] = float(self.failed_transfers)
            m["completed_frac"] = len(self.fct) / self.started
        if self.fct or self.censored:
            times = [f for _, f in self.fct] + self.censored
            m["fct_mean_s"] = math.fsum(times) / len(times)
            m["fct_p99_s"] = percentile(times, 99)
        if self.flows:
            m.update(bucket_metrics(raw, self.flows))
        loads = [w.load_pct for w in raw.scenario.workload if w.kind == "poisson"]
        if loads:
            m["offered_load_pct"] = math.fsum(loads)
        if self.rtt:
            m["rtt_p50_ms"] = percentile(self.rtt, 50)
            m["rtt_p99_ms"] = percentile(self.rtt, 99)
        m["retrans"] = float(self.retrans)
        return m


def jain(raw: RunRaw, main: list[int], w1: float) -> float:
    """Jain's index over the goodput of the bulk workloads' connections (NaN for fewer than 2)."""
    rates = []
    for i in main:
        if raw.scenario.workload[i].kind != "bulk":
            continue
        for conn in raw.reports.get(f"sink{i}", {}).get("connections", []):
            seconds = (conn.get("end") or (raw.t0 + w1)) - conn["start"]
            if seconds > 0:
                rates.append(8 * conn["bytes"] / seconds / 1e6)
    return metrics.jain_index(rates) if len(rates) >= 2 else NAN


def reordering(raw: RunRaw, m: dict[str, float]) -> list[int]:
    """RFC 4737 reordering of the h1 -> h2 TCP flows in the receiver's capture: the metrics
    ooo_packets, reorder_ratio, reorder_degree into `m`; returns the extents."""
    if not (raw.capture and raw.capture.exists()):
        return []
    try:
        packets, stats = pcap.read_pcap(raw.capture)
        per_flow = pcap.pcap_reordering(
            p for p in packets
            if ap.in_subnet(p.src, ap.SENDER_EDGE) and ap.in_subnet(p.dst, ap.RECEIVER_EDGE)
        )
        pooled = reorder.merge_reorder_stats(per_flow.values())
        m["ooo_packets"] = float(pooled.reordered)
        m["reorder_ratio"] = pooled.ratio
        m["reorder_degree"] = pooled.degree
        return pooled.extents
    except (OSError, pcap.PcapError) as exc:
        log.warning("capture %s: %s", raw.capture, exc)
        return []
