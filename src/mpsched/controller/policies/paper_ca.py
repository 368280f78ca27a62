"""Shared pieces of the papers' congestion-aware variants (`llhd-ca`, `cmtla-ca`, `fdmvqs-ca`,
`qos-ca`; each lives beside its weight-based policy in the paper's module).

A CA variant returns Mode.CA with a `CaCost`: the controller turns the paper's quantities into
the cost's coefficients and per-path offsets once per control period, and the switch adds, per
new flowlet, the live queueing delay, loss and utilisation it measures itself (see
`src/mpsched/controller/policies/ca.py`). Every variant gives weight 1 to the paths it lets the
switch
choose from (0 to dead ones), puts in the cost only the alive paths, and logs the coefficients,
the offsets and the paper quantities they come from; its per-path scores are the controller's
estimate of each path's cost (`ca.live_cost`, µs-equivalent, lower is better; 0 for a dead path).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from mpsched.controller.model.decision import CaCost, Decision, Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.base import fmt_scores, no_alive_decision
from mpsched.controller.policies.ca import fmt_ca, live_cost


def meta(params_cls: type, name: str) -> dict[str, Any]:
    """The metadata (range, doc) of `params_cls`'s field `name`: the CA variants declare the
    paper's parameters they share with the weight-based policy with the same default and
    this metadata."""
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    return dict(fields[name].metadata)


EPSILON_META: dict[str, Any] = {
    "min": 0.0,
    "max": 1e7,
    "doc": "paths within the least cost + epsilon are drawn at random (µs)",
}
MAX_AGE_META: dict[str, Any] = {
    "min": 0.0,
    "max": 4e6,
    "doc": "live metrics older than this count 0 (the path is tried again)",
}


def no_alive(paths: Sequence[PathState], cost: CaCost) -> Decision:
    """No path alive: equal weights over all paths (the data plane's failover decides)."""
    return dataclasses.replace(no_alive_decision(paths, Mode.CA), ca=cost)


def ca_decision(
    name: str,
    paths: Sequence[PathState],
    chosen: Sequence[int],
    cost: CaCost,
    why: str,
) -> Decision:
    """Mode CA: weight 1 on `chosen` (alive paths), 0 elsewhere; the reason names `why` (the
    paper quantities and how they became the cost), the coefficients and the offsets."""
    keep = set(chosen)
    weights = {p.path_id: 1.0 if p.path_id in keep else 0.0 for p in paths}
    scores = {p.path_id: live_cost(p, cost) if p.alive else 0.0 for p in paths}
    est = {pid: scores[pid] for pid in sorted(keep)}
    return Decision(
        weights=weights,
        mode=Mode.CA,
        scores=scores,
        reason=(
            f"{name}: least cost in the switch over {sorted(keep)}; {why}; "
            f"cost {fmt_ca(cost)}; est_cost_us {fmt_scores(est, 6)}"
        ),
        ca=cost,
    )


def relative_offsets(scores: Mapping[int, float], span_us: float) -> dict[int, float]:
    """offset_p = span · (best - score_p) / best for scores where higher is better and the
    best is > 0 (all 0 otherwise): near-equal scores give near-equal offsets, unlike a
    min-max scaling, which would blow a probe-sized difference up to the whole span."""
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return dict.fromkeys(scores, 0.0)
    return {pid: span_us * max(0.0, best - s) / best for pid, s in scores.items()}
