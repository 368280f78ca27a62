"""QoS score of the context-adaptive, QoS-guaranteed MPTCP scheduler (QoS-MPTCP),
in-network.

Paper (Liu et al., "Context-adaptive and QoS-guaranteed flow scheduling optimization in
multipath multimedia transmission over MPTCP", Wireless Networks 2025,
doi:10.1007/s11276-024-03854-7; Section 4.1.2):
    S_i(t) = (num_send_imi_i(t) / cwnd_i(t)) / delay_i(t)                         (eq. 1)
    delay_i(t) ≈ ⌊queuing_i / cwnd_i⌋ · [lr_i · t_timeout + (1 - lr_i) · sRTT_i]
                 + [lr_i · t_timeout + (1 - lr_i) · ppgn_delay_i],  ppgn_delay = sRTT / 2   (eq. 2)
    J_i(t) = (rtt_curr - rtt_avg) / (rtt_max - rtt_min) over the last m RTTs     (eq. 3)
    d_i(t) = d_i(t-1) + d_i(t-1) · J_i(t): the loss observation window           (eq. 4)
  lr_i = lost / total packets within the last d_i(t); the largest score gets the next
  cwnd-sized burst.

In-network reading (docs/scheduling.md, "QoS score"; Mode.FLOWLET, once per control period):
- cwnd_p -> bdp_p = `PathState.bdp_bytes()` (capacity · srtt); num_send_imi_p -> the
  headroom max(0, bdp_p - inflight_p); queuing_p -> the bytes in flight beyond the pipe,
  max(0, inflight_p - bdp_p) (data the path already holds in its queues).
  So S_p = (headroom_p / bdp_p) / delay_p with delay_p in ms as eq. 2.
- t_timeout = `rto_ms`; when it is missing, srtt + 4 · rttvar (RFC 6298) floored at
  `min_rto_ms`, or 3 · srtt without rttvar.
- J_p (eq. 3) over the last `jitter_window` srtt readings of this policy's history.
- The loss window (reconstructed for the network): every period the policy records the
  path's measured `loss_rate` (itself a ratio over the estimator's window); d_p(t) =
  d_p(t-1) · (1 + J_p(t)), clamped to [loss_window_min_s, loss_window_max_s] (starting at
  loss_window_init_s), and lr_p = the mean of the recorded loss readings younger than d_p(t).
- Traffic-class targets (operator Params, None = no target) filter the eligible paths:
  delay_p <= max_delay_ms, lr_p <= max_loss, rate_p >= min_rate_mbps where rate_p is the
  capacity estimate, else the path's availability (`availability.availability_mbps`: its
  goodput only while it holds a standing queue; the goodput of a lightly used path is its
  demand and would fail the rate target for no fault of the path). A path whose metric is
  unknown is not excluded by that target. If no alive path meets the targets, all alive
  paths are eligible and the reason says so.
- Weights over the eligible paths: ∝ S_p (``weighted`` True, default), or all on the largest
  S_p (the paper's rule; ties: lowest id). If every eligible S_p is 0 (no headroom
  anywhere), equal weights over them.

Neutral treatment of missing estimates: unknown bdp -> headroom ratio 1 and no queue (an
unmeasured path looks empty, so it is tried); unknown inflight -> 0; unknown loss -> 0;
unknown srtt -> the mean srtt of the alive paths that have one, else `default_srtt_ms`.

Congestion-aware variant ``qos-ca`` (Mode.CA; `docs/scheduling.md`): the same delay_p, lr_p,
headroom and class targets; with D_p = 1 / S_p = delay_p / (headroom_p / bdp_p) in ms (the
expected delay stretched by the lack of headroom; no headroom: `max_offset_us`):
- weights: 1 on the eligible paths (those meeting the class targets; none: every alive
  path), 0 elsewhere, so the switch chooses among the paths the score would weight;
- offset_p = min(max_offset_us, 1000 · (D_p - min over the eligible D)) µs;
- c_qdelay = the mean over the eligible paths of (1 - lr_p) · (⌊queuing/bdp⌋ + 1/2): the
  slope of eq. 2 in the path's delay (a queue adds to each round's sRTT and to ppgn_delay);
- c_loss = the mean of 10 · (t_timeout - ppgn_delay + ⌊queuing/bdp⌋ · (t_timeout - sRTT)) µs
  per 1 %: the slope of eq. 2 in lr (ms per unit of loss fraction, · 1000 / 100);
- utilisation for the headroom: S = (1 - util) / delay, so a path's cost grows by D_p · util:
  c_util = D_ref (the mean D of the eligible paths, µs) and path p's reference capacity =
  cap_p · D_ref / D_p (no capacity: no utilisation term on that path).
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.availability import availability_mbps
from mpsched.controller.policies.base import (
    Policy,
    equal_weights,
    fmt_scores,
    jitter_indicator,
    no_alive_decision,
)
from mpsched.controller.policies.paper_ca import (
    EPSILON_META,
    MAX_AGE_META,
    ca_decision,
    meta,
    no_alive,
)
from mpsched.controller.policies.registry import register

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QosParams:
    max_delay_ms: float | None = field(
        default=None,
        metadata={"min": 0.0, "max": 1e6, "doc": "class target: expected delay_p (ms); None: any"},
    )
    max_loss: float | None = field(
        default=None,
        metadata={"min": 0.0, "max": 1.0, "doc": "class target: loss rate lr_p; None: any"},
    )
    min_rate_mbps: float | None = field(
        default=None,
        metadata={"min": 0.0, "max": 1e6, "doc": "class target: path rate (Mbit/s); None: any"},
    )
    weighted: bool = field(
        default=True,
        metadata={"doc": "weights ∝ S_p (True) or all weight on the largest S_p (False)"},
    )
    jitter_window: int = field(
        default=8, metadata={"min": 2, "max": 1000, "doc": "m: srtt readings in the jitter J_p"}
    )
    loss_window_init_s: float = field(
        default=1.0, metadata={"min": 0.001, "max": 3600.0, "doc": "d_p(0): initial loss window"}
    )
    loss_window_min_s: float = field(
        default=0.2, metadata={"min": 0.001, "max": 3600.0, "doc": "smallest loss window d_p"}
    )
    loss_window_max_s: float = field(
        default=10.0, metadata={"min": 0.001, "max": 3600.0, "doc": "largest loss window d_p"}
    )
    min_rto_ms: float = field(
        default=200.0,
        metadata={"min": 0.0, "max": 60000.0, "doc": "RTO floor when rto_ms is not given"},
    )
    default_srtt_ms: float = field(
        default=50.0,
        metadata={"min": 0.001, "max": 60000.0, "doc": "srtt when no alive path has one"},
    )

    def __post_init__(self) -> None:
        if self.loss_window_min_s > self.loss_window_max_s:
            raise FieldError("loss_window_min_s", "must be <= loss_window_max_s")


def timeout_ms(p: PathState, srtt_ms: float, min_rto_ms: float) -> float:
    """t_to: rto_ms, else max(min_rto_ms, srtt + 4 rttvar), else max(min_rto_ms, 3 srtt)."""
    if p.rto_ms is not None:
        return p.rto_ms
    if p.rttvar_ms is not None:
        return max(min_rto_ms, srtt_ms + 4 * p.rttvar_ms)
    return max(min_rto_ms, 3 * srtt_ms)


def expected_delay_ms(
    queued_bytes: float, bdp_bytes: float, loss: float, srtt_ms: float, t_to_ms: float
) -> float:
    """delay_p = ⌊queued/bdp⌋ · [lr·t_to + (1-lr)·srtt] + [lr·t_to + (1-lr)·srtt/2]."""
    rounds = math.floor(queued_bytes / bdp_bytes) if bdp_bytes > 0 else 0
    return rounds * (loss * t_to_ms + (1 - loss) * srtt_ms) + (
        loss * t_to_ms + (1 - loss) * srtt_ms / 2
    )


def score(headroom_ratio: float, delay_ms: float) -> float:
    """S_p = (headroom_p / bdp_p) / delay_p (0 when the delay is 0 or negative)."""
    return headroom_ratio / delay_ms if delay_ms > 0 else 0.0


def next_loss_window(d_prev: float, jitter: float, lo: float, hi: float) -> float:
    """d(t) = d(t-1) · (1 + J(t)), clamped to [lo, hi]."""
    return min(hi, max(lo, d_prev * (1 + jitter)))


@dataclass(frozen=True)
class PathQos:
    """One path's quantities of the score (times in ms)."""

    srtt_ms: float
    loss: float  # lr_p over the loss window
    headroom: float  # headroom_p / bdp_p
    rounds: int  # ⌊queuing_p / bdp_p⌋
    timeout_ms: float
    delay_ms: float  # eq. 2
    score: float  # S_p, eq. 1


