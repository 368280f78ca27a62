"""MPTCP bulk transfers on a fabric: each connection's goodput against the capacity its paths
can give it (docs/mptcp.md, "Fabrics").

A connection here is one MPTCP bulk plan (`fabric_workload.SenderPlan` with `mptcp`: its
`streams` connections from one host to one host; the scenarios run one). Everything is counted
on the wire, in frames as the fabric's links carry them (Ethernet + path tag + IP packet), over
the run's measured window [w0, w1] (s after the run's start, when the link schedules start):

- **the connection's frames**: its packets in the receiving host's capture (every subflow: from
  any address of the source host to the bulk sink's port), each its IP length plus the
  Ethernet header and the path tag;
- **paths' capacity**: the mean over the window of the summed bottleneck rates of the pair's
  paths alive at t (`paths.reroute` under the links the schedules have down at t; configured
  rates, `paths.bottleneck_mbps`), on a grid of `STEP_S`;
- **what other traffic takes**: the bytes the source edge's links delivered away from it, and
  those the destination edge's links delivered towards it (the emulators' counters,
  `RunRaw.link_bytes`), each less the connection's frames: short flows, their
  acknowledgements, other transfers, probes and feedback. The larger of the two is
  subtracted: in a leaf-spine every path of the pair leaves by one of the source leaf's
  uplinks and arrives by one of the destination leaf's downlinks, so the pair can carry at
  most the paths' capacity less that, with the others as they were;
- **capacity** = paths' capacity - other traffic (at least 0), and
  **mptcp_goodput_frac** = the connection's frames / capacity: its goodput over the capacity
  left, the capacity counted at the connection's own ratio of goodput to frame bytes (so a
  connection that got every byte the others left scores 1, whatever its headers cost).

`mptcp_goodput_of_paths` is plainer and stricter: the goodput (its sink's bytes from the
source address) over the paths' capacity, nothing subtracted. The functions are pure
(synthetic reports in tests); `fabric_analysis` calls `connection_metrics` for a run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mpsched import addressing as ap
from mpsched.fabric import paths as fpaths
from mpsched.fabric.model import Fabric
from mpsched.lab import metrics
from mpsched.lab.fabric_workload import SenderPlan
from mpsched.lab.pcap import PcapPacket
from mpsched.lab.run_window import interp
from mpsched.p4rt.bmv2json import path_tag
from mpsched.stats import mean

NAN = float("nan")
STEP_S = 0.1  # the grid of the paths' capacity over time
ETH_HEADER_LEN = 14  # Ethernet II: the emulators count whole frames (csrc/linkem.c)
Pair = tuple[int, int]
LinkBytes = Sequence[tuple[float, Mapping[str, int]]]  # RunRaw.link_bytes: (time, {link:dir})


def paths_capacity_mbps(fabric: Fabric, pair: Pair, t0: float, t1: float,
                        step_s: float = STEP_S) -> float:
    """The mean over [t0, t1] (scenario time) of the summed bottleneck rates of `pair`'s
    paths alive at t (NaN if a path has no rate: nothing to refer to)."""
    routing = fpaths.route(fabric)
    cache: dict[fpaths.Failures, float] = {}
    n = max(1, math.ceil((t1 - t0) / step_s))
    total = 0.0
    for i in range(n):
        t = t0 + (i + 0.5) * (t1 - t0) / n
        failures = fpaths.Failures.at(fabric, t)
        if failures not in cache:
            now = fpaths.reroute(fabric, routing, failures).current.get(pair, {})
            rates = [fpaths.bottleneck_mbps(fabric, p, t) for p in now.values()]
            cache[failures] = NAN if None in rates else math.fsum(r or 0.0 for r in rates)
        total += cache[failures]
    return total / n


def peer_bytes(report: Mapping[str, Any], address: str, t0: float, w0: float,
               w1: float) -> float:
    """The bytes a sink's report (`peers` samples) got from `address` in [w0, w1]."""
    series = [(float(t) - t0, float(b)) for t, b in report.get("peers", {}).get(address, [])]
    return interp(series, w1) - interp(series, w0)


def frame_bytes(packets: Iterable[PcapPacket], sources: Iterable[str], dst: str, port: int,
                t0: float, w0: float, w1: float) -> float:
    """Bytes of the frames of a connection's packets in a capture (`packets`): from any of
    `sources` to `dst`:`port`, captured in [t0 + w0, t0 + w1], each IP length + Ethernet
    header + path tag (what a fabric link carries; the tag's size the compiled program's)."""
    srcs = set(sources)
    tag_len = path_tag().size
    return float(sum(p.ip_len + ETH_HEADER_LEN + tag_len for p in packets
                     if p.dst == dst and p.dport == port and p.src in srcs
                     and t0 + w0 <= p.ts <= t0 + w1))


