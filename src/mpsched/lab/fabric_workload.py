"""A fabric's flow schedule: scenario + hosts + seed -> what every source host sends, when.

Pure and seeded (docs/fabric-lab.md, "Workloads"): the same scenario, hosts and seed give the same
schedule, so runs under different policies see the same flows. Per source host and workload
one `SenderPlan`: the arrivals (time after the workload's start, destination address, size)
of a `poisson` or `incast` workload, run by one traffic-generator process (`plan` role of
src/mpsched/traffic/gen/) that connects to each flow's destination; or one long-lived `bulk`
transfer.

**Load** (`poisson`'s `load_pct`): relative to the capacity of the edges' links towards the
rest of the network, `edge_capacity_mbps`: per edge the summed configured rate at t = 0 of
the links at the edge, in the direction leaving it (a link down at t = 0 or without a rate
adds nothing). In a leaf-spine those are the leaves' uplinks, and load L means the edges
together offer L % of their uplinks' summed rate: the definition of CONGA (Alizadeh et al.,
SIGCOMM 2014) and HULA (Katta et al., SOSR 2016). Why: the uplinks are where a load balancer
decides, and traffic between two edges crosses one uplink on either side, so L < 100 % is a
load the fabric can carry when paths are used well; in a graph the edges' links to the
rest of the network play that part (a transit link inside may still be the bottleneck).
All-to-all gives each edge L % of its own capacity (an edge with slower links offers less, as
a leaf's hosts would) and keeps what each edge receives within L % of the capacity of its
links towards it (`edge_capacity_in_mbps`): a destination is drawn in proportion to its
hosts, rebalanced by iterative proportional fitting (`balance`) where that proportion would
send an edge more than L % of what its links can bring in. Without it an edge with a slow link
would receive from every other edge as much as a fast one, beyond its capacity at loads well
under 100 % (a leaf with uplinks of 2.5 and 0.625 Mbit/s among leaves of 5 gets 112 % of its
3.125 at 70 %), and every policy's short flows to it would queue behind an overload no choice
of path can relieve. A matrix gives L % of the summed capacity, split over its pairs by
weight (a matrix that concentrates traffic may load one edge's links beyond L %).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mpsched import addressing as ap
from mpsched.fabric.model import Fabric
from mpsched.fabric.netdesc import host_name
from mpsched.lab.scenario_fabric import FabricWorkload, edge_id, hosts_of
from mpsched.traffic import flowsizes

Pair = tuple[int, int]  # (source edge id, destination edge id)


@dataclass(frozen=True)
class FabricHost:
    """Host `k` behind edge `edge`: its testbed name and address."""

    name: str
    edge: int
    k: int
    address: str


Hosts = Mapping[int, Sequence[FabricHost]]  # edge id -> its hosts, by k


@dataclass(frozen=True)
class Flow:
    """One flow of a plan: `at` s after the workload's start, to `dst` (address), `size` B."""

    at: float
    dst: str
    size: int


@dataclass(frozen=True)
class SenderPlan:
    """What one source host sends for workload `index`: `flows` (poisson, incast) or, for
    bulk, `streams` long-lived streams to `dst` (entry `pair` of the workload's pairs)."""

    index: int
    kind: str
    host: FabricHost
    start_s: float
    seconds: float
    flows: tuple[Flow, ...] = ()
    dst: FabricHost | None = None
    streams: int = 0
    pair: int = 0
    mptcp: bool = False  # bulk: kernel-MPTCP connections

    @property
    def name(self) -> str:
        """The process's log and report name (``send<i>_<host>``, bulk ``send<i>_<j>_<host>``)."""
        if self.kind == "bulk":
            return f"send{self.index}_{self.pair}_{self.host.name}"
        return f"send{self.index}_{self.host.name}"

    def destinations(self) -> set[str]:
        """The addresses this plan sends to."""
        return {self.dst.address} if self.dst else {f.dst for f in self.flows}


def plan_hosts(fabric: Fabric) -> dict[int, tuple[FabricHost, ...]]:
    """The hosts of the addressing plan (src/mpsched/addressing.py, src/mpsched/fabric/netdesc.py):
    host k behind edge e is ``h<e>_<k>`` at ``10.0.e.k``."""
    return {
        sw.edge_id: tuple(FabricHost(host_name(sw.edge_id, k), sw.edge_id, k,
                                     ap.host_ip(sw.edge_id, k)) for k in range(1, sw.hosts + 1))
        for sw in fabric.edges
    }


def edge_capacity_mbps(fabric: Fabric, t: float = 0.0) -> dict[int, float]:
    """Per edge id: the summed rate (Mbit/s) of its links leaving it at `t` (module doc)."""
    out = {}
    for sw in fabric.edges:
        total = 0.0
        for link in fabric.links_of(sw.name):
            p = link.params(sw.name, t)
            total += p.rate_mbps if p.up and p.rate_mbps is not None else 0.0
        out[sw.edge_id] = total
    return out


