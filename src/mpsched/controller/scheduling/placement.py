"""What a class's decision becomes on a switch: its `Placement`, and the flowlet gap.

A policy's `Decision` (weights, mode, MVQS or CA parameters) is turned into the table
contents one class has on one switch (`place`): weights quantised to 0..255 with the
administratively down paths at 0, the MVQS parameters in the program's units, the CA cost
quantised so that estimator noise does not rewrite the switch every period, and the flowlet
gap (the class's, or `auto_gap_us`). Two placements compare equal when the switch need not be
written; a `Change` is one that must.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable, Sequence
from dataclasses import replace
from typing import Any

from mpsched.controller.model.decision import CaCost, Decision, Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.model.placement import Placement
from mpsched.controller.policies.base import quantise
from mpsched.controller.policies.ca import quantise_ca
from mpsched.controller.scheduling.classes import TrafficClass

AUTO_GAP_MIN_US = 500
AUTO_GAP_STEP_US = 1000


def auto_gap_us(paths: Sequence[PathState], weighted: Iterable[int]) -> int:
    """The flowlet gap of a class with `flowlet_gap_us` 0: a flowlet may move to another
    path without reordering when the gap exceeds the difference of the paths' one-way
    delays (FLARE, Kandula et al. 2007). Over the alive weighted paths: the spread of the
    latest raw one-way delays (the edges' clock offset cancels), else half the spread of
    the smoothed RTTs; plus AUTO_GAP_MIN_US, rounded up to AUTO_GAP_STEP_US (fewer
    rewrites), at least AUTO_GAP_MIN_US."""
    ids = set(weighted)
    live = [p for p in paths if p.alive and p.path_id in ids]
    owd = [p.owd_raw_ms for p in live if p.owd_raw_ms is not None]
    rtt = [p.srtt_ms for p in live if p.srtt_ms is not None]
    if len(owd) == len(live) and len(owd) >= 2:
        spread_us = (max(owd) - min(owd)) * 1000
    elif len(rtt) >= 2:
        spread_us = (max(rtt) - min(rtt)) * 500
    else:
        spread_us = 0.0
    gap = spread_us + AUTO_GAP_MIN_US
    return max(AUTO_GAP_MIN_US, int(math.ceil(gap / AUTO_GAP_STEP_US)) * AUTO_GAP_STEP_US)


def place(
    c: TrafficClass,
    d: Decision,
    paths: Sequence[PathState],
    path_ids: Sequence[int],
    admin_down: Container[int],
) -> Placement:
    """The placement of class `c` for decision `d` over the switch's paths `path_ids`
    (`paths`: their states this period, for the automatic flowlet gap)."""
    weights = {p: (0.0 if p in admin_down else d.weights.get(p, 0.0)) for p in path_ids}
    q = quantise(weights) if any(w > 0 for w in weights.values()) else {p: 0 for p in weights}
    vq: tuple[tuple[int, tuple[int, int, int, int]], ...] = ()
    if d.mode == Mode.VQ:
        vq = tuple(
            # mvqs.p4 drains per 1024 µs: bytes/ms * 1.024
            (p, (v.pad_us, v.bdp_bytes, v.us_per_kbyte, round(v.drain_bytes_per_ms * 1.024)))
            for p, v in sorted(d.vq.items())
        )
    ca = None
    if d.mode == Mode.CA:
        # None: the switch's default no_ca (every cost 0: a random usable path, LetFlow)
        zero = CaCost(qdelay_coef=0.0, loss_coef_us=0.0, util_coef_us=0.0, epsilon_us=0.0,
                      max_age_ms=0.0)
        ca = quantise_ca(d.ca) if d.ca is not None else zero
    gap = c.policy.flowlet_gap_us
    if Mode(d.mode) not in (Mode.FLOWLET, Mode.VQ, Mode.CA):
        gap = 0  # unused by hash and rr: no rewrites when the delays move
    elif gap == 0:
        gap = auto_gap_us(paths, [p for p, w in q.items() if w > 0])
    return Placement(tuple(sorted(q.items())), Mode(d.mode).value, gap, vq, ca, d.syn_copy)


def withdrawn(pl: Placement, keep: Container[int], admin_down: Container[int]) -> Placement | None:
    """`pl` without weight on the paths not in `keep` (a re-route took them away), the
    others' weights as they were (quantised again), or equal over the kept paths not
    administratively down when none of them had any; None: `pl` weights no path outside
    `keep`. The pair's next step decides anew (docs/fabric-controller.md, "Re-routing")."""
    old = dict(pl.weights)
    if all(w == 0 for p, w in old.items() if p not in keep):
        return None
    weights = {p: (float(w) if p in keep else 0.0) for p, w in old.items()}
    if not any(w > 0 for w in weights.values()):
        weights = {p: (1.0 if p in keep and p not in admin_down else 0.0) for p in old}
    return replace(pl, weights=tuple(sorted(quantise(weights).items())))


def ca_dict(cost: CaCost) -> dict[str, Any]:
    """A mode-ca placement's cost parameters for the decision log and the REST views: the
    coefficients and per path {offset_us, capacity_mbps} (keys are path ids as strings)."""
    return {
        "qdelay_coef": cost.qdelay_coef,
        "loss_coef_us": cost.loss_coef_us,
        "util_coef_us": cost.util_coef_us,
        "epsilon_us": cost.epsilon_us,
        "max_age_ms": cost.max_age_ms,
        "paths": {
            str(pid): {"offset_us": p.offset_us, "capacity_mbps": p.capacity_mbps}
            for pid, p in sorted(cost.paths.items())
        },
    }