# the parameters of `qos` or `qos-ca`: both have those the score and its histories read
_QP = TypeVar("_QP", bound="QosParams | QosCaParams")


class _QosScore(Policy[_QP]):
    """The QoS score and its per-path RTT and loss histories, shared by `qos` and `qos-ca`."""

    def __init__(self, params: _QP | None = None) -> None:
        super().__init__(params)
        self._rtts: dict[int, deque[float]] = {}
        self._window: dict[int, float] = {}
        self._loss: dict[int, deque[tuple[float, float]]] = {}

    def loss_rate(self, p: PathState, now: float) -> float:
        """Update the path's RTT and loss history; lr_p over the jitter-adapted window."""
        prm = self.params
        rtts = self._rtts.setdefault(p.path_id, deque(maxlen=prm.jitter_window))
        if p.srtt_ms is not None:
            rtts.append(p.srtt_ms)
        d = next_loss_window(
            self._window.get(p.path_id, prm.loss_window_init_s),
            jitter_indicator(list(rtts)),
            prm.loss_window_min_s,
            prm.loss_window_max_s,
        )
        self._window[p.path_id] = d
        samples = self._loss.setdefault(p.path_id, deque())
        if p.loss_rate is not None:
            samples.append((now, p.loss_rate))
        while samples and samples[0][0] < now - prm.loss_window_max_s:
            samples.popleft()
        recent = [lr for t, lr in samples if t >= now - d]
        return sum(recent) / len(recent) if recent else 0.0

    def assess(
        self, alive: Sequence[PathState], now: float
    ) -> tuple[dict[int, PathQos], list[int], str]:
        """Per alive path its QoS quantities (updating the histories), the eligible paths
        (all alive ones when none meets the class targets) and a note saying so."""
        prm = self.params
        known = [p.srtt_ms for p in alive if p.srtt_ms is not None and p.srtt_ms > 0]
        fill = sum(known) / len(known) if known else prm.default_srtt_ms
        avail = availability_mbps(alive)
        out: dict[int, PathQos] = {}
        eligible: list[int] = []
        for p in alive:
            srtt = p.srtt_ms if p.srtt_ms is not None and p.srtt_ms > 0 else fill
            lr = self.loss_rate(p, now)
            bdp = p.bdp_bytes()
            inflight = p.inflight_bytes or 0
            if bdp is None or bdp <= 0:
                ratio, queued, bdp_for_rounds = 1.0, 0.0, 1.0
            else:
                ratio = max(0.0, bdp - inflight) / bdp
                queued, bdp_for_rounds = max(0.0, inflight - bdp), bdp
            t_to = timeout_ms(p, srtt, prm.min_rto_ms)
            delay = expected_delay_ms(queued, bdp_for_rounds, lr, srtt, t_to)
            rounds = math.floor(queued / bdp_for_rounds) if bdp_for_rounds > 0 else 0
            out[p.path_id] = PathQos(srtt, lr, ratio, rounds, t_to, delay, score(ratio, delay))
            rate = p.capacity_mbps if p.capacity_mbps is not None else avail[p.path_id]
            if (
                (prm.max_delay_ms is None or delay <= prm.max_delay_ms)
                and (prm.max_loss is None or lr <= prm.max_loss)
                and (prm.min_rate_mbps is None or rate is None or rate >= prm.min_rate_mbps)
            ):
                eligible.append(p.path_id)
        note = ""
        if not eligible:
            eligible = [p.path_id for p in alive]
            note = "no path meets the class targets: all alive paths eligible; "
            log.info("%s: no alive path meets the class targets; using all alive paths", self.name)
        return out, eligible, note


