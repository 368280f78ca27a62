"""The outcome of an `adaptive` dwell: what the arm delivered, and how well it met the target.

Over a dwell (after `settle_periods`, while flowlets of the previous arm drain) the class's
QoS is measured from the egress edge's counters (`PathState.counters`) on the paths the arm
weighted: goodput as a fraction of the alive paths' summed capacity, queueing delay
(byte-weighted), loss (by bytes: lost packets times the path's mean packet size, so lost
probes weigh little), reordering (flow_ooo / delivered packets) (`summarise`). `score` rates
it against the class's `qos_target` (or the default target of the parameters `target_*`):
"met" is 1 when every target is met, else 0; "graded" multiplies per target min(1, achieved /
target) for a minimum and min(1, target / achieved) for a maximum.

Limits: the data plane counts per path, not per class, so classes sharing paths share their
measurements.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpsched.controller.policies.base import QosTarget


@dataclass
class PathTally:
    """What one path delivered over a dwell's measured periods."""

    packets: int = 0
    bytes: int = 0
    lost: int = 0
    ooo: int = 0
    owd_sum: float = 0.0
    owd_n: int = 0


@dataclass(frozen=True)
class Measured:
    """A dwell's QoS (None: not measured)."""

    seconds: float
    goodput_mbps: float
    goodput_frac: float | None
    delay_ms: float | None
    loss: float | None
    reorder: float | None

    def to_dict(self) -> dict[str, Any]:
        return {k: None if v is None else round(v, 6) for k, v in self.__dict__.items()}


def summarise(tallies: Mapping[int, PathTally], seconds: float, capacity_mbps: float | None
              ) -> Measured:
    """The dwell's QoS from its per-path tallies (module docstring)."""
    total_bytes = sum(t.bytes for t in tallies.values())
    total_packets = sum(t.packets for t in tallies.values())
    goodput = 8 * total_bytes / seconds / 1e6 if seconds > 0 else 0.0
    frac = goodput / capacity_mbps if capacity_mbps else None
    lost_bytes = sum(t.lost * t.bytes / t.packets for t in tallies.values() if t.packets > 0)
    lost_blind = sum(t.lost for t in tallies.values() if t.packets == 0)
    loss = None
    if total_bytes + lost_bytes > 0:
        loss = lost_bytes / (total_bytes + lost_bytes)
    elif lost_blind > 0:
        loss = 1.0
    reorder = sum(t.ooo for t in tallies.values()) / total_packets if total_packets else None
    owd = {pid: t.owd_sum / t.owd_n for pid, t in tallies.items() if t.owd_n > 0}
    delay = None
    if owd:
        weight = {pid: tallies[pid].bytes for pid in owd}
        if sum(weight.values()) > 0:
            delay = sum(owd[p] * weight[p] for p in owd) / sum(weight.values())
        else:
            delay = sum(owd.values()) / len(owd)
    return Measured(seconds, goodput, frac, delay, loss, reorder)


def _ratio_max(achieved: float, target: float) -> float:
    if achieved <= target:
        return 1.0
    return target / achieved


def score(m: Measured, target: QosTarget, graded: bool) -> tuple[float, bool, dict[str, float]]:
    """(outcome u ∈ [0, 1], every target met, per target its ratio). A target whose metric
    was not measured is left out; no target at all: u = 1."""
    terms: dict[str, float] = {}
    if target.min_goodput_frac is not None and m.goodput_frac is not None:
        t = target.min_goodput_frac
        terms["goodput_frac"] = 1.0 if t <= 0 else min(1.0, m.goodput_frac / t)
    upper_bounds: tuple[tuple[str, float | None, float | None], ...] = (
        ("delay_ms", target.max_delay_ms, m.delay_ms),
        ("loss", target.max_loss, m.loss),
        ("reorder", target.max_reorder, m.reorder),
    )
    for name, bound, x in upper_bounds:
        if bound is not None and x is not None:
            terms[name] = _ratio_max(x, bound)
    met = all(v >= 1.0 for v in terms.values())
    u = math.prod(terms.values()) if graded else float(met)
    return u, met, terms
