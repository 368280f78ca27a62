"""A fabric run's metrics, overall and per ordered pair of edges (docs/fabric-lab.md, "Workloads").

The same metrics as a two-edge run (src/mpsched/lab/analysis.py; every formula in metrics.py
and reorder.py), over the flows of the fabric's workloads (src/mpsched/lab/fabric_workload.py),
and the same metrics per ordered pair of edges ``<src edge>-><dst edge>`` (switch names) in
`RunResult.pairs`:

- goodput_mbps: bytes the sinks received in the window from the pair's source hosts (the
  sinks' per-peer samples); the overall goodput_frac is over the summed capacity of the
  edges' links (`fabric_workload.edge_capacity_mbps`), the load's reference;
- transfers, completed_frac, fct_mean_s, fct_p99_s and per size bucket (`metrics.FCT_BUCKETS`)
  fct_<b>_mean_s, fct_<b>_p99_s, slowdown_<b>_mean, slowdown_<b>_p99, completed_frac_<b>,
  flows_<b>, as analysis.py counts them (censored transfers at the time they had run); the
  slowdown's ideal FCT is the flow's alone on the best of its pair's paths at t = 0;
- ooo_packets, reorder_ratio, reorder_degree: RFC 4737 over the IPv4 IDs of each TCP flow in
  the receiving hosts' captures, pooled per pair by the flows' source addresses;
- MPTCP bulk transfers (`fabric_mptcp`): per pair with one, mptcp_goodput_mbps,
  mptcp_frames_mbps, mptcp_paths_mbps, mptcp_other_mbps, mptcp_capacity_mbps,
  mptcp_goodput_frac, mptcp_goodput_of_paths; overall mptcp_goodput_mbps,
  mptcp_capacity_mbps (summed), mptcp_goodput_frac and mptcp_goodput_of_paths (means);
- overall only: incast_qct_mean_s, incast_qct_p99_s (a round's query completion time: its
  last response, `incast_rounds`), incast_completed_frac (rounds all of whose responses
  completed / rounds started); rtt_p50_ms, rtt_p99_ms, retrans from the senders' TCP_INFO.

`flow_records` and `pair_metrics` are pure (synthetic records in tests); `analyse` reads a
run's reports. `pair_table` is the run report's per-pair table.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mpsched.fabric import paths as fpaths
from mpsched.fabric.model import Fabric
from mpsched.lab import fabric_mptcp, metrics, pcap, reorder
from mpsched.lab.fabric_workload import (
    SenderPlan,
    edge_capacity_mbps,
    host_edges,
    plan_hosts,
    receivers,
)
from mpsched.lab.fabric_workload import sender_plans as make_plans
from mpsched.lab.report import RunResult, format_mean_ci
from mpsched.lab.run_window import cpu_load, interp, transfer_fct
from mpsched.lab.runner import BASE_PORT
from mpsched.stats import mean_ci95, percentile

log = logging.getLogger(__name__)

NAN = float("nan")
Pair = tuple[int, int]
Ideal = Callable[[Pair, int], float]  # (pair, size) -> the ideal FCT in s


@dataclass(frozen=True)
class FlowRecord:
    """One started transfer: its pair, size, FCT (None: failed, or no time to count) and
    whether it was still running at the end (`fct_s` then the time it had run)."""

    pair: Pair
    size: int
    fct_s: float | None
    censored: bool = False


def flow_records(reports: Mapping[str, dict[str, Any]], plans: Sequence[SenderPlan],
                 edges: Mapping[str, int]) -> list[FlowRecord]:
    """The transfers of every plan's report (`reports` by process name), each with its pair:
    the plan's source edge, the edge of the transfer's destination address (`edges`)."""
    out = []
    for plan in plans:
        report = reports.get(plan.name, {})
        if "error" in report:
            log.warning("%s: %s", plan.name, report["error"])
        for tr in report.get("transfers", []):
            pair = (plan.host.edge, edges[tr["dst"]])
            out.append(FlowRecord(pair, int(tr["size"]), *transfer_fct(tr, report)))
    return out


def pair_bytes(reports: Mapping[str, Mapping[str, Any]], sinks: Mapping[str, int],
               edges: Mapping[str, int], t0: float, w0: float, w1: float) -> dict[Pair, float]:
    """Bytes received per pair in [w0, w1] (s after `t0`): per sink (`sinks`: report name ->
    the edge of its host) the growth of each peer address's counter."""
    out: dict[Pair, float] = {}
    for name, dst in sinks.items():
        for address, series in reports.get(name, {}).get("peers", {}).items():
            if address not in edges:
                continue
            rel = [(float(t) - t0, float(b)) for t, b in series]
            pair = (edges[address], dst)
            out[pair] = out.get(pair, 0.0) + interp(rel, w1) - interp(rel, w0)
    return out


