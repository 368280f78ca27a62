"""Per-path estimators fed by the data plane's telemetry (pure, no I/O).

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

Estimators (DESIGN.md §4), each with the time of its last update:
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
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from itertools import islice

# Default per-path report interval of the egress edge's path_report_t digests.
REPORT_INTERVAL_US = 10_000
# Default per-path interval of the ingress edge's rtt_report_t digests.
RTT_REPORT_INTERVAL_US = 10_000
# Path liveness: probes per path and switch every PROBE_INTERVAL_S; a path
# from which nothing tagged arrived for DEAD_AFTER_US (5 probe intervals) is
# dead and the edge switch fails its weighted traffic over (failover.p4).
PROBE_INTERVAL_S = 0.010
DEAD_AFTER_US = 50_000
# Path and RTT reports are batched by the switch: one DigestList per REPORT_BATCH_US carries
# every report of that time (P4Runtime DigestEntry max_timeout_ns; BMv2 counts whole ms), so
# the controller handles (and acknowledges) one stream message per switch and interval instead
# of one per path and report. A report waits at most this long; 0 sends each on its own.
REPORT_BATCH_US = 5_000
REPORT_BATCH_MAX = 64  # reports per list at most (a full list goes at once)
# A path carries its sender's traffic ("busy") when, between two reports of its far edge, the
# sender tagged at least this many packets more than its probes account for (one per probe
# interval, plus one): then the traffic itself keeps the far edge's liveness and feedback
# fresh, and the sender's probes onto it may pause (probe_needed).
BUSY_EXTRA_PACKETS = 2

WRAP32 = 1 << 32
SRTT_ALPHA = 1 / 8
RTTVAR_BETA = 1 / 4


@dataclass(frozen=True)
class PathReport:
    """One `path_report_t` digest; the data fields are named like the P4 struct's members."""

    switch: str
    path_id: int
    seq: int
    tx_ts: int  # µs, the ingress edge's clock (when it tagged the packet)
    rx_ts: int  # µs, the egress edge's clock (when it received the packet)
    rx_packets: int
    rx_bytes: int
    lost: int
    reordered: int
    flow_ooo: int  # packets of this path overtaken within their flow (cumulative, wraps)
    received_at: float  # controller's monotonic clock


@dataclass(frozen=True)
class EstimatorSettings:
    window_s: float = 5.0  # rtt min/max, loss, goodput, capacity, owd minimum
    dead_after_s: float = 1.0  # no report for this long: the path counts as dead
    probe_interval_s: float | None = PROBE_INTERVAL_S  # the senders' probes (sender_busy)
    history: int = 120  # snapshots kept per path for GET …/telemetry
    stale_after_s: float = 1.0  # no RTT report for this long: srtt etc. start to age
    age_tau_s: float = 2.0  # time constant of that aging towards the neutral prior


def wrap_delta(new: int, old: int, modulus: int = WRAP32) -> int:
    """new - old for a counter that wraps at `modulus` (assumes < one wrap in between)."""
    return (new - old) % modulus


@dataclass
class _Point:
    """Cumulative counters at one report, on the egress clock (seconds)."""

    t: float
    packets: int  # unwrapped
    bytes: int
    lost: int
    reordered: int
    flow_ooo: int
    owd_us: int


