"""Congestion-aware path choice (mode CA): the cost model's pure functions and the plain
least-congestion policy ``ca``.

In mode CA the switch itself picks the path of each new flowlet: among the alive weighted
paths, one of least cost (ties within `CaCost.epsilon_us` drawn at random), with the cost of
path i, in µs-equivalent units (p4src/include/ca_select.p4):

    cost_i = offset_i + (fresh_i ? (c_qdelay*qdelay_us_i + c_loss*loss_i + c_util*util_i) >> 8 : 0)

from the live per-path metrics its far edge feeds back (CONGA/HULA style: the decision uses
round-trip-old measurements, not the controller's seconds-old ones). The controller only sets
the coefficients and the per-path offsets and capacities once per period (`CaCost`);
`ca_fixed_point` turns those into the set_ca action parameters in the units the program
declares (`@ca_units`, read by `Pipeline.ca_units`), `live_cost` estimates the same cost from
the controller's estimators (for logs, and for re-placing pinned MPTCP subflows).

The ``ca`` policy is the pure least-congestion baseline: weight 1 on every alive path (0 on
dead ones), offsets = each path's base one-way delay above the fastest path's (so an idle
slow path is not preferred over an idle fast one), capacities from the estimator. The paper
variants (llhd-ca, cmtla-ca, ...) instead derive the offsets from their scores with
`offsets_from_scores`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.base import Policy, fmt_scores, no_alive_decision
from mpsched.controller.policies.registry import register
from mpsched.p4rt.pipeline import CA_COEFFICIENTS, CA_COST_UNITS, CA_PATH_PARAMS

log = logging.getLogger(__name__)

U32_MAX = (1 << 32) - 1
def live_cost(state: PathState, cost: CaCost) -> float:
    """The controller's estimate (µs-equivalent) of the cost the switch computes for a path:

        offset_us + qdelay_coef * owd_ms * 1000 + loss_coef_us * loss_rate * 100
                  + util_coef_us * goodput_mbps / capacity_mbps

    with the offset and capacity from ``cost.paths[state.path_id]`` (absent: offset 0 and the
    state's own capacity_mbps). A missing estimate contributes 0, as a stale metric does in the
    switch. Liveness is not part of the cost (the switch filters dead paths separately): callers
    skip dead paths themselves.
    """
    spec = cost.paths.get(state.path_id)
    offset = spec.offset_us if spec is not None else 0.0
    capacity = spec.capacity_mbps if spec is not None else state.capacity_mbps
    total = offset
    if state.owd_ms is not None:
        total += cost.qdelay_coef * max(0.0, state.owd_ms) * 1000.0
    if state.loss_rate is not None:
        total += cost.loss_coef_us * max(0.0, state.loss_rate) * 100.0
    if state.goodput_mbps is not None and capacity:
        total += cost.util_coef_us * max(0.0, state.goodput_mbps) / capacity
    return total


def _u32(name: str, value: float) -> int:
    """round(value) clamped to 0..2^32-1; ValueError naming `name` when not finite."""
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return min(U32_MAX, max(0, round(value)))


def inv_capacity(capacity_mbps: float | None, units: Mapping[str, int]) -> int:
    """2^32 * rate_unit_bytes / (bytes the path delivers per rate window at capacity), so that
    the switch's (rate * inv_capacity) >> 16 is the utilisation with 65536 = 100 %; 0 when the
    capacity is unknown or not positive (no utilisation term), clamped to 0..2^32-1."""
    if capacity_mbps is None or not capacity_mbps > 0:
        return 0
    window_bytes = capacity_mbps * 125.0 * units["rate_window_us"] / 1000.0
    return _u32("inv_capacity", (1 << 32) * units["rate_unit_bytes"] / window_bytes)


def ca_fixed_point(cost: CaCost, max_paths: int, units: Mapping[str, int]) -> dict[str, int]:
    """The set_ca action parameters (all bit<32>) for `cost`:

    - c_qdelay = coef_one * qdelay_coef (µs per µs of queueing),
    - c_loss = coef_one * loss_coef_us * 100 / loss_one (µs per 1/loss_one of loss fraction),
    - c_util = coef_one * util_coef_us / util_one (µs per 1/util_one of utilisation),
    - epsilon = epsilon_us, max_age_us = max_age_ms * 1000,
    - offset_i = offset_us, inv_capacity_i = `inv_capacity` for i = 1..max_paths (paths not in
      cost.paths: 0, 0),

    each rounded and clamped to 0..2^32-1. `units` are the program's @ca_units
    (`Pipeline.ca_units`). ValueError for a path id outside 1..max_paths or a missing unit.
    """
    missing = [k for k in CA_COST_UNITS if not units.get(k)]
    if missing:
        raise ValueError(f"@ca_units lacks (or has 0 for) {missing}")
    unknown = sorted(p for p in cost.paths if not 1 <= p <= max_paths)
    if unknown:
        raise ValueError(f"path ids {unknown} outside 1..{max_paths}")
    one = units["coef_one"]
    coefficients = (
        one * cost.qdelay_coef,
        one * cost.loss_coef_us * 100.0 / units["loss_one"],
        one * cost.util_coef_us / units["util_one"],
        cost.epsilon_us,
        cost.max_age_ms * 1000.0,
    )
    out = {name: _u32(name, v) for name, v in zip(CA_COEFFICIENTS, coefficients, strict=True)}
    offset, inv_cap = CA_PATH_PARAMS
    for i in range(1, max_paths + 1):
        spec = cost.paths.get(i)
        out[f"{offset}_{i}"] = _u32(f"{offset}_{i}", spec.offset_us) if spec else 0
    for i in range(1, max_paths + 1):
        spec = cost.paths.get(i)
        out[f"{inv_cap}_{i}"] = inv_capacity(spec.capacity_mbps, units) if spec else 0
    return out


CA_OFFSET_STEP_US = 100.0  # quantise_ca: offsets in steps of this
CA_DIGITS = 2  # quantise_ca: capacities and util_coef_us to this many significant digits


def significant(value: float, digits: int) -> float:
    """`value` rounded to `digits` significant digits (0, negative or not finite: as is)."""
    if value <= 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(value)))


def quantise_ca(cost: CaCost) -> CaCost:
    """`cost` with each offset rounded to CA_OFFSET_STEP_US and each capacity and the
    utilisation coefficient (which policies derive from RTTs) to CA_DIGITS significant digits
    (the other fields as they are): the estimators move a little every period, and the switch
    need not be rewritten for a change the cost's resolution (epsilon, ms-scale terms) cannot
    tell."""
    paths = {}
    for pid, p in sorted(cost.paths.items()):
        offset = p.offset_us
        if math.isfinite(offset):
            offset = round(offset / CA_OFFSET_STEP_US) * CA_OFFSET_STEP_US
        capacity = p.capacity_mbps
        paths[pid] = CaPath(offset_us=offset, capacity_mbps=None if capacity is None
                            else significant(capacity, CA_DIGITS))
    return dataclasses.replace(cost, util_coef_us=significant(cost.util_coef_us, CA_DIGITS),
                               paths=paths)


def offsets_from_scores(scores: Mapping[int, float], span_us: float) -> dict[int, float]:
    """Per-path offsets (µs) from a policy's scores, higher score = lower offset: the best
    path 0, the worst `span_us`, linear in between; equal scores give equal offsets (all 0
    when every score is the same). ValueError for a non-finite score or a negative span."""
    if not math.isfinite(span_us) or span_us < 0:
        raise ValueError(f"span_us must be finite and >= 0, got {span_us!r}")
    for pid, s in scores.items():
        if not math.isfinite(s):
            raise ValueError(f"score of path {pid} must be finite, got {s!r}")
    if not scores:
        return {}
    hi, lo = max(scores.values()), min(scores.values())
    if hi == lo:
        return dict.fromkeys(scores, 0.0)
    return {pid: span_us * (hi - s) / (hi - lo) for pid, s in scores.items()}


def fmt_ca(cost: CaCost) -> str:
    """'qdelay 1µs/µs loss 20000µs/% util 10000µs eps 2000µs age 500ms; offset_us 1=0 2=800'
    for reason and log lines."""
    text = (
        f"qdelay {cost.qdelay_coef:g}µs/µs loss {cost.loss_coef_us:g}µs/% "
        f"util {cost.util_coef_us:g}µs eps {cost.epsilon_us:g}µs age {cost.max_age_ms:g}ms"
    )
    if cost.paths:
        offsets = {pid: p.offset_us for pid, p in cost.paths.items()}
        text += f"; offset_us {fmt_scores(offsets, 6)}"
    return text


def base_owd_ms(paths: Sequence[PathState]) -> tuple[dict[int, float], str]:
    """Each path's base one-way delay (ms) and its source, comparable between the paths:
    the one-way-delay window minimum (owd_raw_ms - owd_ms: the edges' clock offset is common
    to all paths) when every given path has it, else half the minimum RTT when every path has
    that, else whichever covers more paths (the others are left out)."""
    owd = {p.path_id: p.owd_raw_ms - (p.owd_ms or 0.0) for p in paths if p.owd_raw_ms is not None}
    rtt = {p.path_id: p.rtt_min_ms / 2 for p in paths if p.rtt_min_ms is not None}
    if len(owd) >= len(rtt):
        return owd, "owd_min"
    return rtt, "rtt_min/2"


@dataclass(frozen=True)
class CaParams:
    qdelay_coef: float = field(
        default=CaCost.qdelay_coef,
        metadata={"min": 0.0, "max": 1000.0, "doc": "µs of cost per µs of queueing delay"},
    )
    loss_coef_us: float = field(
        default=CaCost.loss_coef_us,
        metadata={"min": 0.0, "max": 1e7, "doc": "µs of cost per 1 % of loss"},
    )
    util_coef_us: float = field(
        default=CaCost.util_coef_us,
        metadata={"min": 0.0, "max": 1e7, "doc": "µs of cost at 100 % utilisation"},
    )
    epsilon_us: float = field(
        default=CaCost.epsilon_us,
        metadata={
            "min": 0.0,
            "max": 1e7,
            "doc": "paths within the least cost + epsilon are drawn at random",
        },
    )
    max_age_ms: float = field(
        default=CaCost.max_age_ms,
        metadata={
            "min": 0.0,
            "max": 4e6,
            "doc": "live metrics older than this count 0 (the path is tried again)",
        },
    )
    offset_scale: float = field(
        default=1.0,
        metadata={
            "min": 0.0,
            "max": 100.0,
            "doc": "offset = this * base one-way delay above the fastest path's (0: none)",
        },
    )
    syn_copy: bool = field(
        default=False,
        metadata={"doc": "a TCP SYN (or SYN-ACK) also goes, as a copy, onto another usable path"},
    )


@register
class CongestionAware(Policy[CaParams]):
    """Least live congestion in the switch (CONGA/HULA style), see the module docstring."""

    name = "ca"
    Params = CaParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        p = self.params
        alive = [s for s in paths if s.alive]
        base, source = base_owd_ms(alive)
        floor = min(base.values(), default=0.0)
        ca_paths = {
            s.path_id: CaPath(
                offset_us=p.offset_scale * (base[s.path_id] - floor) * 1000.0
                if s.path_id in base
                else 0.0,
                capacity_mbps=s.capacity_mbps,
            )
            for s in paths
        }
        cost = CaCost(
            qdelay_coef=p.qdelay_coef,
            loss_coef_us=p.loss_coef_us,
            util_coef_us=p.util_coef_us,
            epsilon_us=p.epsilon_us,
            max_age_ms=p.max_age_ms,
            paths=ca_paths,
        )
        if not alive:
            return dataclasses.replace(no_alive_decision(paths, Mode.CA), ca=cost,
                                       syn_copy=p.syn_copy)
        scores = {s.path_id: live_cost(s, cost) for s in paths}
        weights = {s.path_id: 1.0 if s.alive else 0.0 for s in paths}
        unmeasured = sorted(s.path_id for s in alive if s.path_id not in base)
        why = f"offsets from {source}" if base else "no delay measured: offsets 0"
        if base and unmeasured:
            why += f" (paths {unmeasured} unmeasured: offset 0)"
        log.debug("ca: cost %s, estimate %s", cost, scores)
        return Decision(
            weights=weights,
            mode=Mode.CA,
            scores=scores,
            reason=(
                f"ca: least live cost in the switch over alive paths "
                f"{[s.path_id for s in alive]}; {why}; est_cost_us {fmt_scores(scores, 6)}"
            ),
            ca=cost,
            syn_copy=p.syn_copy,
        )