@register
class Qos(_QosScore[QosParams]):
    name = "qos"
    Params = QosParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.FLOWLET)
        prm = self.params
        quantities, eligible, note = self.assess(alive, now)
        scores = {pid: q.score for pid, q in quantities.items()}
        if prm.weighted and any(scores[pid] > 0 for pid in eligible):
            weights = {
                p.path_id: scores[p.path_id] if p.path_id in eligible else 0.0 for p in paths
            }
            how = f"weights ∝ S over eligible {eligible}"
        else:
            best = max(eligible, key=lambda pid: (scores[pid], -pid))
            chosen = [best] if scores[best] > 0 else eligible
            weights = equal_weights(paths, chosen)
            how = f"{chosen} of eligible {eligible} by largest S"
        return Decision(
            weights=weights,
            mode=Mode.FLOWLET,
            scores={p.path_id: scores.get(p.path_id, 0.0) for p in paths},
            reason=f"qos: {note}{how}; S {fmt_scores(scores)}",
        )


@dataclass(frozen=True)
class QosCaParams:
    max_delay_ms: float | None = field(
        default=QosParams.max_delay_ms, metadata=meta(QosParams, "max_delay_ms")
    )
    max_loss: float | None = field(default=QosParams.max_loss, metadata=meta(QosParams, "max_loss"))
    min_rate_mbps: float | None = field(
        default=QosParams.min_rate_mbps, metadata=meta(QosParams, "min_rate_mbps")
    )
    jitter_window: int = field(
        default=QosParams.jitter_window, metadata=meta(QosParams, "jitter_window")
    )
    loss_window_init_s: float = field(
        default=QosParams.loss_window_init_s, metadata=meta(QosParams, "loss_window_init_s")
    )
    loss_window_min_s: float = field(
        default=QosParams.loss_window_min_s, metadata=meta(QosParams, "loss_window_min_s")
    )
    loss_window_max_s: float = field(
        default=QosParams.loss_window_max_s, metadata=meta(QosParams, "loss_window_max_s")
    )
    min_rto_ms: float = field(default=QosParams.min_rto_ms, metadata=meta(QosParams, "min_rto_ms"))
    default_srtt_ms: float = field(
        default=QosParams.default_srtt_ms, metadata=meta(QosParams, "default_srtt_ms")
    )
    max_offset_us: float = field(
        default=100000.0,
        metadata={
            "min": 0.0,
            "max": 1e8,
            "doc": "offset of a path without headroom (S = 0), and the largest offset (µs)",
        },
    )
    epsilon_us: float = field(default=CaCost.epsilon_us, metadata=EPSILON_META)
    max_age_ms: float = field(default=CaCost.max_age_ms, metadata=MAX_AGE_META)

    def __post_init__(self) -> None:
        if self.loss_window_min_s > self.loss_window_max_s:
            raise FieldError("loss_window_min_s", "must be <= loss_window_max_s")