@dataclass
class PathEstimator:
    """Everything known about one path; feed it reports and RTT samples in time order."""

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
    _capacity: tuple[int, float | None] | None = None  # (points seen, capacity_mbps) cache
    _seen: int = 0  # points added since the start (the cache's key)
    _rtts: deque[tuple[float, float]] = field(default_factory=deque)
    _rtt_min: deque[tuple[float, float]] = field(default_factory=deque)  # as _owd_min
    busy_at: float | None = None  # received_at of the last report that showed the path busy
    _retrans: deque[tuple[float, int]] = field(default_factory=deque)  # (at, unwrapped)
    _last_retrans_raw: int | None = None
    inflight: int | None = None
    _last_raw: PathReport | None = None
    history: deque[dict] = field(default_factory=deque)

    # -- inputs ---------------------------------------------------------

    def add_report(self, r: PathReport) -> None:
        t = r.rx_ts / 1e6
        prev = self._points[-1] if self._points else None
        last = self._last_raw
        if prev is None or last is None or r.rx_ts < last.rx_ts:
            # first report, or the egress switch restarted (its clock went back): start over
            self._points.clear()
            self._owd_min.clear()
            point = _Point(t, 0, 0, 0, 0, 0, r.rx_ts - r.tx_ts)
        else:
            point = _Point(
                t,
                prev.packets + wrap_delta(r.rx_packets, last.rx_packets),
                prev.bytes + wrap_delta(r.rx_bytes, last.rx_bytes),
                prev.lost + _signed(wrap_delta(r.lost, last.lost)),
                prev.reordered + wrap_delta(r.reordered, last.reordered),
                prev.flow_ooo + wrap_delta(r.flow_ooo, last.flow_ooo),
                r.rx_ts - r.tx_ts,
            )
        if last is not None and prev is not None and r.rx_ts > last.rx_ts:
            tagged = wrap_delta(r.seq, last.seq)
            if sender_busy(tagged, (r.rx_ts - last.rx_ts) / 1e6, self.settings.probe_interval_s):
                self.busy_at = r.received_at
        self._points.append(point)
        self._seen += 1
        while self._owd_min and self._owd_min[-1].owd_us >= point.owd_us:
            self._owd_min.pop()
        self._owd_min.append(point)
        self._last_raw = r
        self.last_report_at = r.received_at
        cutoff = t - self.settings.window_s
        while self._points and self._points[0].t < cutoff:
            self._points.popleft()
        while self._owd_min and self._owd_min[0].t < cutoff:
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
        self.last_rtt_at = at
        cutoff = at - self.settings.window_s
        while self._rtts and self._rtts[0][0] < cutoff:
            self._rtts.popleft()
        while self._rtt_min and self._rtt_min[0][0] < cutoff:
            self._rtt_min.popleft()

    def rtt_min_ms(self) -> float | None:
        """The window's least RTT sample (O(1))."""
        return self._rtt_min[0][1] if self._rtt_min else None

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

    # -- estimates ------------------------------------------------------

    def retrans(self) -> int | None:
        """Retransmissions seen within the window (None before two RTT reports)."""
        if len(self._retrans) < 2:
            return None
        return self._retrans[-1][1] - self._retrans[0][1]

    def loss_rate(self) -> float | None:
        if len(self._points) < 2:
            return None
        a, b = self._points[0], self._points[-1]
        got, lost = b.packets - a.packets, b.lost - a.lost
        total = got + max(0, lost)
        return max(0.0, lost) / total if total > 0 else None

    def goodput_mbps(self) -> float | None:
        if len(self._points) < 2:
            return None
        a, b = self._points[0], self._points[-1]
        if b.t <= a.t:
            return None
        return 8 * (b.bytes - a.bytes) / (b.t - a.t) / 1e6

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
            while j < len(pts) and pts[j].t - pts[i].t < 1.0:
                j += 1
            if j == len(pts):
                break
            rate = 8 * (pts[j].bytes - pts[i].bytes) / (pts[j].t - pts[i].t) / 1e6
            best = rate if best is None else max(best, rate)
        return best

    def owd_ms(self) -> float | None:
        """Latest one-way delay above the window's minimum (queueing delay)."""
        if not self._points:
            return None
        return (self._points[-1].owd_us - self._owd_min[0].owd_us) / 1000

    def owd_raw_ms(self) -> float | None:
        """Latest rx_ts - tx_ts (ms): one-way delay plus the edges' common clock offset."""
        return self._points[-1].owd_us / 1000 if self._points else None

    def rtt_min_max_ms(self) -> tuple[float | None, float | None]:
        if not self._rtts:
            return None, None
        return self.rtt_min_ms(), max(r for _, r in self._rtts)

    def reordered(self) -> int | None:
        if len(self._points) < 2:
            return None
        return self._points[-1].reordered - self._points[0].reordered

    def flow_ooo(self) -> int | None:
        """Packets of this path overtaken within their flow, over the window."""
        if len(self._points) < 2:
            return None
        return self._points[-1].flow_ooo - self._points[0].flow_ooo

    def counters(self) -> tuple[float, int, int, int, int] | None:
        """The latest cumulative counters (egress time s, packets, bytes, lost, flow_ooo),
        unwrapped since the first report (restarting with the egress switch); None before
        the first report."""
        if not self._points:
            return None
        p = self._points[-1]
        return p.t, p.packets, p.bytes, p.lost, p.flow_ooo

    def flow_ooo_total(self) -> int:
        """Cumulative (unwrapped) count since this estimator's first report; restarts
        with the egress switch."""
        return self._points[-1].flow_ooo if self._points else 0

    def owd_series_ms(self, n: int = 32) -> tuple[float, ...]:
        """The latest n one-way delays above the window minimum (ms), oldest first."""
        if not self._points:
            return ()
        base = self._owd_min[0].owd_us
        latest = list(islice(reversed(self._points), n))
        return tuple((p.owd_us - base) / 1000 for p in reversed(latest))

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

    def record(self, now: float) -> dict:
        """Take a snapshot into the short history (the controller does this once per period)."""
        snap = self.snapshot(now)
        self.history.append(snap)
        while len(self.history) > self.settings.history:
            self.history.popleft()
        return snap


