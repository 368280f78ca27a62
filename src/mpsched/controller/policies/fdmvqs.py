"""FD-MVQS: failure-aware, delay-predicted multipath virtual-queue scheduling (FD-MVQS).

The paper's equations (TFE, CTADP, MVQS), their reconstruction (docs/scheduling.md, "FD-MVQS")
and the pure functions computing them are in `fdmvqs_math`; this module is the policy that
feeds them.

In-network reading (Mode.VQ, once per control period):
- R_p: srtt_ms now / srtt_ms at the previous period (1.0 before two readings).
- W_p: `inflight_bytes` (the in-network swnd) over the mean of the path's recorded peaks. A
  peak is recorded when the in-flight reading falls by more than `peak_drop` (a fraction)
  from one period to the next: the previous reading was the window "before dropping". The
  `peaks_k` most recent peaks are kept ("top-k" read as the latest k, so that the reference
  follows a path whose capacity fell; the paper's recursive mean, eq. 5, is the same mean).
  W_p = 1.0 (neutral: at its usual peak) while no peak or no in-flight reading exists.
- p̂_p: the egress's `loss_rate`. This IS the geometric MLE over the window's loss
  intervals: with K losses and Σ n_k packets received, K / (K + Σ n_k) = lost / (lost +
  received), which is how telemetry.PathEstimator.loss_rate computes it; `mle_loss` is the
  paper's form on explicit intervals. Unmeasured: 0.
- x_p (reconstructed; the paper's combination is lost): x_p = R_p · W_p + loss_gain · p̂_p.
  A steady path (R = 1) at its usual peak window (W = 1) without loss has x = 1 = a by
  default, i.e. F = 0.5; a rising RTT near the window peak or loss push F towards 1 (the
  paper's a, b, k values (Section 5.1) are lost; the defaults here are chosen so).
- CTADP runs on `owd_series_ms` (one-way delay from the tag time stamps). Those compare two
  switches' clocks, so every path's series carries the same unknown offset (and may be <= 0):
  before the log, all series are shifted by one common constant so that the smallest sample
  over all paths is 1 ms, and the shift is undone after the prediction; the paths' PADs
  then differ by the real difference of their delays. PAD_p is reported relative to the
  smallest PAD (only differences matter for argmin T). If any alive path has no OWD series,
  every path uses srtt_p / 2 instead (one basis for all). The prediction is clamped to the
  series' range widened by that range on both sides (a guard against a degenerate fit).
  While a series is shorter than (m-1)·τ + k + 1 samples (not k neighbours with a
  successor), the prediction is the EWMA (`ewma_alpha`) of the series.
- MVQS lives in the data plane: VQ_p counts bytes assigned and drains at cap_p; a new
  flowlet goes to argmin T_p. The data plane computes the continuous stand-in
      T_p = pad_us                                          if VQ_p <= bdp_p
      T_p = pad_us + (VQ_p - bdp_p) · us_per_kbyte / 1024    otherwise,
      us_per_kbyte = srtt_p[µs] · 1024 / (w_p · bdp_p)
  instead of ceil(VQ_p / (w_p · bdp_p)) · srtt_p (no division or ceiling in the pipeline;
  it grows by srtt_p per w_p · bdp_p bytes like the paper's, but from 0 at VQ = bdp rather
  than stepping to ceil(1 / w_p) · srtt_p there). `mvqs_choose` is the reference.
- Neutral fills: srtt unknown -> mean srtt of the alive paths that have one, else
  `default_srtt_ms`; capacity unknown -> the path's availability
  (`availability.availability_mbps`: its goodput while it holds a standing queue, else the
  mean of the other paths' capacities; not its bare goodput, which on a lightly used path is
  the demand and would make its BDP and drain rate tiny), else `default_capacity_mbps`.
- Weights: equal over the alive paths (the data plane's eligible set for the argmin).

Congestion-aware variant ``fdmvqs-ca`` (Mode.CA; `docs/scheduling.md`): the time factor
T_p = PAD_p + queue term becomes the cost, with the same F_p, w_p and PAD_p:
- offset_p = PAD_p (µs, relative to the smallest);
- the queue term ⌈VQ/(w·bdp)⌉ · srtt_p grows by srtt_p / w_p per window of queued data; the
  switch's utilisation (delivered rate / capacity) stands in for the queue's fill, so the
  utilisation term is srtt_p · util_p / w_p: c_util = srtt_ref (the mean srtt of the alive
  paths, µs) and path p's reference capacity = cap_p · w_p · srtt_ref / srtt_p (a path whose
  failure estimate F_p is high, w_p small, fills sooner);
- `qdelay_coef` (default 1) on the live queueing delay: PAD predicts the delay from the
  one-way-delay series, the switch adds what has built up since;
- `loss_coef_us` on the live loss (TFE counts loss through F_p, once per period);
- weights 1 on every alive path.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode, VqPathParams
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.availability import availability_mbps
from mpsched.controller.policies.base import Policy, equal_weights, fmt_scores, no_alive_decision
from mpsched.controller.policies.fdmvqs_math import (
    ctadp_predict,
    ewma,
    mle_loss,
    mvqs_choose,
    phase_space,
    rtt_trend,
    sigmoid_factor,
    tfe_x,
    time_factor_us,
    vq_path_params,
    window_factor,
    window_state,
)
from mpsched.controller.policies.paper_ca import (
    EPSILON_META,
    MAX_AGE_META,
    ca_decision,
    no_alive,
)
from mpsched.controller.policies.registry import register

__all__ = [
    "FdMvqs",
    "FdMvqsCa",
    "FdmvqsCaParams",
    "FdmvqsParams",
    "ctadp_predict",
    "ewma",
    "mle_loss",
    "mvqs_choose",
    "phase_space",
    "rtt_trend",
    "sigmoid_factor",
    "tfe_x",
    "time_factor_us",
    "vq_path_params",
    "window_factor",
    "window_state",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FdmvqsParams:
    a: float = field(
        default=1.0, metadata={"min": -100.0, "max": 100.0, "doc": "TFE offset a of the sigmoid"}
    )
    b: float = field(
        default=5.0, metadata={"min": 0.0, "max": 1000.0, "doc": "TFE sensitivity b of the sigmoid"}
    )
    loss_gain: float = field(
        default=10.0,
        metadata={"min": 0.0, "max": 1000.0, "doc": "weight of the loss rate in x_p"},
    )
    beta_md: float = field(
        default=0.5,
        metadata={"min": 0.0, "max": 1.0, "doc": "β_md: multiplicative decrease (MPTCP: 0.5)"},
    )
    peaks_k: int = field(
        default=5, metadata={"min": 1, "max": 100, "doc": "k: in-flight peaks averaged for W_p"}
    )
    peak_drop: float = field(
        default=0.3,
        metadata={
            "min": 0.0,
            "max": 1.0,
            "doc": "a fall of the in-flight reading by more than this fraction records a peak",
        },
    )
    embed_m: int = field(
        default=3, metadata={"min": 1, "max": 20, "doc": "CTADP embedding dimension m"}
    )
    embed_tau: int = field(default=1, metadata={"min": 1, "max": 20, "doc": "CTADP delay τ"})
    neighbours: int = field(
        default=4, metadata={"min": 1, "max": 100, "doc": "CTADP k nearest neighbours"}
    )
    lam: float = field(
        default=1.0, metadata={"min": 0.0, "max": 1000.0, "doc": "CTADP λ of the weights"}
    )
    ewma_alpha: float = field(
        default=0.125,
        metadata={"min": 0.0, "max": 1.0, "doc": "EWMA gain while the OWD series is short"},
    )
    series_len: int = field(
        default=64, metadata={"min": 2, "max": 10000, "doc": "latest OWD samples used by CTADP"}
    )
    default_srtt_ms: float = field(
        default=50.0,
        metadata={"min": 0.001, "max": 60000.0, "doc": "srtt when no alive path has one"},
    )
    default_capacity_mbps: float = field(
        default=10.0,
        metadata={
            "min": 0.001,
            "max": 1e6,
            "doc": "capacity when neither it nor an availability is known",
        },
    )


# -- the policy -------------------------------------------------------------------


@register
class FdMvqs(Policy):
    name = "fdmvqs"
    Params = FdmvqsParams

    def __init__(self, params: FdmvqsParams | None = None) -> None:
        super().__init__(params)
        self._srtt_prev: dict[int, float] = {}
        self._inflight_prev: dict[int, int] = {}
        self._peaks: dict[int, deque[int]] = {}

    def factor(self, p: PathState) -> float:
        """Update this path's history and return F_p."""
        pid, prm = p.path_id, self.params
        r = rtt_trend(p.srtt_ms, self._srtt_prev.get(pid))
        if p.srtt_ms is not None:
            self._srtt_prev[pid] = p.srtt_ms
        peaks = self._peaks.setdefault(pid, deque(maxlen=prm.peaks_k))
        prev = self._inflight_prev.get(pid)
        if p.inflight_bytes is not None:
            if prev is not None and p.inflight_bytes < (1 - prm.peak_drop) * prev:
                peaks.append(prev)
            self._inflight_prev[pid] = p.inflight_bytes
        w = window_state(p.inflight_bytes, list(peaks))
        loss = p.loss_rate if p.loss_rate is not None else 0.0
        return sigmoid_factor(tfe_x(r, w, loss, prm.loss_gain), prm.a, prm.b)

    def predicted_delays(self, alive: Sequence[PathState], srtt: Mapping[int, float]) -> dict:
        """PAD_p in ms relative to the smallest, and the basis used."""
        prm = self.params
        series = {p.path_id: list(p.owd_series_ms[-prm.series_len :]) for p in alive}
        if all(series.values()):
            low = min(min(s) for s in series.values())
            shift = 1.0 - low
            pred = {
                pid: ctadp_predict(
                    [x + shift for x in s],
                    prm.embed_m,
                    prm.embed_tau,
                    prm.neighbours,
                    prm.lam,
                    prm.ewma_alpha,
                )
                - shift
                for pid, s in series.items()
            }
            basis = "CTADP on OWD"
        else:
            pred = {pid: srtt[pid] / 2 for pid in series}
            basis = "srtt/2 (an OWD series is missing)"
            log.debug(
                "fdmvqs: PAD from srtt/2: no OWD series for %s",
                [k for k, s in series.items() if not s],
            )
        base = min(pred.values())
        return {"pad": {pid: v - base for pid, v in pred.items()}, "basis": basis}

    def capacities(self, alive: Sequence[PathState]) -> dict[int, float]:
        """cap_p: the capacity, else the availability, else default_capacity_mbps."""
        avail = availability_mbps(alive)
        return {
            p.path_id: next(
                c
                for c in (p.capacity_mbps, avail[p.path_id], self.params.default_capacity_mbps)
                if c is not None and c > 0
            )
            for p in alive
        }

    def srtts(self, alive: Sequence[PathState]) -> dict[int, float]:
        """srtt_p with the neutral fill (mean of the known, else default_srtt_ms)."""
        known = [p.srtt_ms for p in alive if p.srtt_ms is not None and p.srtt_ms > 0]
        fill = sum(known) / len(known) if known else self.params.default_srtt_ms
        return {
            p.path_id: p.srtt_ms if p.srtt_ms is not None and p.srtt_ms > 0 else fill for p in alive
        }

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.VQ)
        prm = self.params
        srtt = self.srtts(alive)
        pads = self.predicted_delays(alive, srtt)
        caps = self.capacities(alive)
        factors: dict[int, float] = {}
        vq: dict[int, VqPathParams] = {}
        for p in alive:
            f = factors[p.path_id] = self.factor(p)
            cap = caps[p.path_id]
            bdp = cap * srtt[p.path_id] * 125.0
            vq[p.path_id] = vq_path_params(
                pads["pad"][p.path_id], srtt[p.path_id], bdp, window_factor(f, prm.beta_md), cap
            )
        scores = {p.path_id: factors.get(p.path_id, 1.0) for p in paths}
        pad_text = fmt_scores({pid: v.pad_us / 1000 for pid, v in vq.items()})
        return Decision(
            weights=equal_weights(paths, [p.path_id for p in alive]),
            mode=Mode.VQ,
            scores=scores,
            reason=(
                f"fdmvqs: argmin T_p in the data plane over {sorted(vq)}; F {fmt_scores(factors)};"
                f" PAD ms ({pads['basis']}) {pad_text}"
            ),
            vq=vq,
        )


