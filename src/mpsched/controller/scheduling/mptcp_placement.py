"""Where an MPTCP connection's subflows go: one path each, least live cost first (pure).

Each subflow of a connection goes to its own path, least live cost first (the cost a
mode-CA switch computes, as `policies.ca.live_cost` estimates it; `core.py` gives the usable
paths of the subflow's class, alive, admin-up and weighted, with their costs). With more
subflows than paths they spread evenly (at most ceil(n / k) per path). A pin sticks while its
path stays usable and not over that share; a subflow whose path left (LM3 deactivated it,
liveness killed it, the operator took it down) is re-pinned at once to the cheapest path
among those with the fewest of its connection's subflows. Re-placement: a pinned subflow
also moves, by itself, to a cheaper path holding fewer of its connection's subflows (a path
that returned, or one a closing connection freed) when that path's expected cost is below
its own path's by the margin (`MptcpParams.replace_margin`, `replace_margin_us`) and its
last move is at least `min_dwell_s` old. The expected cost of a path the connection used
within `cost_memory_s` is at least the cost it had then (so the queue a subflow builds on
its own path does not make every path it left look better).

Distinct paths (MP-HULA, Benet et al., NetCompute 2018: a connection's subflows on distinct
least-cost paths): in a fabric two paths of one pair may share a link, and subflows on them
compete there. "Fewest subflows" therefore counts a path's **occupancy**: the connection's
subflows on it, plus, for every other path q holding some, their number times the overlap
of p with q (`path_overlaps`: 0 for link-disjoint paths, 1 when they share p's bottleneck
link). A subflow also moves off a path, whatever the costs, when another path's occupancy
is lower by `DISTINCT_GAIN` (a clearly more distinct path, e.g. a disjoint one freed up);
docs/mptcp.md ("Placement").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mpsched.controller.model.decision import CaCost
from mpsched.controller.scheduling.mptcp_digest import Flow


@dataclass(frozen=True)
class MptcpParams:
    """The MPTCP-aware mode's parameters (GET/PUT /params, key "mptcp")."""

    steering: bool = field(
        default=True,
        metadata={
            "doc": "pin each MPTCP subflow to its own path; false: subflows follow their "
            "class's placement like any TCP flow (pins are removed)"
        },
    )
    idle_timeout_s: float = field(
        default=120.0,
        metadata={
            "min": 1.0,
            "max": 86400.0,
            "doc": "unpin a subflow whose pinned packet count did not move for this long",
        },
    )
    replace_margin: float = field(
        default=0.25,
        metadata={
            "min": 0.0,
            "max": 1.0,
            "doc": "a pinned subflow moves to a cheaper path only when that path's expected "
            "cost is below its own path's by this fraction of its own path's cost "
            "(and by replace_margin_us)",
        },
    )
    replace_margin_us: float = field(
        default=2000.0,
        metadata={
            "min": 0.0,
            "max": 1e7,
            "doc": "... and by at least this many µs-equivalent of live cost",
        },
    )
    min_dwell_s: float = field(
        default=5.0,
        metadata={
            "min": 0.0,
            "max": 3600.0,
            "doc": "a subflow moves by re-placement at most once per this many seconds "
            "(re-pinning off a path that left is immediate)",
        },
    )
    cost_memory_s: float = field(
        default=120.0,
        metadata={
            "min": 0.0,
            "max": 86400.0,
            "doc": "for this long a path a connection left is expected to cost at least what "
            "it cost while the connection used it",
        },
    )



Overlaps = Mapping[tuple[int, int], float]  # (p, q) -> overlap of path p with path q, 0..1
PathLinks = Sequence[tuple[Hashable, float | None]]  # a path's links: (key, rate in Mbit/s)

DISTINCT_GAIN = 0.5  # occupancy a move must shed to move whatever the costs (hysteresis)
_EPS = 1e-9


