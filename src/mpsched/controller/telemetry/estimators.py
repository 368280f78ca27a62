"""Per-path estimators fed by the data plane's telemetry (pure, no I/O).

Inputs (`windows`): the egress edge's path reports (`PathReport`: sequence number, the
ingress edge's tag time stamp and the egress edge's, cumulative packet, byte, loss and
reordering counters, 32-bit, wrapping) and the ingress edge's RTT reports (RTT samples,
cumulative TCP retransmissions, bytes in flight). `windows.PathWindows` keeps them in
sliding windows; `PathEstimator` reads the estimates from those windows.

Estimators (docs/control-loop.md, "The loop around a policy"), each with the time of its last
update:
- srtt / rttvar: RFC 6298 §2 (alpha = 1/8, beta = 1/4; first sample R:
  srtt = R, rttvar = R/2); rtt_min / rtt_max over a sliding window.
- loss: lost / (received + lost) over the window, from counter differences.
- goodput: bytes delivered per second at the egress over the window, timed
  with the egress switch's clock (`rx_ts`), so controller delays do not
  distort it.
- capacity: the highest delivered rate over 1 s intervals in the window, a
  lower bound of the path's capacity (it equals it only while the path is
  saturated; a configured rate is reported next to it).
- one-way delay: `rx_ts - tx_ts` compares two switches' clocks that started
  at different times, so it is only meaningful relative to itself; `owd_ms`
  is reported relative to the minimum seen in the window (= queueing delay
  above the base propagation delay, as FD-MVQS uses it), and the raw series
  keeps the absolute differences.
- retrans: TCP retransmissions the ingress edge saw on the path within the
  window (difference of the cumulative counter between the window's first
  and last RTT report; like `reordered`, a count, not a rate);
  inflight_bytes: the latest reported bytes in flight.
- freshness: seconds since the last report (controller clock); liveness:
  a path is alive while its last report is younger than `dead_after_s`.
- aging of sample-driven estimates (`srtt_aged_ms`, `rttvar_aged_ms`,
  `inflight_aged`): srtt, rttvar and bytes in flight change only with an RTT
  report, which only a path carrying TCP data produces; probes keep loss, goodput
  and one-way delay fresh but not these. Once no RTT report came for
  `stale_after_s`, they age towards a neutral prior: srtt towards the path's base
  RTT (the smallest RTT of its last window: an idle path has no queue), rttvar
  towards half of it (RFC 6298's value for a first sample), each as
  prior + (value - prior) * exp(-(age - stale_after_s) / age_tau_s); bytes in
  flight count 0 (an idle path holds nothing in flight). So the numbers of the
  last busy moment do not decide about a path that has carried nothing since.

The export and liveness settings of the data plane and the probe rule (`TelemetryConfig`,
`sender_busy`, `probe_needed`) are in `config`; they are importable from here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import islice

from mpsched.controller.telemetry.config import (
    BUSY_EXTRA_PACKETS,
    DEAD_AFTER_US,
    PROBE_INTERVAL_S,
    REPORT_BATCH_MAX,
    REPORT_BATCH_US,
    REPORT_INTERVAL_US,
    REPORT_MAX_PPS,
    RTT_REPORT_INTERVAL_US,
    TelemetryConfig,
    probe_needed,
    sender_busy,
)
from mpsched.controller.telemetry.history import History
from mpsched.controller.telemetry.windows import (
    _BYTES,
    _FLOW_OOO,
    _LOST,
    _OWD_US,
    _PACKETS,
    _REORDERED,
    _T,
    RTTVAR_BETA,
    SRTT_ALPHA,
    WRAP32,
    EstimatorSettings,
    PathWindows,
    wrap_delta,
)

__all__ = [
    "AGING_TAUS",
    "BUSY_EXTRA_PACKETS",
    "DEAD_AFTER_US",
    "PROBE_INTERVAL_S",
    "REPORT_BATCH_MAX",
    "REPORT_BATCH_US",
    "REPORT_INTERVAL_US",
    "REPORT_MAX_PPS",
    "RTTVAR_BETA",
    "RTT_REPORT_INTERVAL_US",
    "SRTT_ALPHA",
    "WRAP32",
    "EstimatorSettings",
    "PathEstimator",
    "PathWindows",
    "TelemetryConfig",
    "probe_needed",
    "sender_busy",
    "wrap_delta",
]


# Aging of srtt and rttvar (`_aging`) counts as over after this many time constants (the
# aged value is then within e^-5 < 1 % of its prior): `changes_at` stops asking for steps.
AGING_TAUS = 5.0


@dataclass
class PathEstimator(PathWindows):
    """Everything known about one path; feed it reports and RTT samples in time order
    (`PathWindows`), read its estimates here."""

    _capacity: tuple[int, float | None] | None = None  # (points seen, capacity_mbps) cache
    history: History = field(default_factory=History)

    def retrans(self) -> int | None:
        """Retransmissions seen within the window (None before two RTT reports)."""
        if len(self._retrans) < 2:
            return None
        return self._retrans[-1][1] - self._retrans[0][1]

    def loss_rate(self) -> float | None:
        if len(self._points) < 2:
            return None
        a, b = self._points[0], self._points[-1]
        got, lost = b[_PACKETS] - a[_PACKETS], b[_LOST] - a[_LOST]
        total = got + max(0, lost)
        return max(0.0, lost) / total if total > 0 else None

    def goodput_mbps(self) -> float | None:
        if len(self._points) < 2:
            return None
        a, b = self._points[0], self._points[-1]
        if b[_T] <= a[_T]:
            return None
        return 8 * (b[_BYTES] - a[_BYTES]) / (b[_T] - a[_T]) / 1e6

    def capacity_mbps(self) -> float | None:
        """Highest rate over consecutive stretches of >= 1 s in the window (computed once per
        report: the control loop, the recorder and REST ask for it more often than that)."""
        if self._capacity is None or self._capacity[0] != self._seen:
            self._capacity = (self._seen, self._capacity_scan())
        return self._capacity[1]

    def _capacity_scan(self) -> float | None:
        best: float | None = None
        pts = list(self._points)
        j = 0
        for i in range(len(pts)):
            while j < len(pts) and pts[j][_T] - pts[i][_T] < 1.0:
                j += 1
            if j == len(pts):
                break
            rate = 8 * (pts[j][_BYTES] - pts[i][_BYTES]) / (pts[j][_T] - pts[i][_T]) / 1e6
            best = rate if best is None else max(best, rate)
        return best

    def owd_ms(self) -> float | None:
        """Latest one-way delay above the window's minimum (queueing delay)."""
        if not self._points:
            return None
        return (self._points[-1][_OWD_US] - self._owd_min[0][_OWD_US]) / 1000

    def owd_raw_ms(self) -> float | None:
        """Latest rx_ts - tx_ts (ms): one-way delay plus the edges' common clock offset."""
        return self._points[-1][_OWD_US] / 1000 if self._points else None

    def rtt_min_max_ms(self) -> tuple[float | None, float | None]:
        return self.rtt_min_ms(), self.rtt_max_ms()

    def reordered(self) -> int | None:
        if len(self._points) < 2:
            return None
        return self._points[-1][_REORDERED] - self._points[0][_REORDERED]

    def flow_ooo(self) -> int | None:
        """Packets of this path overtaken within their flow, over the window."""
        if len(self._points) < 2:
            return None
        return self._points[-1][_FLOW_OOO] - self._points[0][_FLOW_OOO]

    def counters(self) -> tuple[float, int, int, int, int] | None:
        """The latest cumulative counters (egress time s, packets, bytes, lost, flow_ooo),
        unwrapped since the first report (restarting with the egress switch); None before
        the first report."""
        if not self._points:
            return None
        p = self._points[-1]
        return p[_T], p[_PACKETS], p[_BYTES], p[_LOST], p[_FLOW_OOO]

    def flow_ooo_total(self) -> int:
        """Cumulative (unwrapped) count since this estimator's first report; restarts
        with the egress switch."""
        return self._points[-1][_FLOW_OOO] if self._points else 0

    def owd_series_ms(self, n: int = 32) -> tuple[float, ...]:
        """The latest n one-way delays above the window minimum (ms), oldest first."""
        if not self._points:
            return ()
        base = self._owd_min[0][_OWD_US]
        latest = list(islice(reversed(self._points), n))
        latest.reverse()
        return tuple([(p[_OWD_US] - base) / 1000 for p in latest])

    def _aging(self, now: float) -> float | None:
        """The factor exp(-(age - stale_after_s) / age_tau_s) of an RTT estimate whose last
        RTT report is older than stale_after_s; None while it is fresh (or never measured)."""
        if self.last_rtt_at is None:
            return None
        over = now - self.last_rtt_at - self.settings.stale_after_s
        if over <= 0:
            return None
        return math.exp(-over / max(1e-9, self.settings.age_tau_s))

    def srtt_aged_ms(self, now: float) -> float | None:
        """srtt, aged towards the base RTT (the last window's minimum) once stale."""
        factor = self._aging(now)
        if self.srtt_ms is None or factor is None:
            return self.srtt_ms
        base, _ = self.rtt_min_max_ms()
        base = self.srtt_ms if base is None else min(base, self.srtt_ms)
        return base + (self.srtt_ms - base) * factor

    def rttvar_aged_ms(self, now: float) -> float | None:
        """rttvar, aged towards half the base RTT once stale."""
        factor = self._aging(now)
        if self.rttvar_ms is None or factor is None or self.srtt_ms is None:
            return self.rttvar_ms
        base, _ = self.rtt_min_max_ms()
        prior = (self.srtt_ms if base is None else min(base, self.srtt_ms)) / 2
        return prior + (self.rttvar_ms - prior) * factor

    def inflight_aged(self, now: float) -> int | None:
        """Bytes in flight; 0 once no RTT report came for stale_after_s."""
        last = self._retrans[-1][0] if self._retrans else None
        if self.inflight is None or last is None:
            return self.inflight
        return 0 if now - last > self.settings.stale_after_s else self.inflight

    def changes_at(self, now: float, age_step_s: float) -> float:
        """When the estimates read at `now` change without another report (math.inf:
        not before one): the liveness verdict flips `dead_after_s` after the last report,
        srtt, rttvar and bytes in flight start to age `stale_after_s` after the last RTT
        report, and while they age (for AGING_TAUS time constants) they move on
        continuously, read again every `age_step_s`. A control step may skip a pair whose
        inputs are unchanged until then (src/mpsched/controller/scheduling/due.py)."""
        cfg = self.settings
        marks = []
        if self.last_report_at is not None:
            marks.append(self.last_report_at + cfg.dead_after_s)
        if self._retrans:
            marks.append(self._retrans[-1][0] + cfg.stale_after_s)
        if self.last_rtt_at is not None:
            stale = self.last_rtt_at + cfg.stale_after_s
            marks.append(stale)
            if stale <= now < stale + AGING_TAUS * cfg.age_tau_s:
                marks.append(now + age_step_s)
        return min((t for t in marks if t > now), default=math.inf)

    def freshness_s(self, now: float) -> float | None:
        return None if self.last_report_at is None else max(0.0, now - self.last_report_at)

    def alive(self, now: float) -> bool | None:
        age = self.freshness_s(now)
        return None if age is None else age < self.settings.dead_after_s

    def snapshot(self, now: float) -> dict:
        rtt_min, rtt_max = self.rtt_min_max_ms()
        return {
            "t": round(now, 3),
            "srtt_ms": _r(self.srtt_ms),
            "rttvar_ms": _r(self.rttvar_ms),
            "rtt_min_ms": _r(rtt_min),
            "rtt_max_ms": _r(rtt_max),
            "loss": _r(self.loss_rate(), 5),
            "goodput_mbps": _r(self.goodput_mbps()),
            "capacity_mbps": _r(self.capacity_mbps()),
            "owd_ms": _r(self.owd_ms()),
            "reordered": self.reordered(),
            "flow_ooo": self.flow_ooo(),
            "retrans": self.retrans(),
            "inflight_bytes": self.inflight,
            "alive": self.alive(now),
            "freshness_s": _r(self.freshness_s(now)),
        }

    def record(self, now: float, keep: int | None = None) -> dict:
        """Take a snapshot into the short history (the controller does this once per period),
        which keeps the last `keep` (default: `settings.history`; the intake passes its share
        of the budget, `history.history_keep`)."""
        snap = self.snapshot(now)
        self.history.append(snap, self.settings.history if keep is None else keep)
        return snap


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)