def window_pairs(plans: Sequence[SenderPlan], edges: Mapping[str, int], w0: float, w1: float
                 ) -> dict[Pair, list[str]]:
    """The pairs the plans send on within [w0, w1) (s from the run's start), each with the
    names of its senders: a bulk plan whose streams run then, a flow that starts then."""
    out: dict[Pair, list[str]] = {}
    for plan in plans:
        if plan.dst is not None:
            sent = {plan.dst.address} if plan.start_s < w1 and plan.start_s + plan.seconds > w0 \
                else set()
        else:
            sent = {f.dst for f in plan.flows if w0 <= plan.start_s + f.at < w1}
        for address in sorted(sent & edges.keys()):
            names = out.setdefault((plan.host.edge, edges[address]), [])
            if plan.name not in names:
                names.append(plan.name)
    return out


def silent_pairs(planned: Mapping[Pair, Sequence[str]], received: Mapping[Pair, float],
                 reports: Mapping[str, Mapping[str, Any]]) -> dict[Pair, str]:
    """The planned pairs (`window_pairs`) whose sinks counted no byte in the window, each
    with what its senders' reports tell: the error of one that failed, or that one wrote
    no report."""
    out = {}
    for pair, names in planned.items():
        if received.get(pair, 0.0) > 0:
            continue
        told = []
        for name in names:
            report = reports.get(name)
            if report is None:
                told.append(f"{name} wrote no report")
            elif "error" in report:
                told.append(f"{name} failed: {report['error']}")
        out[pair] = "; ".join(told) or f"{', '.join(names)} reported no error"
    return out


def fct_metrics(flows: Sequence[FlowRecord], ideal: Ideal) -> dict[str, float]:
    """FCT, slowdown and completion overall and per size bucket (analysis.py's keys)."""
    m: dict[str, float] = {}
    if not flows:
        return m
    done = [f for f in flows if f.fct_s is not None and not f.censored]
    timed = [f.fct_s for f in flows if f.fct_s is not None]
    m["transfers"] = float(len(done))
    m["failed_transfers"] = float(sum(1 for f in flows if f.fct_s is None))
    m["completed_frac"] = len(done) / len(flows)
    if timed:
        m["fct_mean_s"] = math.fsum(timed) / len(timed)
        m["fct_p99_s"] = percentile(timed, 99)
    slow = [f.fct_s / ideal(f.pair, f.size) for f in flows if f.fct_s is not None]
    slow = [s for s in slow if math.isfinite(s)]
    if slow:
        m["slowdown_mean"] = math.fsum(slow) / len(slow)
        m["slowdown_p99"] = percentile(slow, 99)
    for name, st in bucket_stats(flows, ideal).items():
        m[f"fct_{name}_mean_s"] = st.fct_mean
        m[f"fct_{name}_p99_s"] = st.fct_p99
        m[f"slowdown_{name}_mean"] = st.slowdown_mean
        m[f"slowdown_{name}_p99"] = st.slowdown_p99
        m[f"completed_frac_{name}"] = st.completed_frac
        m[f"flows_{name}"] = float(st.completed)
    return m


def bucket_stats(flows: Sequence[FlowRecord], ideal: Ideal) -> dict[str, metrics.BucketStats]:
    """`metrics.bucket_stats` of flows of several pairs (each against its own pair's ideal):
    the slowdown is computed per flow, so the FCT is passed scaled and the ideal as 1."""
    fct = metrics.bucket_stats([(f.size, f.fct_s, f.censored) for f in flows], lambda _s: 1.0)
    slow = metrics.bucket_stats(
        [(f.size, None if f.fct_s is None else f.fct_s / ideal(f.pair, f.size), f.censored)
         for f in flows], lambda _s: 1.0)
    return {b: metrics.BucketStats(st.started, st.completed, st.fct_mean, st.fct_p99,
                                   slow[b].fct_mean, slow[b].fct_p99) for b, st in fct.items()}


def reorder_metrics(stats: Iterable[reorder.ReorderStats]) -> dict[str, float]:
    pooled = reorder.merge_reorder_stats(stats)
    return {"ooo_packets": float(pooled.reordered), "reorder_ratio": pooled.ratio,
            "reorder_degree": pooled.degree}