def path_overlaps(paths: Mapping[int, PathLinks]) -> dict[tuple[int, int], float]:
    """How much each path of a pair shares with each other one: for paths p != q that share
    links (a link's key names it and the direction crossed), the largest over those links of
    min(1, b_p / rate), b_p being p's bottleneck rate (its slowest link). So a shared link
    as slow as p's bottleneck counts 1 (a subflow there halves what p gives), one twice as
    fast as p's bottleneck 0.5, a link without a rate 0; it is the tightest shared link that
    counts, not how many are shared (a flow is limited by one link, its bottleneck). Pairs
    of link-disjoint paths are left out (overlap 0)."""
    out: dict[tuple[int, int], float] = {}
    for p, links in paths.items():
        rates = [r for _, r in links if r is not None]
        bottleneck = min(rates) if rates else None
        keys = dict(links)
        for q, other in paths.items():
            shared = [keys[k] for k, _ in other if q != p and k in keys]
            weights = [min(1.0, bottleneck / r) for r in shared
                       if r is not None and r > 0 and bottleneck is not None]
            if weights:
                out[(p, q)] = max(weights)
    return out


def occupancy(p: int, counts: Counter, overlaps: Overlaps | None = None) -> float:
    """Path p's occupancy by one connection: its subflows on p, plus those on every other
    path q weighed by the overlap of p with q (`path_overlaps`)."""
    shared = math.fsum(n * (overlaps or {}).get((p, q), 0.0)
                       for q, n in counts.items() if q != p and n)
    return counts[p] + shared


@dataclass
class Subflow:
    flow: Flow  # as the initiator of the subflow sends
    initial: bool  # the MP_CAPABLE subflow (False: joined with MP_JOIN)
    addr_id: int
    since: float
    path_id: int | None = None
    packets: int = 0  # pinned packets, both directions, all switches (direct counters)
    last_active: float = 0.0
    fin_from: set[str] = field(default_factory=set)  # "initiator" / "responder"
    pinned_at: float | None = None  # when it got its current path (None: never pinned)



def expected_costs(
    costs: Mapping[int, float],
    seen: Mapping[int, tuple[float, float]],
    now: float,
    memory_s: float,
) -> dict[int, float]:
    """What each usable path is expected to cost a subflow placed there: its live cost, but
    not less than the cost it had while the connection used it, if that is at most
    `memory_s` old (a subflow's own queue leaves with it, and the path it left would
    otherwise look cheaper than it is)."""
    out = dict(costs)
    for p, (cost, at) in seen.items():
        if p in out and now - at <= memory_s:
            out[p] = max(out[p], cost)
    return out


def choose_path(order: Mapping[int, float], counts: Counter, tie_us: float = 0.0,
                overlaps: Overlaps | None = None) -> int:
    """The path of the least occupancy (`counts`, `overlaps`; without overlaps the fewest
    subflows), the cheapest (`order`: path -> cost) among those; costs within `tie_us` of
    the cheapest count as equal, and the first of them in the mapping's order is taken
    (cost noise on idle paths does not decide)."""
    occ = {p: occupancy(p, counts, overlaps) for p in order}
    fewest = min(occ.values())
    candidates = [p for p in order if occ[p] <= fewest + _EPS]
    best = min(order[p] for p in candidates)
    return next(p for p in candidates if order[p] <= best + tie_us)