def edge_link_bytes(link_bytes: LinkBytes, fabric: Fabric, edge: str, leaving: bool,
                    t0: float, w0: float, w1: float) -> float:
    """Bytes the links of edge switch `edge` delivered in [w0, w1] away from it (`leaving`)
    or towards it: the growth of their counters (`RunRaw.link_bytes`, by "<link>:ab|ba",
    ab = a -> b)."""
    total = 0.0
    for link in fabric.links_of(edge):
        away = "ab" if link.a == edge else "ba"
        key = f"{link.name}:{away if leaving else ('ba' if away == 'ab' else 'ab')}"
        series = [(t - t0, float(c[key])) for t, c in link_bytes if key in c]
        total += interp(series, w1) - interp(series, w0)
    return total


def capacity_left_mbps(paths_mbps: float, other_out_mbps: float,
                       other_in_mbps: float) -> float:
    """The paths' capacity less the larger of what other traffic takes at the source edge's
    and at the destination edge's links (module docstring), at least 0."""
    return max(0.0, paths_mbps - max(other_out_mbps, other_in_mbps))


@dataclass(frozen=True)
class ConnectionFigures:
    pair: Pair
    goodput_mbps: float  # the sink's bytes from the source address
    frames_mbps: float  # the connection's frames on the wire
    paths_mbps: float
    other_mbps: float
    capacity_mbps: float

    @property
    def frac(self) -> float:
        return self.frames_mbps / self.capacity_mbps if self.capacity_mbps > 0 else NAN

    @property
    def of_paths(self) -> float:
        return self.goodput_mbps / self.paths_mbps if self.paths_mbps > 0 else NAN


@dataclass(frozen=True)
class RunData:
    """What `connection_metrics` reads of a run: reports by process name, the receiving
    hosts' captures (host name -> packets), the links' counters, the run's start (wall
    clock) and the bulk sinks' base port."""

    reports: Mapping[str, Mapping[str, Any]]
    captures: Mapping[str, Sequence[PcapPacket]]
    link_bytes: LinkBytes
    t0: float
    base_port: int


def connection_metrics(plans: Sequence[SenderPlan], run: RunData, fabric: Fabric, w0: float,
                       w1: float) -> list[ConnectionFigures]:
    """The figures of every MPTCP bulk plan over the window [w0, w1] (s after `run.t0`)."""
    out = []
    seconds = w1 - w0
    for plan in plans:
        if plan.kind != "bulk" or not plan.mptcp or plan.dst is None:
            continue
        src, dst = plan.host, plan.dst
        pair = (src.edge, dst.edge)
        sink = run.reports.get(f"sink{plan.index}_{dst.name}", {})
        goodput = max(0.0, peer_bytes(sink, src.address, run.t0, w0, w1))
        sources = [ap.fabric_host_ip(src.edge, src.k, n)
                   for n in range(1, ap.FABRIC_HOST_ADDRESSES + 1)]
        frames = frame_bytes(run.captures.get(dst.name, ()), sources, dst.address,
                             run.base_port + plan.index, run.t0, w0, w1)
        out_bytes = edge_link_bytes(run.link_bytes, fabric, fabric.edge(src.edge).name, True,
                                    run.t0, w0, w1)
        in_bytes = edge_link_bytes(run.link_bytes, fabric, fabric.edge(dst.edge).name, False,
                                   run.t0, w0, w1)
        other_out = metrics.goodput_mbps(max(0.0, out_bytes - frames), seconds)
        other_in = metrics.goodput_mbps(max(0.0, in_bytes - frames), seconds)
        paths = paths_capacity_mbps(fabric, pair, w0, w1)
        out.append(ConnectionFigures(
            pair, metrics.goodput_mbps(goodput, seconds), metrics.goodput_mbps(frames, seconds),
            paths, max(other_out, other_in), capacity_left_mbps(paths, other_out, other_in)))
    return out


def run_metrics(figures: Sequence[ConnectionFigures]) -> dict[str, float]:
    """The run's figures: goodput and capacity summed over the connections, the fractions
    the means of theirs (each connection against its own paths); {} without connections."""
    if not figures:
        return {}
    fracs = [f.frac for f in figures if math.isfinite(f.frac)]
    plain = [f.of_paths for f in figures if math.isfinite(f.of_paths)]
    return {
        "mptcp_goodput_mbps": math.fsum(f.goodput_mbps for f in figures),
        "mptcp_capacity_mbps": math.fsum(f.capacity_mbps for f in figures),
        "mptcp_goodput_frac": mean(fracs),
        "mptcp_goodput_of_paths": mean(plain),
    }


def pair_metrics(figures: Sequence[ConnectionFigures]) -> dict[Pair, dict[str, float]]:
    """Per pair with an MPTCP connection: its goodput, frames, paths' capacity, others'
    load, capacity and fractions (`RunResult.pairs`)."""
    return {f.pair: {"mptcp_goodput_mbps": f.goodput_mbps, "mptcp_frames_mbps": f.frames_mbps,
                     "mptcp_paths_mbps": f.paths_mbps, "mptcp_other_mbps": f.other_mbps,
                     "mptcp_capacity_mbps": f.capacity_mbps, "mptcp_goodput_frac": f.frac,
                     "mptcp_goodput_of_paths": f.of_paths} for f in figures}