@register
class QosCa(_QosScore[QosCaParams]):
    """The QoS score as the cost of the congestion-aware data plane (module docstring); the
    RTT and loss histories are the weight-based policy's."""

    name = "qos-ca"
    Params = QosCaParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        prm = self.params
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive(paths, CaCost(epsilon_us=prm.epsilon_us, max_age_ms=prm.max_age_ms))
        q, eligible, note = self.assess(alive, now)
        cap_ms = prm.max_offset_us / 1000.0
        stretched = {
            pid: min(cap_ms, v.delay_ms / v.headroom) if v.headroom > 0 else cap_ms
            for pid, v in q.items()
        }
        floor = min(stretched[pid] for pid in eligible)
        d_ref = sum(stretched[pid] for pid in eligible) / len(eligible)
        chosen = [q[pid] for pid in eligible]
        qdelay = sum((1 - v.loss) * (v.rounds + 0.5) for v in chosen) / len(chosen)
        loss_coef = sum(
            10.0 * (v.timeout_ms - v.srtt_ms / 2 + v.rounds * (v.timeout_ms - v.srtt_ms))
            for v in chosen
        ) / len(chosen)
        ca_paths = {}
        for p in alive:
            pid = p.path_id
            ref = None
            if p.capacity_mbps and stretched[pid] > 0:
                ref = p.capacity_mbps * d_ref / stretched[pid]
            offset = min(prm.max_offset_us, max(0.0, (stretched[pid] - floor) * 1000.0))
            if q[pid].headroom <= 0:
                offset = prm.max_offset_us
            ca_paths[pid] = CaPath(offset, ref)
        cost = CaCost(
            qdelay_coef=qdelay,
            loss_coef_us=max(0.0, loss_coef),
            util_coef_us=d_ref * 1000.0,
            epsilon_us=prm.epsilon_us,
            max_age_ms=prm.max_age_ms,
            paths=ca_paths,
        )
        why = (
            f"{note}eligible {eligible}; offsets from D = delay/headroom = 1/S ms "
            f"{fmt_scores(stretched)}; c_qdelay, c_loss = slopes of eq. 2; "
            f"util term D_p·util (c_util = mean D); "
            f"S {fmt_scores({k: v.score for k, v in q.items()})}"
        )
        return ca_decision(self.name, paths, eligible, cost, why)
