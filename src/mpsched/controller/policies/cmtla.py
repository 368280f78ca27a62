"""CMT-LA: loss-aware concurrent multipath transfer (CMT-LA), in-network form.

Paper (Liu, Ke, Liu, Zeng, "Loss-Aware CMT-Based Multipathing Scheme", Int. J. Digital
Multimedia Broadcasting 2019, doi:10.1155/2019/9474057; Section 3, its equations reconstructed
in docs/scheduling.md, "CMT-LA"):
- the Mathis model GP = C · MSS / (RTT · √p), so p̂ = (C · MSS / (RTT · GP))²,
  C = √(3/2), MSS = 1500 bytes in the paper's simulations;
- the jitter indicator J_p = (x_now - x_avg) / (x_max - x_min) over the last m
  observations of p̂_p; a path is unreliable when J_p > 0 and J_p rises between consecutive
  observations;
- Algorithm 2: order the ACTIVE paths by p̂ ascending, ties by the
  smaller RTT; take the first; if its cwnd is full, take the next one.

In-network reading (Mode.FLOWLET), once per control period:
- p̂_p combines the two loss signals: the measured loss from the egress's per-path sequence
  gaps (`loss_rate`) and the Mathis estimate from `goodput_mbps` and `srtt_ms`:
  p̂ = (1 - mathis_weight) · measured + mathis_weight · mathis when both exist, the one that
  exists otherwise, and 0 (neutral: the path is tried) when neither does. The default
  mathis_weight = 0 uses the measured loss wherever it exists, because in the network the
  Mathis estimate overstates the loss of a path that carries little traffic (its goodput is
  limited by how much the scheduler sends there, not by loss). For the same reason the
  Mathis estimate is not used at all on a path known to be unloaded (`availability.loaded`:
  no standing queue and a goodput below 80 % of its capacity): there its goodput is the
  demand and would read as a large loss, so an idle path would sort last. The Mathis
  estimate is clamped to [0, 1].
- J_p is computed over the last `jitter_window` p̂_p of this policy's own history (0 when
  the range is 0 or fewer than two observations are known).
- "cwnd full": the path's `inflight_bytes` has reached its BDP (`PathState.bdp_bytes`); a
  path with no in-flight or BDP reading counts as not full. "Take the next one" becomes a
  spill, as in the min-RTT baseline: the first path in the order is taken, and while the
  last taken path is full the next one is taken too. Taking a full path out instead (weight 0
  for one control period) sends every new flowlet of the period down the rest of the order,
  which under load is the lossiest path: on the CMT-LA scenario that put 10 of the 30 Mbit/s
  on the 10-15 % path in most runs (docs/results/README.md).

Reconstructions and deviations:
- Algorithm 2's treatment of an unreliable path (the condition of its step 9 was lost) is read as:
  unreliable paths go after every reliable one in the order (each group by p̂, then RTT).
- The order becomes weights: the taken paths get 1 each, and the k-th path after them
  (k = 1 for the first) gets `rank_decay`^k, so by default each next path gets half as many
  flowlets as the one before; rank_decay = 0 is the paper's single-candidate rule (only the
  taken paths get flowlets).
- An unmeasured srtt sorts after every measured one among paths of equal p̂.

Congestion-aware variant ``cmtla-ca`` (Mode.CA; `docs/scheduling.md`): the order becomes a
cost whose terms keep its priorities:
- loss first: a large `loss_coef_us` (default 100 ms per 1 % of loss) on the switch's live
  loss, so a loss difference outweighs any likely difference of delay; the controller's p̂
  enters the offset only where it exceeds the measured loss (the Mathis part, with
  `mathis_weight` > 0): loss_coef_us · 100 · max(0, p̂_p - loss_rate_p);
- then RTT: `qdelay_coef` (default 1) on the live queueing delay, and the base RTT above the
  smallest (`rtt_min_ms`, else srtt) in the offset, in µs;
- the jitter indicator raises the offset: `jitter_offset_us` · max(0, J_p), plus
  `unreliable_offset_us` for an unreliable path (J_p > 0 and rising), which so goes after the
  reliable ones unless they are far lossier;
- "cwnd full, the next": the live utilisation against the path's capacity, `util_coef_us`
  (default 10 ms at 100 %), moves new flowlets to the next path as a path fills;
- weights 1 on every alive path (the order is in the costs, not in the weights).
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.availability import loaded
from mpsched.controller.policies.base import Policy, fmt_scores, jitter_indicator, no_alive_decision
from mpsched.controller.policies.paper_ca import (
    EPSILON_META,
    MAX_AGE_META,
    ca_decision,
    meta,
    no_alive,
)
from mpsched.controller.policies.registry import register

log = logging.getLogger(__name__)

MATHIS_C = math.sqrt(1.5)


@dataclass(frozen=True)
class CmtlaParams:
    mss_bytes: int = field(
        default=1500,
        metadata={"min": 1, "max": 65535, "doc": "MSS in the Mathis model (paper: 1500)"},
    )
    mathis_weight: float = field(
        default=0.0,
        metadata={
            "min": 0.0,
            "max": 1.0,
            "doc": "weight of the Mathis estimate where a measured loss exists (0: measured only)",
        },
    )
    jitter_window: int = field(
        default=8,
        metadata={
            "min": 2,
            "max": 1000,
            "doc": "m: observations of the loss in the jitter indicator",
        },
    )
    rank_decay: float = field(
        default=0.5,
        metadata={
            "min": 0.0,
            "max": 1.0,
            "doc": "weight of the k-th path after the taken ones = rank_decay^k (0: taken only)",
        },
    )


def mathis_loss(goodput_mbps: float, rtt_ms: float, mss_bytes: int = 1500) -> float:
    """p̂ = (C · MSS / (RTT · GP))², C = √(3/2), clamped to [0, 1]; 1 when GP or RTT is 0."""
    gp_bytes_per_s = goodput_mbps * 1e6 / 8
    rtt_s = rtt_ms / 1000
    if gp_bytes_per_s <= 0 or rtt_s <= 0:
        return 1.0
    return min(1.0, (MATHIS_C * mss_bytes / (rtt_s * gp_bytes_per_s)) ** 2)


def estimate_loss(p: PathState, mss_bytes: int, mathis_weight: float) -> float:
    """p̂ from the measured loss and the Mathis estimate as documented in the module."""
    mathis = (
        mathis_loss(p.goodput_mbps, p.srtt_ms, mss_bytes)
        if p.goodput_mbps is not None and p.srtt_ms is not None
        else None
    )
    if loaded(p) is False:
        mathis = None  # the goodput of an unloaded path is its demand, not a loss signal
    measured = p.loss_rate
    if measured is not None and mathis is not None:
        return (1 - mathis_weight) * measured + mathis_weight * mathis
    if measured is not None:
        return measured
    return mathis if mathis is not None else 0.0


def cwnd_full(p: PathState) -> bool:
    bdp = p.bdp_bytes()
    return p.inflight_bytes is not None and bdp is not None and p.inflight_bytes >= bdp


def order_paths(
    loss: dict[int, float], rtt_ms: dict[int, float | None], unreliable: set[int]
) -> list[int]:
    """Reliable paths first, then unreliable; each by p̂, then RTT (unmeasured last), then id."""

    def key(pid: int) -> tuple:
        rtt = rtt_ms.get(pid)
        return (pid in unreliable, loss[pid], rtt is None, rtt or 0.0, pid)

    return sorted(loss, key=key)


def take_with_spill(order: list[int], full: set[int]) -> list[int]:
    """The first path of the order, and while the last taken one is full, the next one too."""
    taken = order[:1]
    for pid in order[1:]:
        if taken[-1] not in full:
            break
        taken.append(pid)
    return taken


# the parameters of `cmtla` or `cmtla-ca`: both have those the loss estimate reads
_CP = TypeVar("_CP", bound="CmtlaParams | CmtlaCaParams")


class _LossJitter(Policy[_CP]):
    """The per-path loss-jitter history of CMT-LA, shared by `cmtla` and `cmtla-ca`."""

    def __init__(self, params: _CP | None = None) -> None:
        super().__init__(params)
        self._history: dict[int, deque[float]] = {}
        self._last_j: dict[int, float] = {}

    def observe(self, pid: int, loss: float) -> tuple[float, bool]:
        """Record p̂ for a path; (J now, unreliable: J > 0 and rising)."""
        hist = self._history.setdefault(pid, deque(maxlen=self.params.jitter_window))
        hist.append(loss)
        j = jitter_indicator(list(hist))
        prev = self._last_j.get(pid)
        self._last_j[pid] = j
        return j, j > 0 and prev is not None and j > prev


@register
class CmtLa(_LossJitter[CmtlaParams]):
    name = "cmtla"
    Params = CmtlaParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.FLOWLET)
        loss: dict[int, float] = {}
        unreliable: set[int] = set()
        for p in alive:
            loss[p.path_id] = estimate_loss(p, self.params.mss_bytes, self.params.mathis_weight)
            _, bad = self.observe(p.path_id, loss[p.path_id])
            if bad:
                unreliable.add(p.path_id)
                log.debug("cmtla: path %d unreliable (loss jitter rising)", p.path_id)
        order = order_paths(loss, {p.path_id: p.srtt_ms for p in alive}, unreliable)
        full = {p.path_id for p in alive if cwnd_full(p)}
        taken = take_with_spill(order, full)
        weights = {p.path_id: 0.0 for p in paths}
        for rank, pid in enumerate(order):
            after = rank - len(taken) + 1
            weights[pid] = 1.0 if after <= 0 else self.params.rank_decay**after
        scores = {p.path_id: loss.get(p.path_id, 1.0) for p in paths}
        notes = []
        if unreliable:
            notes.append(f"unreliable {sorted(unreliable)}")
        if len(taken) > 1:
            notes.append(f"cwnd full {taken[:-1]}, so also {taken[1:]}")
        extra = f"; {', '.join(notes)}" if notes else ""
        return Decision(
            weights=weights,
            mode=Mode.FLOWLET,
            scores=scores,
            reason=f"cmtla: order {order} by loss then RTT{extra}; p̂ {fmt_scores(loss)}",
        )


@dataclass(frozen=True)
class CmtlaCaParams:
    mss_bytes: int = field(default=CmtlaParams.mss_bytes, metadata=meta(CmtlaParams, "mss_bytes"))
    mathis_weight: float = field(
        default=CmtlaParams.mathis_weight, metadata=meta(CmtlaParams, "mathis_weight")
    )
    jitter_window: int = field(
        default=CmtlaParams.jitter_window, metadata=meta(CmtlaParams, "jitter_window")
    )
    loss_coef_us: float = field(
        default=100000.0,
        metadata={"min": 0.0, "max": 1e8, "doc": "loss first: µs of cost per 1 % of loss"},
    )
    qdelay_coef: float = field(
        default=1.0,
        metadata={"min": 0.0, "max": 1000.0, "doc": "then RTT: µs of cost per µs of queueing"},
    )
    util_coef_us: float = field(
        default=10000.0,
        metadata={"min": 0.0, "max": 1e7, "doc": "cwnd full, the next: µs at 100 % utilisation"},
    )
    jitter_offset_us: float = field(
        default=20000.0,
        metadata={"min": 0.0, "max": 1e8, "doc": "offset per unit of a positive jitter J_p (µs)"},
    )
    unreliable_offset_us: float = field(
        default=100000.0,
        metadata={"min": 0.0, "max": 1e8, "doc": "offset of an unreliable path (J > 0, rising)"},
    )
    epsilon_us: float = field(default=CaCost.epsilon_us, metadata=EPSILON_META)
    max_age_ms: float = field(default=CaCost.max_age_ms, metadata=MAX_AGE_META)


@register
class CmtLaCa(_LossJitter[CmtlaCaParams]):
    """CMT-LA's loss-first order as the cost of the congestion-aware data plane (module
    docstring); the jitter history is the weight-based policy's."""

    name = "cmtla-ca"
    Params = CmtlaCaParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        prm = self.params
        alive = [p for p in paths if p.alive]
        loss: dict[int, float] = {}
        jitter: dict[int, float] = {}
        unreliable: set[int] = set()
        for p in alive:
            loss[p.path_id] = estimate_loss(p, prm.mss_bytes, prm.mathis_weight)
            jitter[p.path_id], bad = self.observe(p.path_id, loss[p.path_id])
            if bad:
                unreliable.add(p.path_id)
        base = {p.path_id: p.rtt_min_ms if p.rtt_min_ms is not None else p.srtt_ms for p in alive}
        known = [v for v in base.values() if v is not None]
        floor = min(known, default=0.0)
        offsets: dict[int, float] = {}
        for p in alive:
            pid = p.path_id
            rtt = base[pid]
            extra_loss = max(0.0, loss[pid] - (p.loss_rate or 0.0))
            offsets[pid] = (
                prm.loss_coef_us * 100.0 * extra_loss
                + (prm.qdelay_coef * (rtt - floor) * 1000.0 if rtt is not None else 0.0)
                + prm.jitter_offset_us * max(0.0, jitter[pid])
                + (prm.unreliable_offset_us if pid in unreliable else 0.0)
            )
        cost = CaCost(
            qdelay_coef=prm.qdelay_coef,
            loss_coef_us=prm.loss_coef_us,
            util_coef_us=prm.util_coef_us,
            epsilon_us=prm.epsilon_us,
            max_age_ms=prm.max_age_ms,
            paths={p.path_id: CaPath(offsets[p.path_id], p.capacity_mbps) for p in alive},
        )
        if not alive:
            return no_alive(paths, cost)
        notes = f"; unreliable {sorted(unreliable)}" if unreliable else ""
        why = (
            f"loss first (c_loss {prm.loss_coef_us:g}µs/%), then RTT; offsets = p̂ beyond the "
            f"measured loss + base RTT above the least + jitter {fmt_scores(jitter)}{notes}; "
            f"p̂ {fmt_scores(loss)}"
        )
        return ca_decision(self.name, paths, [p.path_id for p in alive], cost, why)