def pair_metrics(flows: Sequence[FlowRecord], received: Mapping[Pair, float],
                 reorder: Mapping[Pair, Sequence[reorder.ReorderStats]], seconds: float,
                 ideal: Ideal) -> dict[Pair, dict[str, float]]:
    """Per pair with flows, bytes or captured packets: goodput over `seconds`, the FCT
    figures and the reordering."""
    pairs = sorted({f.pair for f in flows} | set(received) | set(reorder))
    out = {}
    for pair in pairs:
        m = {"goodput_mbps": metrics.goodput_mbps(max(0.0, received.get(pair, 0.0)), seconds)}
        m.update(fct_metrics([f for f in flows if f.pair == pair], ideal))
        if reorder.get(pair):
            m.update(reorder_metrics(reorder[pair]))
        out[pair] = m
    return out


def ideal_fct(fabric: Fabric) -> Ideal:
    """A flow's ideal FCT: alone on the best of its pair's paths of the intact fabric
    (bottleneck rate, round trip = the links' delays both ways; `metrics.best_ideal_fct_s`)."""
    table = fpaths.route(fabric).baseline
    baselines: dict[Pair, list[tuple[float | None, float]]] = {}
    for pair, by_id in table.items():
        out = []
        for path in by_id.values():
            back = sum(fabric.link_by_name[name].params(dst, 0.0).delay_ms
                       for dst, name in zip(path.switches[1:], path.links, strict=True))
            out.append((fpaths.bottleneck_mbps(fabric, path),
                        fpaths.path_delay_ms(fabric, path) + back))
        baselines[pair] = out
    return lambda pair, size: metrics.best_ideal_fct_s(size, baselines.get(pair, []))


def incast_rounds(reports: Mapping[str, dict[str, Any]], plans: Sequence[SenderPlan]
                  ) -> list[float | None]:
    """The query completion time of every round of the incast workloads that started: the
    last of the round's responses, each timed from the round's start (a sender's j-th
    transfer is round j; the generator records arrivals in order), None when a response
    failed or was still running at the end (partition/aggregate: the query waits for all)."""
    senders: dict[int, list[SenderPlan]] = {}
    for plan in plans:
        if plan.kind == "incast":
            senders.setdefault(plan.index, []).append(plan)
    out: list[float | None] = []
    for group in senders.values():
        done = [reports.get(p.name, {}).get("transfers", []) for p in group]
        for j in range(max((len(p.flows) for p in group), default=0)):
            got = [d[j] if j < len(d) else None for d in done]
            if all(g is None for g in got):
                continue  # the round never started (the run ended first)
            times = [None if g is None else g.get("fct_s") for g in got]
            out.append(None if None in times else max(float(t) for t in times if t is not None))
    return out


def incast_metrics(rounds: Sequence[float | None]) -> dict[str, float]:
    """incast_qct_mean_s, incast_qct_p99_s over the complete rounds, incast_completed_frac."""
    if not rounds:
        return {}
    done = [r for r in rounds if r is not None]
    m = {"incast_completed_frac": len(done) / len(rounds)}
    if done:
        m["incast_qct_mean_s"] = math.fsum(done) / len(done)
        m["incast_qct_p99_s"] = percentile(done, 99)
    return m


def sender_tcp(reports: Mapping[str, dict[str, Any]], plans: Sequence[SenderPlan]
               ) -> tuple[list[float], int]:
    """The senders' TCP_INFO RTT samples (ms) and retransmissions, as analysis.py sums them."""
    rtt: list[float] = []
    retrans = 0
    for plan in plans:
        report = reports.get(plan.name, {})
        for stream in report.get("streams", []):
            rtt += [x for x in stream.get("rtt_ms", []) if x > 0]
            retrans += stream.get("retrans") or 0
        for tr in report.get("transfers", []):
            if tr.get("rtt_ms"):
                rtt.append(float(tr["rtt_ms"]))
            retrans += tr.get("retrans") or 0
    return rtt, retrans


def pair_label(fabric: Fabric, pair: Pair) -> str:
    return f"{fabric.edge(pair[0]).name}->{fabric.edge(pair[1]).name}"


# ---- a run ------------------------------------------------------------------------------


def _read_captures(captures: Mapping[str, Any]) -> dict[str, list[pcap.PcapPacket]]:
    """The packets of each receiving host's capture (a capture that cannot be read is left
    out, with a warning)."""
    out = {}
    for host, path in captures.items():
        try:
            out[host], _ = pcap.read_pcap(path)
        except (OSError, pcap.PcapError) as exc:
            log.warning("capture of %s %s: %s", host, path, exc)
    return out


def _reordering(captures: Mapping[str, Sequence[pcap.PcapPacket]], edges: Mapping[str, int]
                ) -> dict[Pair, list[reorder.ReorderStats]]:
    out: dict[Pair, list[reorder.ReorderStats]] = {}
    for packets in captures.values():
        for flow, stats in pcap.pcap_reordering(
                p for p in packets if p.src in edges and p.dst in edges).items():
            out.setdefault((edges[flow.src], edges[flow.dst]), []).append(stats)
    return out


