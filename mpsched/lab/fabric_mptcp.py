"""MPTCP bulk transfers on a fabric: each connection's goodput against the capacity its paths
can give it (docs/mptcp.md, "Fabric benchmark").

A connection here is one MPTCP bulk plan (`fabric_workload.SenderPlan` with `mptcp`: its
`streams` connections from one host to one host; the scenarios run one). Over the run's
measured window [w0, w1] (s after the workloads' start):

- **goodput**: the bytes its sink (``sink<i>_<dst host>``) received from its source
  address in the window, over the window (Mbit/s, RFC 2647 goodput);
- **paths' capacity**: the mean over the window of the summed bottleneck rates of the
  pair's paths alive at t (`paths.reroute` under the links the schedules have down at t;
  configured rates, `paths.bottleneck_mbps`), on a grid of `STEP_S`;
- **what other traffic takes**: the bytes every other transfer delivered in the window from
  the connection's source edge (to any edge) and to its destination edge (from any edge),
  each over the window; the larger of the two is subtracted. In a leaf-spine every path of
  the pair leaves by one of the source leaf's uplinks and arrives by one of the destination
  leaf's downlinks, so the pair can carry at most min(uplinks - out, downlinks - in) with the
  others placed anywhere: the subtraction leaves the most the fabric could give the
  connection (its max-flow with the others' load taken out), the strictest reference;
- **capacity** = paths' capacity - other traffic (at least 0), and
  **mptcp_goodput_frac** = goodput / capacity.

Capacity is in link rates, goodput in application bytes, so headers (Ethernet, the 24-byte
path tag, IP, TCP and MPTCP's DSS option: about 7 % of a 1500-byte frame) cap the fraction
near 0.93. `connection_metrics` is pure (synthetic reports in tests); `fabric_analysis`
calls it for a run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mpsched.fabric import paths as fpaths
from mpsched.fabric.model import Fabric
from mpsched.lab import metrics
from mpsched.lab.analysis import _interp
from mpsched.lab.fabric_workload import SenderPlan

NAN = float("nan")
STEP_S = 0.1  # the grid of the paths' capacity over time
Pair = tuple[int, int]


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
    return _interp(series, w1) - _interp(series, w0)


def capacity_left_mbps(paths_mbps: float, other_out_mbps: float,
                       other_in_mbps: float) -> float:
    """The paths' capacity less the larger of what other traffic takes at the source edge's
    and at the destination edge's links (module docstring), at least 0."""
    return max(0.0, paths_mbps - max(other_out_mbps, other_in_mbps))


@dataclass(frozen=True)
class ConnectionFigures:
    pair: Pair
    goodput_mbps: float
    paths_mbps: float
    other_mbps: float
    capacity_mbps: float

    @property
    def frac(self) -> float:
        return self.goodput_mbps / self.capacity_mbps if self.capacity_mbps > 0 else NAN


def connection_metrics(plans: Sequence[SenderPlan], reports: Mapping[str, dict[str, Any]],
                       received: Mapping[Pair, float], fabric: Fabric, t0: float, w0: float,
                       w1: float) -> list[ConnectionFigures]:
    """The figures of every MPTCP bulk plan (`received`: bytes per pair in the window from
    every sink, `fabric_analysis.pair_bytes`; `t0` the reports' time of the run's start,
    when the link schedules start too; [w0, w1] the window in s after it)."""
    out = []
    seconds = w1 - w0
    for plan in plans:
        if plan.kind != "bulk" or not plan.mptcp or plan.dst is None:
            continue
        pair = (plan.host.edge, plan.dst.edge)
        sink = reports.get(f"sink{plan.index}_{plan.dst.name}", {})
        own = max(0.0, peer_bytes(sink, plan.host.address, t0, w0, w1))
        sent = math.fsum(b for (a, _), b in received.items() if a == pair[0]) - own
        got = math.fsum(b for (_, d), b in received.items() if d == pair[1]) - own
        other = metrics.goodput_mbps(max(0.0, sent, got), seconds)
        paths = paths_capacity_mbps(fabric, pair, w0, w1)
        out.append(ConnectionFigures(pair, metrics.goodput_mbps(own, seconds), paths, other,
                                     capacity_left_mbps(paths, other, other)))
    return out


def run_metrics(figures: Sequence[ConnectionFigures]) -> dict[str, float]:
    """The run's figures: goodput and capacity summed over the connections, the fraction
    the mean of theirs (each connection against its own paths); {} without connections."""
    if not figures:
        return {}
    fracs = [f.frac for f in figures if math.isfinite(f.frac)]
    return {
        "mptcp_goodput_mbps": math.fsum(f.goodput_mbps for f in figures),
        "mptcp_capacity_mbps": math.fsum(f.capacity_mbps for f in figures),
        "mptcp_goodput_frac": math.fsum(fracs) / len(fracs) if fracs else NAN,
    }


def pair_metrics(figures: Sequence[ConnectionFigures]) -> dict[Pair, dict[str, float]]:
    """Per pair with an MPTCP connection: its goodput, paths' capacity, others' load,
    capacity and fraction (`RunResult.pairs`)."""
    return {f.pair: {"mptcp_goodput_mbps": f.goodput_mbps, "mptcp_paths_mbps": f.paths_mbps,
                     "mptcp_other_mbps": f.other_mbps, "mptcp_capacity_mbps": f.capacity_mbps,
                     "mptcp_goodput_frac": f.frac} for f in figures}