@dataclass(frozen=True)
class FdmvqsCaParams(FdmvqsParams):
    qdelay_coef: float = field(
        default=1.0,
        metadata={"min": 0.0, "max": 1000.0, "doc": "µs of cost per µs of live queueing delay"},
    )
    loss_coef_us: float = field(
        default=CaCost.loss_coef_us,
        metadata={"min": 0.0, "max": 1e8, "doc": "µs of cost per 1 % of live loss"},
    )
    epsilon_us: float = field(default=CaCost.epsilon_us, metadata=EPSILON_META)
    max_age_ms: float = field(default=CaCost.max_age_ms, metadata=MAX_AGE_META)


@register
class FdMvqsCa(FdMvqs):
    """FD-MVQS's time factor as the cost of the congestion-aware data plane (module
    docstring); F_p's history is the weight-based policy's."""

    name = "fdmvqs-ca"
    Params = FdmvqsCaParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        prm = self.params
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive(paths, CaCost(epsilon_us=prm.epsilon_us, max_age_ms=prm.max_age_ms))
        srtt = self.srtts(alive)
        pads = self.predicted_delays(alive, srtt)
        caps = self.capacities(alive)
        srtt_ref = sum(srtt.values()) / len(srtt)
        factors: dict[int, float] = {}
        windows: dict[int, float] = {}
        ca_paths: dict[int, CaPath] = {}
        for p in alive:
            pid = p.path_id
            factors[pid] = self.factor(p)
            windows[pid] = max(1e-6, window_factor(factors[pid], prm.beta_md))
            ca_paths[pid] = CaPath(
                offset_us=max(0.0, pads["pad"][pid] * 1000.0),
                capacity_mbps=caps[pid] * windows[pid] * srtt_ref / srtt[pid],
            )
        cost = CaCost(
            qdelay_coef=prm.qdelay_coef,
            loss_coef_us=prm.loss_coef_us,
            util_coef_us=srtt_ref * 1000.0,
            epsilon_us=prm.epsilon_us,
            max_age_ms=prm.max_age_ms,
            paths=ca_paths,
        )
        why = (
            f"offsets = PAD ({pads['basis']}); util term srtt_p·util/w_p "
            f"(c_util = mean srtt, capacity·w·srtt_ref/srtt); F {fmt_scores(factors)}; "
            f"w {fmt_scores(windows)}"
        )
        return ca_decision(self.name, paths, [p.path_id for p in alive], cost, why)