def edge_capacity_in_mbps(fabric: Fabric, t: float = 0.0) -> dict[int, float]:
    """Per edge id: the summed rate (Mbit/s) of its links towards it at `t`."""
    out = {}
    for sw in fabric.edges:
        total = 0.0
        for link in fabric.links_of(sw.name):
            p = link.params(link.other(sw.name), t)
            total += p.rate_mbps if p.up and p.rate_mbps is not None else 0.0
        out[sw.edge_id] = total
    return out


def _sums(rates: Mapping[Pair, float], side: int) -> dict[int, float]:
    sums: dict[int, float] = {}
    for pair, r in rates.items():
        sums[pair[side]] = sums.get(pair[side], 0.0) + r
    return sums


def _meets(sums: Mapping[int, float], want: Mapping[int, float], tol: float) -> bool:
    return all(abs(sums.get(e, 0.0) - x) <= tol * max(x, 1e-12) for e, x in want.items())


def balance(prior: Mapping[Pair, float], send: Mapping[int, float],
            receive: Mapping[int, float], rounds: int = 500,
            tol: float = 1e-9) -> dict[Pair, float]:
    """Rates per ordered pair, shaped like `prior`, whose sum per source is `send[a]` and per
    destination `receive[b]` scaled to the same total: iterative proportional fitting
    (Deming and Stephan, 1940), alternately scaling rows and columns; it keeps the prior's
    cross-ratios, so a prior that already meets both is returned as it is. Pure. Where no
    such rates exist (two edges of different capacities) the last scaling is of the rows:
    every source still sends what it should."""
    rates = {pair: r for pair, r in prior.items() if r > 0}
    send = {e: x for e, x in send.items() if e in _sums(rates, 0)}
    dests = _sums(rates, 1)
    total_in = math.fsum(receive.get(e, 0.0) for e in dests)
    if not rates or total_in <= 0:
        return dict(prior)
    total = math.fsum(send.values())
    want_in = {e: receive.get(e, 0.0) * total / total_in for e in dests}
    if _meets(_sums(rates, 0), send, tol) and _meets(dests, want_in, tol):
        return dict(prior)
    for _ in range(rounds):
        cols = _sums(rates, 1)
        rates = {p: r * want_in[p[1]] / cols[p[1]] for p, r in rates.items()}
        rows = _sums(rates, 0)
        rates = {p: r * send[p[0]] / rows[p[0]] for p, r in rates.items()}
        if _meets(_sums(rates, 1), want_in, tol):
            break
    return {pair: rates.get(pair, 0.0) for pair in prior}


def pair_rates_mbps(w: FabricWorkload, fabric: Fabric, hosts: Hosts) -> dict[Pair, float]:
    """The application rate `w` (poisson) offers per ordered pair of edges (module doc)."""
    capacity = edge_capacity_mbps(fabric)
    load = w.load_pct / 100
    if w.matrix:
        total = load * math.fsum(capacity.values())
        weights = {(edge_id(fabric, m.src), edge_id(fabric, m.dst)): m.weight for m in w.matrix}
        scale = total / math.fsum(weights.values())
        return {(a, b): x * scale for (a, b), x in weights.items() if a and b}
    rates = {}
    for a in hosts:
        others = {b: len(hs) for b, hs in hosts.items() if b != a and hs}
        receivers = sum(others.values())
        for b, n in others.items():  # a destination host uniform over the other edges' hosts
            rates[(a, b)] = load * capacity.get(a, 0.0) * n / receivers
    send = {a: load * capacity.get(a, 0.0) for a in hosts}
    return balance(rates, send, edge_capacity_in_mbps(fabric))


def _rng(seed: int, index: int, host: FabricHost, what: str) -> random.Random:
    """The generator of one host's draws (`what`: "arrivals", "dst") of workload `index`."""
    return random.Random(f"{seed}/{index}/{host.name}/{what}")