def _signed(delta: int) -> int:
    """A wrapped difference read as signed (a late packet can lower the lost count)."""
    return delta - WRAP32 if delta >= WRAP32 // 2 else delta


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, digits)


@dataclass(frozen=True)
class TelemetryConfig:
    """The data plane's export and liveness settings, installed per path on every switch.

    report_interval_us: at most one path_report_t per path per interval (egress edge).
    rtt_interval_us: at most one rtt_report_t per path per interval (ingress edge).
    probe_interval_s: each agent's probe PacketOuts per path; None = no probes.
    dead_after_us: a path with nothing tagged from it for this long is dead (fails over).
    report_batch_us: path and RTT reports wait up to this long to travel together in one
      DigestList (0: each report in a list of its own, at once).
    probe_idle_only: probe a path only while the switch's own traffic does not keep it
      measured (probe_needed); False: every path every interval.
    """

    report_interval_us: int = REPORT_INTERVAL_US
    rtt_interval_us: int = RTT_REPORT_INTERVAL_US
    probe_interval_s: float | None = PROBE_INTERVAL_S
    dead_after_us: int = DEAD_AFTER_US
    report_batch_us: int = REPORT_BATCH_US
    probe_idle_only: bool = True  # pause a path's probes while its own traffic is busy

    def __post_init__(self) -> None:
        for name in ("report_interval_us", "rtt_interval_us", "dead_after_us"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        batch = self.report_batch_us
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 0:
            raise ValueError(f"report_batch_us must be an integer >= 0, got {batch!r}")
        if self.probe_interval_s is not None and not self.probe_interval_s > 0:
            raise ValueError(f"probe_interval_s must be > 0, got {self.probe_interval_s!r}")


def sender_busy(tagged: int, elapsed_s: float, probe_interval_s: float | None) -> bool:
    """Between two reports `elapsed_s` apart, the sender tagged `tagged` packets onto the path
    (the difference of the reports' sequence numbers): more than its probes can account for
    (one per probe interval, plus one) by BUSY_EXTRA_PACKETS."""
    if elapsed_s <= 0:
        return False
    probes = 0 if probe_interval_s is None else elapsed_s / probe_interval_s + 1
    return tagged >= probes + BUSY_EXTRA_PACKETS


def probe_needed(
    now: float, busy_at: float | None, rtt_min_ms: float | None, cfg: TelemetryConfig
) -> bool:
    """Whether a switch should probe a path now, given when its own traffic on the path was
    last seen busy at the far edge (`busy_at`, from the far edge's reports; the same clock
    as `now`) and the path's least RTT.

    A probe is skipped only while that traffic keeps the far edge's liveness fresh, and only
    where, should the traffic stop right after, the far edge cannot go silent for dead_after
    before the probes resume: the last busy report arrives up to one batch after the last
    packet, the hold lasts one report interval, the next probe tick comes within one probe
    interval, the switch's probe gate skips that first probe (its traffic went onto the path
    since its previous probe there, probe_gate.p4), the next goes one probe interval later and
    takes at most the path's RTT to arrive, with one more probe interval of margin (a lost
    probe). Paths whose least RTT is unknown are always probed."""
    if busy_at is None or rtt_min_ms is None or cfg.probe_interval_s is None:
        return True
    hold_s = cfg.report_interval_us / 1e6
    worst_silence_s = (
        cfg.report_batch_us / 1e6 + hold_s + 3 * cfg.probe_interval_s + rtt_min_ms / 1000
    )
    if worst_silence_s > cfg.dead_after_us / 1e6:
        return True
    return now - busy_at > hold_s
