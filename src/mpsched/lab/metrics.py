"""Measurement metrics: every metric of the experiments is defined once, here or (reordering)
in ``reorder.py``.

Pure functions on plain Python values (no numpy), each citing the definition it implements:

- rates: goodput, rate series from cumulative byte counters, goodput fraction, reaction time;
- fairness: Jain's index;
- flow completion time per file size and per size bucket, the ideal FCT and the slowdown;
- reordering at the receiver (RFC 4737), from per-flow sequence numbers or IPv4 IDs: in
  ``src/mpsched/lab/reorder.py``.

Sample statistics (percentile, empirical CDF, mean with its Student-t 95 % confidence
interval) are defined once in ``src/mpsched/stats.py``, shared with the benchmarks.

Parsers of the raw inputs live next to it: ``tcpstats.py`` (``ss -tin``, ``struct tcp_info``)
and ``pcap.py`` (receiver-side captures -> per-flow IPv4 ID sequences).

Conventions: an empty input gives NaN (never an exception) for statistics, so that a run without
samples reports "no value" instead of failing; invalid input (negative byte counts, zero duration,
q outside [0, 100]) raises ``ValueError``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from mpsched.stats import mean, percentile

log = logging.getLogger(__name__)

NAN = float("nan")

# --------------------------------------------------------------------------------------------
# Rates


def goodput_mbps(bytes_: float, seconds: float) -> float:
    """Goodput in Mbit/s (10^6 bit/s) of ``bytes_`` application bytes delivered in ``seconds``.

    Goodput per RFC 2647 §3.17: the bits per unit of time delivered to the destination, minus
    any bits lost or retransmitted — so ``bytes_`` must be a receiver-side count of unique
    application bytes (e.g. iperf3's ``sum_received``, ``tcpi_bytes_received``).
    """
    if bytes_ < 0:
        raise ValueError(f"negative byte count {bytes_}")
    if not seconds > 0:
        raise ValueError(f"duration must be > 0 s, got {seconds}")
    return 8.0 * bytes_ / seconds / 1e6


def rate_series(
    samples: Iterable[tuple[float, float]], *, modulus: int | None = None
) -> list[tuple[float, float]]:
    """Turn cumulative byte-counter samples ``(t_s, bytes)`` into ``(t_mid_s, Mbit/s)`` points.

    Each pair of consecutive samples gives one point at the interval's midpoint with rate
    ``8 * Δbytes / Δt / 10^6`` (goodput per interval, RFC 2647 §3.17, when the counter counts
    delivered bytes). Robustness rules:

    - samples are sorted by time (stable); several samples with the same timestamp collapse to
      the last one given (the latest reading), so Δt is never 0;
    - a counter that goes down was reset (restarted from 0 during the interval): Δbytes is the
      new reading. With ``modulus`` (e.g. ``2**32``) a decrease is instead a wrap-around of a
      counter of that size, as for SNMP Counter32/64 (RFC 2578 §7.1.6): Δ = new - old + modulus;
    - samples whose time or value is not finite are dropped.
    """
    clean = sorted(
        ((float(t), float(b)) for t, b in samples if math.isfinite(t) and math.isfinite(b)),
        key=lambda s: s[0],
    )
    points: list[tuple[float, float]] = []
    for t, b in clean:
        if points and points[-1][0] == t:
            points[-1] = (t, b)
        else:
            points.append((t, b))
    out: list[tuple[float, float]] = []
    for (t0, b0), (t1, b1) in pairwise(points):
        delta = b1 - b0
        if delta < 0:
            delta = delta + modulus if modulus else b1
        out.append(((t0 + t1) / 2.0, 8.0 * delta / (t1 - t0) / 1e6))
    return out


def goodput_fraction(goodput_mbps: float, capacities_mbps: float | Iterable[float]) -> float:
    """Goodput as a fraction of the summed path capacities (1.0 = all paths fully used).

    The normalised throughput of the multipath papers (e.g. LLHD's "bandwidth utilisation"):
    ``goodput / Σ capacity_i``. Since goodput excludes headers and retransmissions (RFC 2647
    §3.17), it stays somewhat below 1 even on perfectly used paths.
    """
    caps = [capacities_mbps] if isinstance(capacities_mbps, int | float) else list(capacities_mbps)
    total = sum(caps)
    if not total > 0:
        raise ValueError(f"summed capacity must be > 0 Mbit/s, got {total}")
    return goodput_mbps / total


def reaction_time(
    series: Sequence[tuple[float, float]],
    t_event: float,
    target_mbps: float,
    *,
    hold_s: float = 0.0,
) -> float:
    """Path-failure reaction time: seconds from ``t_event`` until the rate is back at target.

    Our definition (the multipath papers read it off throughput traces; there is no RFC for an
    end-to-end multipath scheduler's reaction): the time from the event (e.g. a path failing)
    to the first series point ``t >= t_event`` with rate ``>= target_mbps`` after which the rate
    stays ``>= target_mbps`` for at least ``hold_s`` seconds (every point in ``[t, t+hold_s]``).
    The caller chooses the target, typically 90 % of the rate the surviving paths can carry.
    NaN when the series never recovers (or the hold window runs past its end).
    """
    pts = sorted((t, r) for t, r in series if t >= t_event)
    for i, (t, r) in enumerate(pts):
        if r < target_mbps:
            continue
        window = [p for p in pts[i:] if p[0] <= t + hold_s]
        if pts[-1][0] < t + hold_s:
            return NAN
        if all(v >= target_mbps for _, v in window):
            return t - t_event
    return NAN


# --------------------------------------------------------------------------------------------
# Fairness


def jain_index(xs: Iterable[float]) -> float:
    """Jain's fairness index (Σx)² / (n · Σx²), in [1/n, 1].

    R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination for
    Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984. ``xs`` are the
    allocations (e.g. per-flow goodputs), which must be >= 0.

    Edge cases: no allocations → NaN (undefined); all allocations 0 → 1.0 (every user gets the
    same, which is what the index measures; the limit of equal allocations).
    """
    vals = [float(x) for x in xs]
    if any(x < 0 for x in vals):
        raise ValueError("Jain's index is defined for allocations >= 0")
    if not vals:
        return NAN
    sq = sum(x * x for x in vals)
    if sq == 0:
        return 1.0
    return sum(vals) ** 2 / (len(vals) * sq)


# --------------------------------------------------------------------------------------------
# Flow completion time


@dataclass(frozen=True)
class FctStats:
    """Flow completion times of the flows of one file size, in seconds."""

    n: int
    mean: float
    p50: float
    p99: float


def fct_summary(records: Iterable[tuple[int, float]]) -> dict[int, FctStats]:
    """Per file size: number of flows, mean, median and 99th percentile of their FCT.

    FCT as in N. Dukkipati, N. McKeown, "Why Flow-Completion Time is the Right Metric for
    Congestion Control", ACM SIGCOMM CCR 36(1), 2006: the time from the first byte sent until
    the last byte received. ``records`` are ``(size_bytes, fct_s)``; percentiles per
    ``percentile``. Keys are sorted by size.
    """
    by_size: dict[int, list[float]] = {}
    for size, fct in records:
        by_size.setdefault(int(size), []).append(float(fct))
    return {
        size: FctStats(len(v), math.fsum(v) / len(v), percentile(v, 50), percentile(v, 99))
        for size, v in sorted(by_size.items())
    }


# Size buckets of the data-centre workloads (pFabric, CONGA, Hermes report FCT this way): name,
# smallest size in the bucket, largest (bytes; kB = 1000 B). The names are the metric infixes.
FCT_BUCKETS: tuple[tuple[str, float, float], ...] = (
    ("lt100k", 0, 100_000 - 1),  # < 100 kB: a few round trips (latency-bound)
    ("100k_1m", 100_000, 1_000_000),  # 100 kB - 1 MB
    ("gt1m", 1_000_000 + 1, math.inf),  # > 1 MB: bandwidth-bound
)
MSS_BYTES = 1448  # TCP payload per segment with the timestamp option (Linux default)
FRAME_BYTES = 1514  # its Ethernet frame: + 32 TCP, 20 IPv4, 14 Ethernet (the rates count frames)
INIT_CWND = 10  # segments (RFC 6928, Linux)


def size_bucket(size: int) -> str:
    """The ``FCT_BUCKETS`` name of a flow of ``size`` bytes."""
    for name, low, high in FCT_BUCKETS:
        if low <= size <= high:
            return name
    raise ValueError(f"flow size must be >= 0, got {size}")


def ideal_fct_s(
    size: int,
    rate_mbps: float | None,
    rtt_ms: float,
    mss: int = MSS_BYTES,
    frame: int = FRAME_BYTES,
    init_cwnd: int = INIT_CWND,
) -> float:
    """The FCT of ``size`` bytes alone on an idle path of ``rate_mbps`` (frame bits; None =
    unlimited) and base round-trip time ``rtt_ms``, as the traffic generator measures it
    (connect() until the receiver's one-byte reply):

        one RTT for the handshake; slow-start rounds of IW·2^k segments (IW = 10) while the
        window is below the bandwidth-delay product and more data remain, one RTT each;
        the rest at the path's payload rate (rate · mss / frame); one RTT for the last
        byte to arrive and the reply to come back.

    No loss, no queueing, no delayed ACKs, no per-packet processing: a lower bound a real
    transfer approaches, the denominator of the FCT slowdown (the definition of pFabric,
    Alizadeh et al., SIGCOMM 2013: FCT over the FCT of the flow alone in the network).
    """
    if size < 0 or rtt_ms < 0:
        raise ValueError(f"size and rtt_ms must be >= 0, got {size}, {rtt_ms}")
    rtt = rtt_ms / 1000
    if rate_mbps is None:
        rate = math.inf
    elif rate_mbps <= 0:
        raise ValueError(f"rate_mbps must be > 0 or None, got {rate_mbps}")
    else:
        rate = rate_mbps * 1e6 / 8 * mss / frame  # payload bytes per second
    bdp = rate * rtt
    t = rtt  # handshake
    left = float(size)
    window = float(init_cwnd * mss)
    while left > window and window < bdp:
        left -= window
        t += rtt
        window *= 2
    return t + (left / rate if math.isfinite(rate) else 0.0) + rtt


def best_ideal_fct_s(size: int, paths: Iterable[tuple[float | None, float]]) -> float:
    """``ideal_fct_s`` on the best of ``paths`` ((rate_mbps, rtt_ms) each) for this size: the
    slowdown's reference is the fastest path for the flow (NaN without paths)."""
    return min((ideal_fct_s(size, rate, rtt) for rate, rtt in paths), default=NAN)


@dataclass(frozen=True)
class BucketStats:
    """The flows of one size bucket: started, completed, their FCT (s) and slowdown."""

    started: int
    completed: int
    fct_mean: float
    fct_p99: float
    slowdown_mean: float
    slowdown_p99: float

    @property
    def completed_frac(self) -> float:
        return self.completed / self.started if self.started else NAN


def bucket_stats(
    records: Iterable[tuple[int, float | None] | tuple[int, float | None, bool]],
    ideal: Callable[[int], float],
) -> dict[str, BucketStats]:
    """Per ``FCT_BUCKETS`` bucket with at least one flow: ``records`` are ``(size_bytes,
    fct_s)`` or ``(size_bytes, fct_s, censored)``; fct None (or NaN) for a flow that did not
    complete and is left out; ``censored`` True for a flow still running at the end whose
    fct_s is the time it had run (a lower bound of its FCT): it counts in the FCT and
    slowdown figures (so a policy does not look faster by leaving its slowest flows
    unfinished) but not as completed. slowdown = fct / ideal(size) (``best_ideal_fct_s``).
    Mean and 99th percentile (``percentile``) over the flows with an FCT."""
    fcts: dict[str, list[float]] = {}
    slow: dict[str, list[float]] = {}
    started: dict[str, int] = {}
    completed: dict[str, int] = {}
    for record in records:
        size, fct = record[0], record[1]
        censored = len(record) > 2 and bool(record[2])
        b = size_bucket(int(size))
        started[b] = started.get(b, 0) + 1
        if fct is None or not math.isfinite(fct):
            continue
        if not censored:
            completed[b] = completed.get(b, 0) + 1
        fcts.setdefault(b, []).append(float(fct))
        ref = ideal(int(size))
        if ref > 0 and math.isfinite(ref):
            slow.setdefault(b, []).append(float(fct) / ref)
    out = {}
    for name, _, _ in FCT_BUCKETS:
        if name not in started:
            continue
        f, sd = fcts.get(name, []), slow.get(name, [])
        out[name] = BucketStats(
            started=started[name],
            completed=completed.get(name, 0),
            fct_mean=mean(f),
            fct_p99=percentile(f, 99),
            slowdown_mean=mean(sd),
            slowdown_p99=percentile(sd, 99),
        )
    return out
