"""The inputs of a path's estimators and the sliding windows they keep (pure, no I/O).

Inputs, all from the switches:
- `PathReport`: the egress edge switch's sampled report of one tagged packet
  (digest `path_report_t`): the packet's path and sequence number, the tag's
  time stamp from the ingress edge's clock (`tx_ts`, µs), the egress edge's own
  time stamp (`rx_ts`, µs), and the path's cumulative counters at the egress
  (packets, bytes, packets lost by sequence gaps, packets that came late).
  The counters are 32-bit and wrap; differences are taken modulo 2^32.
- RTT samples (ms) measured at the ingress edge (data segment -> its ACK),
  from its `rtt_report_t` digests, which also carry the path's cumulative
  count of TCP retransmissions seen there (32-bit, wraps) and its bytes in
  flight (sent minus acknowledged, an approximation: p4src/include/rtt_monitor.p4).

`PathWindows` takes them in time order: path reports become points of unwrapped
cumulative counters on the egress clock, RTT samples update srtt / rttvar (RFC 6298 §2:
alpha = 1/8, beta = 1/4; first sample R: srtt = R, rttvar = R/2) and join a window, RTT
reports' retransmission counts are unwrapped into one. Each window keeps `window_s` of
history; the one-way delay and RTT minima are kept as monotone queues (O(1) per sample).
The estimates read from these windows are `estimators.PathEstimator`'s.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Final

from mpsched.controller.model.reports import PathReport
from mpsched.controller.telemetry.config import PROBE_INTERVAL_S, sender_busy

WRAP32 = 1 << 32
SRTT_ALPHA = 1 / 8
RTTVAR_BETA = 1 / 4


@dataclass(frozen=True)
class EstimatorSettings:
    window_s: float = 5.0  # rtt min/max, loss, goodput, capacity, owd minimum
    dead_after_s: float = 1.0  # no report for this long: the path counts as dead
    probe_interval_s: float | None = PROBE_INTERVAL_S  # the senders' probes (sender_busy)
    history: int = 120  # snapshots kept per path for GET …/telemetry (at most)
    # snapshots kept over all paths together: a fabric's many paths each keep a share
    # (history.history_keep; 500 000 packed snapshots are about 80 MB)
    history_budget: int = 500_000
    # snapshots taken per telemetry period at most: with more paths each is recorded in turn,
    # about every paths / this periods, so the recorder's time under the controller's lock
    # stays bounded on a large fabric (64 leaves x 4 spines: 16 128 paths, each every 4-5 s)
    history_per_period: int = 4000
    stale_after_s: float = 1.0  # no RTT report for this long: srtt etc. start to age
    age_tau_s: float = 2.0  # time constant of that aging towards the neutral prior


def wrap_delta(new: int, old: int, modulus: int = WRAP32) -> int:
    """new - old for a counter that wraps at `modulus` (assumes < one wrap in between)."""
    return (new - old) % modulus


def _signed(delta: int) -> int:
    """A wrapped difference read as signed (a late packet can lower the lost count)."""
    return delta - WRAP32 if delta >= WRAP32 // 2 else delta


# One report's point: cumulative counters on the egress clock, a plain tuple (egress time s,
# packets unwrapped, bytes, lost, reordered, flow_ooo, owd_us) read by these indices. A tuple
# of numbers only is one the garbage collector stops tracking: a fabric's hundreds of
# thousands of window points (every path's last window_s) would otherwise lengthen every full
# collection, which paused the control loop for hundreds of ms at 64 leaves
# (docs/results/scale.md).
_Point = tuple[float, int, int, int, int, int, int]
_T: Final = 0
_PACKETS: Final = 1
_BYTES: Final = 2
_LOST: Final = 3
_REORDERED: Final = 4
_FLOW_OOO: Final = 5
_OWD_US: Final = 6


@dataclass
class PathWindows:
    """One path's windows; feed it reports and RTT samples in time order."""

    path_id: int
    settings: EstimatorSettings = field(default_factory=EstimatorSettings)
    srtt_ms: float | None = None
    rttvar_ms: float | None = None
    last_report_at: float | None = None
    last_rtt_at: float | None = None
    _points: deque[_Point] = field(default_factory=deque)
    # the window's points of increasing owd_us, each the least from its time on: the first is
    # the window's minimum (O(1) instead of a scan of the window per estimate)
    _owd_min: deque[_Point] = field(default_factory=deque)
    _seen: int = 0  # points added since the start (the key of PathEstimator's capacity cache)
    _rtts: deque[tuple[float, float]] = field(default_factory=deque)
    _rtt_min: deque[tuple[float, float]] = field(default_factory=deque)  # as _owd_min
    _rtt_max: deque[tuple[float, float]] = field(default_factory=deque)  # likewise, the most
    busy_at: float | None = None  # received_at of the last report that showed the path busy
    _retrans: deque[tuple[float, int]] = field(default_factory=deque)  # (at, unwrapped)
    _last_retrans_raw: int | None = None
    inflight: int | None = None
    _last_raw: PathReport | None = None

    def add_report(self, r: PathReport) -> None:
        t = r.rx_ts / 1e6
        prev = self._points[-1] if self._points else None
        last = self._last_raw
        if prev is None or last is None or r.rx_ts < last.rx_ts:
            # first report, or the egress switch restarted (its clock went back): start over
            self._points.clear()
            self._owd_min.clear()
            point: _Point = (t, 0, 0, 0, 0, 0, r.rx_ts - r.tx_ts)
        else:
            point = (
                t,
                prev[_PACKETS] + wrap_delta(r.rx_packets, last.rx_packets),
                prev[_BYTES] + wrap_delta(r.rx_bytes, last.rx_bytes),
                prev[_LOST] + _signed(wrap_delta(r.lost, last.lost)),
                prev[_REORDERED] + wrap_delta(r.reordered, last.reordered),
                prev[_FLOW_OOO] + wrap_delta(r.flow_ooo, last.flow_ooo),
                r.rx_ts - r.tx_ts,
            )
        if last is not None and prev is not None and r.rx_ts > last.rx_ts:
            tagged = wrap_delta(r.seq, last.seq)
            if sender_busy(tagged, (r.rx_ts - last.rx_ts) / 1e6, self.settings.probe_interval_s):
                self.busy_at = r.received_at
        self._points.append(point)
        self._seen += 1
        while self._owd_min and self._owd_min[-1][_OWD_US] >= point[_OWD_US]:
            self._owd_min.pop()
        self._owd_min.append(point)
        self._last_raw = r
        self.last_report_at = r.received_at
        cutoff = t - self.settings.window_s
        while self._points and self._points[0][_T] < cutoff:
            self._points.popleft()
        while self._owd_min and self._owd_min[0][_T] < cutoff:
            self._owd_min.popleft()

    def add_rtt(self, rtt_ms: float, at: float) -> None:
        """One RTT sample (RFC 6298 §2.2/2.3 smoothing; window for min/max)."""
        if not math.isfinite(rtt_ms) or rtt_ms < 0:
            return
        if self.srtt_ms is None or self.rttvar_ms is None:
            self.srtt_ms, self.rttvar_ms = rtt_ms, rtt_ms / 2
        else:
            self.rttvar_ms = (1 - RTTVAR_BETA) * self.rttvar_ms + RTTVAR_BETA * abs(
                self.srtt_ms - rtt_ms
            )
            self.srtt_ms = (1 - SRTT_ALPHA) * self.srtt_ms + SRTT_ALPHA * rtt_ms
        self._rtts.append((at, rtt_ms))
        while self._rtt_min and self._rtt_min[-1][1] >= rtt_ms:
            self._rtt_min.pop()
        self._rtt_min.append((at, rtt_ms))
        while self._rtt_max and self._rtt_max[-1][1] <= rtt_ms:
            self._rtt_max.pop()
        self._rtt_max.append((at, rtt_ms))
        self.last_rtt_at = at
        cutoff = at - self.settings.window_s
        while self._rtts and self._rtts[0][0] < cutoff:
            self._rtts.popleft()
        for extreme in (self._rtt_min, self._rtt_max):
            while extreme and extreme[0][0] < cutoff:
                extreme.popleft()

    def rtt_min_ms(self) -> float | None:
        """The window's least RTT sample (O(1))."""
        return self._rtt_min[0][1] if self._rtt_min else None

    def rtt_max_ms(self) -> float | None:
        """The window's greatest RTT sample (O(1): every control step reads it)."""
        return self._rtt_max[0][1] if self._rtt_max else None

    def add_rtt_report(self, retrans: int, inflight_bytes: int, at: float) -> None:
        """The TCP state of one RTT report: cumulative retransmissions (32-bit, wraps) and
        bytes in flight (the RTT sample itself goes to add_rtt)."""
        if self._last_retrans_raw is None or not self._retrans:
            total = 0
        else:
            total = self._retrans[-1][1] + wrap_delta(retrans, self._last_retrans_raw)
        self._retrans.append((at, total))
        self._last_retrans_raw = retrans
        self.inflight = inflight_bytes
        while self._retrans and self._retrans[0][0] < at - self.settings.window_s:
            self._retrans.popleft()