def replace_target(
    cur: int,
    costs: Mapping[int, float],
    expected: Mapping[int, float],
    counts: Counter,
    params: MptcpParams,
    overlaps: Overlaps | None = None,
) -> int | None:
    """The path a subflow pinned to `cur` should move to by re-placement, or None. Its
    connection's other subflows (`counts` less this one) give each path an occupancy
    (`occupancy`); the candidates are the paths no more occupied than `cur`. Among those
    clearly more distinct (occupancy lower by `DISTINCT_GAIN`) the least occupied, then
    cheapest, whatever the costs; else the cheapest candidate (expected cost) if it beats
    `cur`'s live cost by max(replace_margin_us, replace_margin * that cost)."""
    rank = {p: i for i, p in enumerate(costs)}
    others = Counter(counts)
    others[cur] -= 1
    occ = {p: occupancy(p, others, overlaps) for p in costs}
    free = [p for p in costs if p != cur and occ[p] <= occ[cur] + _EPS]
    if not free:
        return None
    distinct = [p for p in free if occ[p] <= occ[cur] - DISTINCT_GAIN + _EPS]
    if distinct:
        return min(distinct, key=lambda p: (occ[p], expected[p], rank[p]))
    best = min(free, key=lambda p: (expected[p], rank[p]))
    margin = max(params.replace_margin_us, params.replace_margin * costs[cur])
    return best if expected[best] + margin < costs[cur] else None


def assign(
    subflows: list[Subflow],
    costs: Mapping[int, float],
    now: float = 0.0,
    params: MptcpParams | None = None,
    seen: Mapping[int, tuple[float, float]] | None = None,
    overlaps: Overlaps | None = None,
) -> dict[Flow, int | None]:
    """Pins for one connection's subflows (initial first, then by arrival), given the
    usable paths and their live costs (`costs`; ties go by the mapping's order) and how
    they share links (`overlaps`, `path_overlaps`; none: disjoint):

    1. a pin sticks while its path is usable and within the even share ceil(n / k);
    2. every other subflow goes to the path of the least occupancy (`occupancy`: the
       connection's subflows, those on overlapping paths weighed by the overlap), the
       cheapest first (expected costs, `expected_costs` with `seen`; costs within
       `replace_margin_us` of each other are ties);
    3. re-placement: a subflow kept in 1 whose last move is at least `min_dwell_s` old
       moves to `replace_target` if there is one (subflows on the costliest paths first,
       at most one move each)."""
    params = params or MptcpParams()
    if not costs:
        return {s.flow: s.path_id for s in subflows}
    expected = expected_costs(costs, seen or {}, now, params.cost_memory_s)
    share = math.ceil(len(subflows) / len(costs))
    counts: Counter = Counter()
    out: dict[Flow, int | None] = {}
    kept: list[tuple[Subflow, int]] = []  # (subflow, the path it keeps), in arrival order
    for s in subflows:
        p = s.path_id
        if p is not None and p in costs and counts[p] < share:
            out[s.flow] = p
            counts[p] += 1
            kept.append((s, p))
    for s in subflows:
        if s.flow not in out:
            p = choose_path(expected, counts, params.replace_margin_us, overlaps)
            out[s.flow] = p
            counts[p] += 1
    for s, cur in sorted(kept, key=lambda k: -costs[k[1]]):
        if s.pinned_at is not None and now - s.pinned_at < params.min_dwell_s:
            continue
        target = replace_target(cur, costs, expected, counts, params, overlaps)
        if target is not None:
            out[s.flow] = target
            counts[cur] -= 1
            counts[target] += 1
    return out


def path_order(weights: dict[int, int], alive: Iterable[int]) -> list[int]:
    """Usable paths: alive paths with a weight, by weight (desc) then id; all alive paths
    by id if none has a weight. (The tie-break order of `assign`'s costs.)"""
    alive = set(alive)
    weighted = [p for p, w in weights.items() if w > 0 and p in alive]
    if weighted:
        return sorted(weighted, key=lambda p: (-weights[p], p))
    return sorted(alive)


def pin_cost(ca: CaCost | None) -> CaCost:
    """The cost model that ranks a class's paths for its subflows: the class's own (mode ca),
    or the default CaCost when the class has none or one that weighs nothing (a weight-based
    policy, or mode ca's all-zero no_ca), so that every class ranks by the same live cost."""
    if ca is None or not (ca.qdelay_coef or ca.loss_coef_us or ca.util_coef_us):
        return CaCost()
    return ca