def analyse(raw: Any) -> RunResult:
    """The `RunResult` of a fabric run (`raw`: runner.RunRaw of a fabric scenario)."""
    sc = raw.scenario
    fabric = sc.fabric
    w0, w1 = min(sc.warmup_s, sc.duration_s / 2), sc.duration_s
    hosts = plan_hosts(fabric)
    edges = host_edges(hosts)
    plans = make_plans(sc.fabric_workload, fabric, sc.duration_s, raw.seed, hosts)
    sinks = {f"sink{i}_{h.name}": h.edge for i, h in receivers(plans, hosts)}
    flows = flow_records(raw.reports, plans, edges)
    received = pair_bytes(raw.reports, sinks, edges, raw.t0, w0, w1)
    packets = _read_captures(raw.captures)
    reorder = _reordering(packets, edges)
    ideal = ideal_fct(fabric)
    per_pair = pair_metrics(flows, received, reorder, w1 - w0, ideal)
    warnings = []
    for pair, why in silent_pairs(window_pairs(plans, edges, w0, w1), received,
                                  raw.reports).items():
        per_pair.setdefault(pair, {"goodput_mbps": 0.0})
        warnings.append(f"pair {pair_label(fabric, pair)} carried nothing: its sinks counted "
                        f"no byte from its sources in the measured window ({w0:g}-{w1:g} s); "
                        f"{why}")
        log.warning("%s: %s", sc.name, warnings[-1])
    m = {"goodput_mbps": metrics.goodput_mbps(max(0.0, math.fsum(received.values())), w1 - w0)}
    capacity = math.fsum(edge_capacity_mbps(fabric).values())
    m["goodput_frac"] = metrics.goodput_fraction(m["goodput_mbps"], capacity) if capacity else NAN
    m.update(fct_metrics(flows, ideal))
    if reorder:
        m.update(reorder_metrics(s for stats in reorder.values() for s in stats))
    m.update(incast_metrics(incast_rounds(raw.reports, plans)))
    run = fabric_mptcp.RunData(raw.reports, packets, raw.link_bytes, raw.t0, BASE_PORT)
    conns = fabric_mptcp.connection_metrics(plans, run, fabric, w0, w1)
    m.update(fabric_mptcp.run_metrics(conns))
    for pair, figures in fabric_mptcp.pair_metrics(conns).items():
        per_pair.setdefault(pair, {}).update(figures)
    rtt, retrans = sender_tcp(raw.reports, plans)
    if rtt:
        m["rtt_p50_ms"] = percentile(rtt, 50)
        m["rtt_p99_ms"] = percentile(rtt, 99)
    m["retrans"] = float(retrans)
    loads = [w.load_pct for w in sc.fabric_workload if w.kind == "poisson"]
    if loads:
        m["offered_load_pct"] = math.fsum(loads)
    load = cpu_load(raw, w0, w1)
    m.update(load.pop("metrics"))
    return RunResult(
        scenario=sc.name, policy=raw.policy, run=raw.run, seed=raw.seed,
        duration_s=sc.duration_s, metrics=m,
        fct=[(f.size, f.fct_s) for f in flows if f.fct_s is not None and not f.censored],
        rtt_ms=rtt,
        pairs={pair_label(fabric, p): v for p, v in sorted(per_pair.items())},
        warnings=warnings, **load,
    )


# ---- the report's table -----------------------------------------------------------------

PAIR_COLUMNS = (
    ("goodput_mbps", "goodput Mbit/s"), ("completed_frac", "completed"),
    *((f"fct_{b}_{k}_s", f"{b} {k} s") for b, _, _ in metrics.FCT_BUCKETS for k in ("mean", "p99")),
    ("reorder_ratio", "reorder ratio"),
)


def pair_table(results: Sequence[RunResult]) -> str:
    """Markdown: per (scenario, pair, policy) of fabric runs, each column of `PAIR_COLUMNS`
    as mean ± 95 % CI over the runs (an en dash without values); "" without pairs."""
    groups: dict[tuple[str, str, str], list[RunResult]] = {}
    for r in results:
        for pair in r.pairs:
            groups.setdefault((r.scenario, pair, r.policy), []).append(r)
    if not groups:
        return ""
    header = ["scenario", "pair", "policy", "runs", *(title for _, title in PAIR_COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for (scenario, pair, policy), runs in sorted(groups.items()):
        cells = [scenario, pair, policy, str(len(runs))]
        for key, _ in PAIR_COLUMNS:
            vals = [v for r in runs if math.isfinite(v := r.pairs[pair].get(key, NAN))]
            cells.append(format_mean_ci(*mean_ci95(vals)) if vals else "\u2013")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
