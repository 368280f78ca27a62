"""FD-MVQS's equations as pure functions: TFE, CTADP and the MVQS time factor.

From FD-MVQS: failure-aware, delay-predicted multipath virtual-queue scheduling (FD-MVQS).
Paper: Qin, Wang, Gao, Zhong, "Failure-Aware and Delay-Predicted Multipath Virtual Queue
Scheduling for Multimedia Transmission in Edge IoT", Mobile Information Systems 2020,
doi:10.1155/2020/6673134. Its equations are reconstructed from the text (docs/scheduling.md,
"FD-MVQS"):

TFE, transmission failure estimation (Section 4.1, Algorithm 1):
    F_p = 1 / (1 + exp(-b · (x_p - a)))                         (eq. 1: "a" offset, "b" sensitivity)
  x_p combines the RTT parameter R_p = SRTT_now / SRTT_last (eq. 2-3), the swnd parameter
  W_p = swnd_p / mean of the top-k swnd values reached before a drop (eq. 4-5) and the loss
  rate p̂_p, estimated by maximum likelihood from loss-interval samples n_1..n_K (segments
  delivered between two losses, geometric: P(n) = (1-p)^n · p), whose maximiser is
  p̂ = K / (K + Σ n_k).
CTADP, chaos-theory arrival-delay prediction (Section 4.2): the log arrival-delay series
  y_t = ln(AD_t) is embedded in phase space Y_i = (y_i, y_{i+τ}, ..., y_{i+(m-1)τ}); the k
  nearest neighbours Y_i of the latest phase point (distance d_i, minimum d_min) get weights
  w_i = exp(-λ (d_i - d_min)) / Σ_j exp(-λ (d_j - d_min)); a weighted first-order fit
  Y_{i+1} ≈ a·e + b·Y_i (least squares) predicts the next phase point, whose last component
  is the predicted log delay; PAD = exp of it.
MVQS, multipath virtual-queue scheduling (Section 4.3, Algorithm 2): time factor
  T_p = PAD_p when VQ_p <= bdp_p, else ceil(VQ_p / (w_p · bdp_p)) · srtt_p + PAD_p, with the
  window factor w_p = 1 - F_p · (1 - β_md), β_md = 0.5; a segment goes to
  argmin T_p.

The data plane's MVQS (mvqs.p4) computes a continuous stand-in for the time factor,
    T_p = pad_us                                          if VQ_p <= bdp_p
    T_p = pad_us + (VQ_p - bdp_p) · us_per_kbyte / 1024    otherwise,
    us_per_kbyte = srtt_p[µs] · 1024 / (w_p · bdp_p)
(`time_factor_us`, `vq_path_params`); `mvqs_choose` is the reference of its argmin. How the
policy reads each input in the network is `fdmvqs`'s module docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from mpsched.controller.model.decision import VqPathParams

# -- TFE ------------------------------------------------------------------------


def sigmoid_factor(x: float, a: float, b: float) -> float:
    """F = 1 / (1 + exp(-b (x - a)))."""
    z = -b * (x - a)
    if z > 700:
        return 0.0
    return 1.0 / (1.0 + math.exp(z))


def rtt_trend(srtt_now: float | None, srtt_prev: float | None) -> float:
    """R = srtt_now / srtt_prev; 1.0 when either is unknown or srtt_prev is 0."""
    if srtt_now is None or srtt_prev is None or srtt_prev <= 0:
        return 1.0
    return srtt_now / srtt_prev


def window_state(inflight: float | None, peaks: Sequence[float]) -> float:
    """W = inflight / mean(peaks); 1.0 when either is unknown (or the mean is 0)."""
    if inflight is None or not peaks:
        return 1.0
    mean = sum(peaks) / len(peaks)
    return inflight / mean if mean > 0 else 1.0


def mle_loss(intervals: Sequence[int]) -> float | None:
    """Geometric MLE from loss intervals n_k (packets delivered between losses):
    p̂ = K / (K + Σ n_k); None without samples."""
    if not intervals:
        return None
    k = len(intervals)
    return k / (k + sum(intervals))


def tfe_x(r: float, w: float, loss: float, loss_gain: float) -> float:
    """x_p = R_p · W_p + loss_gain · p̂_p (reconstructed)."""
    return r * w + loss_gain * loss


def window_factor(f: float, beta_md: float = 0.5) -> float:
    """w_p = 1 - F_p · (1 - β_md)."""
    return 1.0 - f * (1.0 - beta_md)


# -- CTADP ----------------------------------------------------------------------


def ewma(series: Sequence[float], alpha: float) -> float:
    """s_0 = x_0, s_t = (1 - alpha) s_{t-1} + alpha x_t; the last s."""
    s = series[0]
    for x in series[1:]:
        s = (1 - alpha) * s + alpha * x
    return s


def phase_space(y: Sequence[float], m: int, tau: int) -> list[tuple[float, ...]]:
    """Y_i = (y_i, y_{i+τ}, ..., y_{i+(m-1)τ}) for i = 0 .. N-(m-1)τ-1."""
    count = len(y) - (m - 1) * tau
    return [tuple(y[i + j * tau] for j in range(m)) for i in range(max(0, count))]


def ctadp_predict(
    series: Sequence[float],
    m: int = 3,
    tau: int = 1,
    k: int = 4,
    lam: float = 1.0,
    ewma_alpha: float = 0.125,
) -> float:
    """The next value of a positive series (oldest first) by CTADP; EWMA while it is short."""
    if not series:
        raise ValueError("empty series")
    if min(series) <= 0:
        raise ValueError("CTADP needs a positive series (it takes logarithms)")
    if len(series) < (m - 1) * tau + k + 1:
        return ewma(series, ewma_alpha)
    y = [math.log(x) for x in series]
    points = phase_space(y, m, tau)
    centre = points[-1]
    dist = {i: math.dist(points[i], centre) for i in range(len(points) - 1)}
    nearest = sorted(dist, key=lambda i: (dist[i], -i))[:k]  # ties: the more recent
    d_min = dist[nearest[0]]
    raw = {i: math.exp(-lam * (dist[i] - d_min)) for i in nearest}
    total = sum(raw.values())
    sw = sx = sy = sxx = sxy = 0.0
    for i in nearest:
        w = raw[i] / total
        for xj, yj in zip(points[i], points[i + 1], strict=True):
            sw += w
            sx += w * xj
            sy += w * yj
            sxx += w * xj * xj
            sxy += w * xj * yj
    det = sw * sxx - sx * sx
    slope = (sw * sxy - sx * sy) / det if abs(det) > 1e-12 else 0.0
    intercept = (sy - slope * sx) / sw
    pred = intercept + slope * centre[-1]
    lo, hi = min(y), max(y)
    span = hi - lo
    return math.exp(min(hi + span, max(lo - span, pred)))


# -- MVQS -----------------------------------------------------------------------


def time_factor_us(vq_bytes: int, p: VqPathParams) -> float:
    """The data plane's T_p (µs) for a virtual queue of vq_bytes."""
    if vq_bytes <= p.bdp_bytes:
        return float(p.pad_us)
    return p.pad_us + (vq_bytes - p.bdp_bytes) * p.us_per_kbyte / 1024


def mvqs_choose(vq_bytes: Mapping[int, int], vqp: Mapping[int, VqPathParams]) -> int:
    """The path the data plane picks for a new flowlet: argmin T_p (ties: lowest id);
    a path missing from vq_bytes has an empty VQ."""
    if not vqp:
        raise ValueError("no path parameters")
    return min(sorted(vqp), key=lambda pid: time_factor_us(vq_bytes.get(pid, 0), vqp[pid]))


def vq_path_params(
    pad_ms: float, srtt_ms: float, bdp_bytes: float, w: float, capacity_mbps: float
) -> VqPathParams:
    """The integers the data plane needs for one path."""
    bdp = max(1, round(bdp_bytes))
    return VqPathParams(
        pad_us=max(0, round(pad_ms * 1000)),
        bdp_bytes=bdp,
        us_per_kbyte=max(0, round(srtt_ms * 1000 * 1024 / (max(w, 1e-6) * bdp))),
        drain_bytes_per_ms=max(1, round(capacity_mbps * 125)),
    )