def poisson_plans(index: int, w: FabricWorkload, fabric: Fabric, hosts: Hosts, seed: int,
                  span_s: float) -> list[SenderPlan]:
    """One plan per source host: Poisson arrivals at the host's share of its pairs' rates
    (an edge's rate shared equally by its hosts) until `drain_s` before the end; each flow's
    destination edge drawn in proportion to the pairs' rates, its host uniformly."""
    dist = flowsizes.distribution(w.sizes, w.max_kb * 1000, w.scale)
    rates = pair_rates_mbps(w, fabric, hosts)
    plans = []
    for a, sources in hosts.items():
        mine = sorted((b, r) for (s, b), r in rates.items() if s == a and r > 0 and hosts[b])
        if not mine or not sources:
            continue
        per_host = math.fsum(r for _, r in mine) / len(sources)
        for host in sources:
            arrivals = flowsizes.poisson_plan(_rng(seed, index, host, "arrivals"), dist,
                                              per_host, span_s - w.drain_s)
            pick = _rng(seed, index, host, "dst")
            edges, weights = [b for b, _ in mine], [r for _, r in mine]
            flows = []
            for at, size in arrivals:
                b = pick.choices(edges, weights)[0]
                flows.append(Flow(at, pick.choice(hosts[b]).address, size))
            plans.append(SenderPlan(index, w.kind, host, w.start_s, span_s, tuple(flows)))
    return plans


def _named(fabric: Fabric, hosts: Hosts, name: str, every: bool) -> list[FabricHost]:
    return [hosts[e][k - 1] for e, k in hosts_of(fabric, name, every)]


def incast_plans(index: int, w: FabricWorkload, fabric: Fabric, hosts: Hosts,
                 span_s: float) -> list[SenderPlan]:
    """Every sender starts a `size_kb` flow to the receiver at each round, 0, period, 2
    period, ... before `drain_s` from the end."""
    (receiver,) = _named(fabric, hosts, w.receiver, every=False)
    if w.senders:
        senders = [h for name in w.senders for h in _named(fabric, hosts, name, every=True)]
    else:
        senders = [h for e, hs in sorted(hosts.items()) if e != receiver.edge for h in hs]
    rounds = math.ceil((span_s - w.drain_s) / (w.period_ms / 1000))
    times = [r * w.period_ms / 1000 for r in range(max(0, rounds))]
    size = w.size_kb * 1000
    unique = list(dict.fromkeys(senders))  # a host named twice sends once per round
    return [
        SenderPlan(index, w.kind, h, w.start_s, span_s,
                   tuple(Flow(t, receiver.address, size) for t in times))
        for h in unique
    ]


def bulk_plans(index: int, w: FabricWorkload, fabric: Fabric, hosts: Hosts,
               span_s: float) -> list[SenderPlan]:
    """One long-lived transfer of `streams` streams per entry of `pairs`."""
    plans = []
    for j, pair in enumerate(w.pairs):
        (src,) = _named(fabric, hosts, pair.src, every=False)
        (dst,) = _named(fabric, hosts, pair.dst, every=False)
        plans.append(SenderPlan(index, w.kind, src, w.start_s, span_s, dst=dst,
                                streams=w.streams, pair=j, mptcp=w.mptcp))
    return plans


def sender_plans(workloads: Sequence[FabricWorkload], fabric: Fabric, duration_s: float,
                 seed: int, hosts: Hosts | None = None) -> list[SenderPlan]:
    """The plans of every workload, in workload order then by host; `hosts` default to the
    addressing plan's (`plan_hosts`)."""
    hosts = hosts if hosts is not None else plan_hosts(fabric)
    plans: list[SenderPlan] = []
    for i, w in enumerate(workloads):
        span = max(0.5, w.span_s(duration_s))
        if w.kind == "poisson":
            plans += poisson_plans(i, w, fabric, hosts, seed, span)
        elif w.kind == "incast":
            plans += incast_plans(i, w, fabric, hosts, span)
        else:
            plans += bulk_plans(i, w, fabric, hosts, span)
    return plans


def mptcp_subflows(workloads: Sequence[FabricWorkload]) -> int:
    """The most subflows any MPTCP workload's connections have (0: none is MPTCP): how many
    addresses the testbed gives every host."""
    return max((w.subflows for w in workloads if w.mptcp), default=0)


def mptcp_initiators(workloads: Sequence[FabricWorkload], fabric: Fabric) -> list[str]:
    """The hosts that open MPTCP connections (the sources of MPTCP bulk pairs), by name: only
    they get subflow endpoints, or a listener would open subflows back towards them."""
    names = [host_name(e, k) for w in workloads if w.mptcp for pair in w.pairs
             for e, k in hosts_of(fabric, pair.src, every=False)]
    return list(dict.fromkeys(names))


def receivers(plans: Sequence[SenderPlan], hosts: Hosts) -> list[tuple[int, FabricHost]]:
    """(workload index, host) for every host some plan sends to: where sinks listen."""
    by_address = {h.address: h for hs in hosts.values() for h in hs}
    wanted = sorted({(p.index, a) for p in plans for a in p.destinations()})
    return [(i, by_address[a]) for i, a in wanted]


def host_edges(hosts: Hosts) -> dict[str, int]:
    """Address -> edge id of every host (the analysis's map from a flow to its pair)."""
    return {h.address: e for e, hs in hosts.items() for h in hs}
