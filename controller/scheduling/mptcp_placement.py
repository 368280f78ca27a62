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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mpsched.controller.policies.base import CaCost
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


def choose_path(order: Mapping[int, float], counts: Counter, tie_us: float = 0.0) -> int:
    """The path carrying the fewest subflows (`counts`), the cheapest (`order`: path ->
    cost) among those; costs within `tie_us` of the cheapest count as equal, and the first
    of them in the mapping's order is taken (cost noise on idle paths does not decide)."""
    fewest = min(counts[p] for p in order)
    candidates = [p for p in order if counts[p] == fewest]
    best = min(order[p] for p in candidates)
    return next(p for p in candidates if order[p] <= best + tie_us)


def replace_target(
    cur: int,
    costs: Mapping[int, float],
    expected: Mapping[int, float],
    counts: Counter,
    params: MptcpParams,
) -> int | None:
    """The path a subflow pinned to `cur` should move to by re-placement, or None: the
    cheapest (expected cost) path holding fewer of its connection's subflows than `cur`,
    if it beats `cur`'s live cost by max(replace_margin_us, replace_margin * that cost)."""
    rank = {p: i for i, p in enumerate(costs)}
    free = [p for p in costs if p != cur and counts[p] < counts[cur]]
    if not free:
        return None
    best = min(free, key=lambda p: (expected[p], rank[p]))
    margin = max(params.replace_margin_us, params.replace_margin * costs[cur])
    return best if expected[best] + margin < costs[cur] else None


def assign(
    subflows: list[Subflow],
    costs: Mapping[int, float],
    now: float = 0.0,
    params: MptcpParams | None = None,
    seen: Mapping[int, tuple[float, float]] | None = None,
) -> dict[Flow, int | None]:
    """Pins for one connection's subflows (initial first, then by arrival), given the
    usable paths and their live costs (`costs`; ties go by the mapping's order):

    1. a pin sticks while its path is usable and within the even share ceil(n / k);
    2. every other subflow goes to the path with the fewest of the connection's subflows,
       the cheapest first (expected costs, `expected_costs` with `seen`; costs within
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
            p = choose_path(expected, counts, params.replace_margin_us)
            out[s.flow] = p
            counts[p] += 1
    for s, cur in sorted(kept, key=lambda k: -costs[k[1]]):
        if s.pinned_at is not None and now - s.pinned_at < params.min_dwell_s:
            continue
        target = replace_target(cur, costs, expected, counts, params)
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

