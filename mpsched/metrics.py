"""Measurement metrics: every metric of the experiments is defined once, here.

Pure functions on plain Python values (no numpy), each citing the definition it implements:

- rates: goodput, rate series from cumulative byte counters, goodput fraction, reaction time;
- fairness: Jain's index;
- statistics: percentile, empirical CDF, mean with Student-t 95 % confidence interval;
- flow completion time per file size;
- reordering at the receiver (RFC 4737), from per-flow sequence numbers or IPv4 IDs;
- TCP sender state from ``ss -tin`` text and from Linux ``struct tcp_info`` bytes;
- a minimal classic-pcap reader for receiver-side captures.

Conventions: an empty input gives NaN (never an exception) for statistics, so that a run without
samples reports "no value" instead of failing; invalid input (negative byte counts, zero duration,
q outside [0, 100]) raises ``ValueError``.
"""

from __future__ import annotations

import logging
import math
import re
import socket
import struct
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import BinaryIO, NamedTuple

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
# Statistics


def percentile(xs: Iterable[float], q: float) -> float:
    """The q-th percentile (q in [0, 100]) with linear interpolation between order statistics.

    Hyndman & Fan (1996), "Sample quantiles in statistical packages", definition 7 — the
    default of numpy (``method="linear"``), R (``type=7``) and Excel ``PERCENTILE.INC``: with
    sorted values x_0..x_{n-1} and h = (n-1)·q/100, the result is
    x_⌊h⌋ + (h - ⌊h⌋)·(x_⌊h⌋+1 - x_⌊h⌋). Empty input → NaN.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    vals = sorted(float(x) for x in xs)
    if not vals:
        return NAN
    h = (len(vals) - 1) * q / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (h - lo) * (vals[hi] - vals[lo])


def cdf(xs: Iterable[float]) -> tuple[list[float], list[float]]:
    """Empirical CDF: sorted values and F_i = (i+1)/n, the fraction of samples <= x_i."""
    vals = sorted(float(x) for x in xs)
    n = len(vals)
    return vals, [(i + 1) / n for i in range(n)]


# Two-sided 95 % Student-t quantiles t_{0.975, df} for df = 1..30 (computed from the
# regularised incomplete beta function; they match any printed table to its digits).
_T975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004,
    2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905,
    2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873, 2.068658, 2.063899,
    2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)  # fmt: skip
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """Student-t quantile t_{0.975, df} (the 95 % two-sided critical value).

    df 1..30 from the table above; beyond, the Cornish-Fisher expansion of Abramowitz & Stegun
    26.7.5 in powers of 1/df around the normal quantile (error < 3e-8 for df > 30).
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def _std(vals: Sequence[float], mean: float) -> float:
    if len(vals) < 2:
        return NAN
    return math.sqrt(sum((x - mean) ** 2 for x in vals) / (len(vals) - 1))


def mean_ci95(xs: Iterable[float]) -> tuple[float, float]:
    """Sample mean and half width of its 95 % confidence interval, ``(mean, h)``.

    h = t_{0.975, n-1} · s / √n with s the sample standard deviation (n-1 denominator): the
    Student-t interval for the mean of independent runs (R. Jain, "The Art of Computer Systems
    Performance Analysis", 1991, §13.2). n = 1 → h = NaN (no variance estimate: the interval
    is undefined, and NaN keeps it out of further arithmetic); n = 0 → (NaN, NaN).
    """
    vals = [float(x) for x in xs]
    if not vals:
        return NAN, NAN
    mean = math.fsum(vals) / len(vals)
    if len(vals) == 1:
        return mean, NAN
    return mean, t_quantile_975(len(vals) - 1) * _std(vals, mean) / math.sqrt(len(vals))


@dataclass(frozen=True)
class Summary:
    """Sample statistics of one metric over n runs (ci95 and std are NaN for n < 2)."""

    n: int
    mean: float
    ci95: float
    min: float
    max: float
    std: float


def summarize(xs: Iterable[float]) -> Summary:
    """``Summary`` of the values: mean ± 95 % CI as ``mean_ci95``, sample std (n-1)."""
    vals = [float(x) for x in xs]
    if not vals:
        return Summary(0, NAN, NAN, NAN, NAN, NAN)
    mean, h = mean_ci95(vals)
    return Summary(len(vals), mean, h, min(vals), max(vals), _std(vals, mean))


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


# --------------------------------------------------------------------------------------------
# Reordering (RFC 4737)


def unwrap(seqs: Iterable[int], modulus: int = 1 << 16) -> list[int]:
    """Extend wrapping sequence numbers (e.g. 16-bit IPv4 IDs) to unbounded integers.

    Each number is placed at the value congruent to it modulo ``modulus`` that is nearest to the
    highest extended value so far, so a wrap forward (65535 → 0) and late packets from before a
    wrap (0, then 65535) both come out right, as long as packets are displaced by less than
    ``modulus / 2``.
    """
    out: list[int] = []
    top: int | None = None
    half = modulus // 2
    for s in seqs:
        s = int(s) % modulus
        if top is None:
            ext = s
        else:
            delta = (s - top) % modulus
            if delta >= half:
                delta -= modulus
            ext = top + delta
        out.append(ext)
        top = ext if top is None else max(top, ext)
    return out


@dataclass(frozen=True)
class ReorderStats:
    """Reordering of one packet stream at the receiver (RFC 4737).

    ``packets``: distinct packets received; ``duplicates``: further copies (ignored);
    ``reordered``: Type-P-Reordered packets (§3); ``extents``: the reordering extent (§4.2) of
    each reordered packet, in arrival order.
    """

    packets: int
    duplicates: int
    reordered: int
    extents: list[int] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        """Type-P-Reordered-Ratio-Stream (RFC 4737 §4.1): reordered / received; NaN if none."""
        return self.reordered / self.packets if self.packets else NAN

    @property
    def degree(self) -> float:
        """``reordering_degree`` of the stream: the mean extent of its reordered packets."""
        return reordering_degree(self.extents)

    @property
    def max_extent(self) -> int:
        return max(self.extents, default=0)


def reordering(seqs: Iterable[int], *, modulus: int | None = None) -> ReorderStats:
    """RFC 4737 reordering of a stream, given its sequence numbers in arrival order.

    Definitions (RFC 4737, Morton et al., 2006):

    - duplicates: only the first copy of a sequence number counts; later copies are counted in
      ``duplicates`` and otherwise ignored (as §3 requires), so a duplicate is never "reordered";
    - Type-P-Reordered (§3): a packet is reordered when its number s is lower than NextExp, the
      highest number seen so far + 1; otherwise NextExp becomes s + 1;
    - reordering extent (§4.2): for a reordered packet at arrival position i, e = i - j where j
      is the earliest arrival position holding a higher number (positions count distinct
      packets only). Arrivals 1,2,4,3,5: packet 3 is reordered with e = 1; 1,3,4,5,2: e = 3.

    ``modulus`` (e.g. 65536 for IPv4 IDs or 16-bit sequence numbers) unwraps numbers first
    (``unwrap``). Lost packets do not matter: gaps in the numbers are not reordering.
    """
    values = unwrap(seqs, modulus) if modulus else [int(s) for s in seqs]
    seen: set[int] = set()
    prefix_max: list[int] = []  # prefix_max[k] = max of the first k+1 distinct arrivals
    extents: list[int] = []
    duplicates = 0
    for s in values:
        if s in seen:
            duplicates += 1
            continue
        seen.add(s)
        i = len(prefix_max)
        if prefix_max and s < prefix_max[-1]:  # s < NextExp (s == max would be a duplicate)
            j = bisect_right(prefix_max, s)  # earliest position whose number exceeds s
            extents.append(i - j)
        prefix_max.append(max(prefix_max[-1], s) if prefix_max else s)
    return ReorderStats(len(prefix_max), duplicates, len(extents), extents)


def reordered_count(seqs: Iterable[int], *, modulus: int | None = None) -> int:
    """Number of Type-P-Reordered packets (RFC 4737 §3); see ``reordering``."""
    return reordering(seqs, modulus=modulus).reordered


def reorder_extents(seqs: Iterable[int], *, modulus: int | None = None) -> list[int]:
    """Reordering extents (RFC 4737 §4.2) of the reordered packets, e.g. for a CDF."""
    return reordering(seqs, modulus=modulus).extents


def reordering_degree(extents: Iterable[int]) -> float:
    """The single reordering number reported per flow: mean RFC 4737 §4.2 extent.

    The mean number of packets that overtook a reordered packet (how far late it came, in
    packets — the receive-buffer depth that would hide it); 0.0 when nothing was reordered.
    The fraction of packets reordered is ``ReorderStats.ratio``; the full distribution is the
    list of extents.
    """
    vals = list(extents)
    return math.fsum(vals) / len(vals) if vals else 0.0


def merge_reorder_stats(stats: Iterable[ReorderStats]) -> ReorderStats:
    """Pool the reordering of several flows (sums; extents concatenated)."""
    items = list(stats)
    return ReorderStats(
        sum(s.packets for s in items),
        sum(s.duplicates for s in items),
        sum(s.reordered for s in items),
        [e for s in items for e in s.extents],
    )


# --------------------------------------------------------------------------------------------
# TCP sender/receiver state: ss -tin and struct tcp_info


@dataclass(frozen=True)
class TcpStats:
    """What we sample of a TCP connection, from ``ss -tin`` or ``getsockopt(TCP_INFO)``.

    RTTs are the kernel's smoothed RTT and its variation (SRTT and RTTVAR of RFC 6298), the
    windowed minimum RTT and the receiver-side RTT estimate (``rcv_rtt``), in ms;
    ``retrans_total`` counts retransmitted segments over the connection's life and ``bytes_*``
    are the RFC 4898 (TCP ESTATS) octet counters named in linux/tcp.h; rates are in bit/s.
    ss omits zero/unset fields, so counters absent from ss text are 0, while an absent RTT
    (no sample yet) or pacing rate (unlimited) is None.
    """

    rtt_ms: float | None = None
    rttvar_ms: float | None = None
    min_rtt_ms: float | None = None
    rto_ms: float | None = None
    cwnd: int = 0
    ssthresh: int | None = None
    mss: int = 0
    retrans: int = 0
    retrans_total: int = 0
    lost: int = 0
    bytes_sent: int = 0
    bytes_retrans: int = 0
    bytes_acked: int = 0
    bytes_received: int = 0
    segs_out: int = 0
    segs_in: int = 0
    data_segs_out: int = 0
    data_segs_in: int = 0
    delivery_rate_bps: float = 0.0
    pacing_rate_bps: float | None = None
    reord_seen: int = 0
    rcv_ooopack: int = 0
    rcv_rtt_ms: float | None = None


@dataclass(frozen=True)
class SsSocket:
    """One socket of ``ss -tin`` output: the socket line plus its parsed info."""

    state: str
    recv_q: int
    send_q: int
    local: str
    peer: str
    stats: TcpStats
    cong: str | None = None
    raw: dict[str, str] = field(default_factory=dict)


_SS_STATES = frozenset(
    "ESTAB SYN-SENT SYN-RECV FIN-WAIT-1 FIN-WAIT-2 TIME-WAIT UNCONN CLOSE-WAIT LAST-ACK "
    "LISTEN CLOSING UNKNOWN".split()
)
_SS_FLAGS = frozenset("ts sack ecn ecnseen fastopen app_limited bidir".split())
_SS_SPACED = frozenset("send pacing_rate delivery_rate".split())  # "key value" tokens
_BW_RE = re.compile(r"^([0-9.]+)([KMG]?)bps$")


def _bw(text: str) -> float | None:
    """ss bandwidth: ``"123bps"`` with -n, ``"12.3Mbps"`` (K/M/G) without."""
    m = _BW_RE.match(text.split("/")[0])
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def parse_ss_info(text: str) -> tuple[dict[str, str], str | None]:
    """Tokens of one ``ss -i`` info line → ({key: value}, congestion control name).

    Keys as printed by iproute2 6.1 ``tcp_stats_print`` (``rtt:0.047/0.024``,
    ``retrans:1/71``, ``send 48716255319bps``, ``bbr:(bw:…)``); flags such as ``sack`` or
    ``app_limited`` map to ``""``; the bare congestion control name (``cubic``) is returned
    separately.
    """
    fields: dict[str, str] = {}
    cong: str | None = None
    tokens = text.split()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _SS_SPACED and i + 1 < len(tokens):
            fields[tok] = tokens[i + 1]
            i += 2
            continue
        if ":" in tok:
            key, _, value = tok.partition(":")
            fields[key] = value
        elif tok in _SS_FLAGS:
            fields[tok] = ""
        elif cong is None and re.fullmatch(r"[a-z][a-z0-9_]*", tok):
            cong = tok
        i += 1
    return fields, cong


def _num(fields: dict[str, str], key: str) -> float | None:
    try:
        return float(fields[key].split("(")[0].removesuffix("ms"))
    except (KeyError, ValueError):
        return None


def tcp_stats_from_ss(fields: dict[str, str]) -> TcpStats:
    """``TcpStats`` from the fields of ``parse_ss_info`` (ms for times, bit/s for rates)."""

    def count(key: str) -> int:
        v = _num(fields, key)
        return int(v) if v is not None else 0

    rtt = fields.get("rtt", "").split("/")
    retrans = fields.get("retrans", "0/0").split("/")
    return TcpStats(
        rtt_ms=float(rtt[0]) if rtt[0] else None,
        rttvar_ms=float(rtt[1]) if len(rtt) > 1 else None,
        min_rtt_ms=_num(fields, "minrtt"),
        rto_ms=_num(fields, "rto"),
        cwnd=count("cwnd"),
        ssthresh=int(v) if (v := _num(fields, "ssthresh")) is not None else None,
        mss=count("mss"),
        retrans=int(retrans[0]),
        retrans_total=int(retrans[-1]),
        lost=count("lost"),
        bytes_sent=count("bytes_sent"),
        bytes_retrans=count("bytes_retrans"),
        bytes_acked=count("bytes_acked"),
        bytes_received=count("bytes_received"),
        segs_out=count("segs_out"),
        segs_in=count("segs_in"),
        data_segs_out=count("data_segs_out"),
        data_segs_in=count("data_segs_in"),
        delivery_rate_bps=_bw(fields.get("delivery_rate", "0bps")) or 0.0,
        pacing_rate_bps=_bw(fields["pacing_rate"]) if "pacing_rate" in fields else None,
        reord_seen=count("reord_seen"),
        rcv_ooopack=count("rcv_ooopack"),
        rcv_rtt_ms=_num(fields, "rcv_rtt"),
    )


def parse_ss(text: str) -> list[SsSocket]:
    """Sockets of ``ss -tin`` (or ``-tinH``, ``-tinO``) output, as printed by iproute2 6.1.

    A socket line ``ESTAB 0 0 127.0.0.1:46160 127.0.0.1:15201`` is followed by its info on the
    next, tab-indented line (or on the same line with ``-O``). The header line and lines that
    cannot be parsed are skipped. Addresses keep ss's spelling (``[::ffff:10.0.0.1]:5201``).
    """
    out: list[SsSocket] = []
    head: list[str] | None = None
    info: list[str] = []

    def flush() -> None:
        if head is None:
            return
        try:
            state, rq, sq, local, peer = head[:5]
            fields, cong = parse_ss_info(" ".join(head[5:] + info))
            out.append(
                SsSocket(
                    state, int(rq), int(sq), local, peer, tcp_stats_from_ss(fields), cong, fields
                )
            )
        except (ValueError, IndexError) as exc:
            log.debug("skipping unparsable ss socket %r: %s", head, exc)

    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0] in " \t":
            info.append(line)
            continue
        tokens = line.split()
        if tokens[0] in ("tcp", "mptcp"):  # Netid column (ss -a / several protocols)
            tokens = tokens[1:]
        if tokens and tokens[0] in _SS_STATES:
            flush()
            head, info = tokens, []
    flush()
    return out


@dataclass(frozen=True)
class TcpInfo:
    """Linux ``struct tcp_info`` (linux/tcp.h of kernel 6.1), raw units of the kernel.

    Times are µs except ``last_*`` (ms); rates are bytes/s. Fields beyond the bytes the kernel
    returned (older kernels return shorter structs) are None.
    """

    state: int
    ca_state: int
    retransmits: int
    probes: int
    backoff: int
    options: int
    snd_wscale: int
    rcv_wscale: int
    delivery_rate_app_limited: int
    fastopen_client_fail: int
    rto: int
    ato: int
    snd_mss: int
    rcv_mss: int
    unacked: int
    sacked: int
    lost: int
    retrans: int
    fackets: int
    last_data_sent: int
    last_ack_sent: int
    last_data_recv: int
    last_ack_recv: int
    pmtu: int
    rcv_ssthresh: int
    rtt: int
    rttvar: int
    snd_ssthresh: int
    snd_cwnd: int
    advmss: int
    reordering: int
    rcv_rtt: int
    rcv_space: int
    total_retrans: int
    pacing_rate: int | None = None
    max_pacing_rate: int | None = None
    bytes_acked: int | None = None
    bytes_received: int | None = None
    segs_out: int | None = None
    segs_in: int | None = None
    notsent_bytes: int | None = None
    min_rtt: int | None = None
    data_segs_in: int | None = None
    data_segs_out: int | None = None
    delivery_rate: int | None = None
    busy_time: int | None = None
    rwnd_limited: int | None = None
    sndbuf_limited: int | None = None
    delivered: int | None = None
    delivered_ce: int | None = None
    bytes_sent: int | None = None
    bytes_retrans: int | None = None
    dsack_dups: int | None = None
    reord_seen: int | None = None
    rcv_ooopack: int | None = None
    snd_wnd: int | None = None

    def stats(self) -> TcpStats:
        """The same quantities as ``ss -tin`` shows, in its units (ms, bit/s)."""

        def rate(v: int | None) -> float | None:
            return None if v is None or v == (1 << 64) - 1 else 8.0 * v

        return TcpStats(
            rtt_ms=self.rtt / 1000.0,
            rttvar_ms=self.rttvar / 1000.0,
            min_rtt_ms=None if self.min_rtt in (None, 0xFFFFFFFF) else self.min_rtt / 1000.0,
            rto_ms=self.rto / 1000.0,
            cwnd=self.snd_cwnd,
            ssthresh=self.snd_ssthresh if self.snd_ssthresh < 0xFFFF else None,
            mss=self.snd_mss,
            retrans=self.retrans,
            retrans_total=self.total_retrans,
            lost=self.lost,
            bytes_sent=self.bytes_sent or 0,
            bytes_retrans=self.bytes_retrans or 0,
            bytes_acked=self.bytes_acked or 0,
            bytes_received=self.bytes_received or 0,
            segs_out=self.segs_out or 0,
            segs_in=self.segs_in or 0,
            data_segs_out=self.data_segs_out or 0,
            data_segs_in=self.data_segs_in or 0,
            delivery_rate_bps=rate(self.delivery_rate) or 0.0,
            pacing_rate_bps=rate(self.pacing_rate),
            reord_seen=self.reord_seen or 0,
            rcv_ooopack=self.rcv_ooopack or 0,
            rcv_rtt_ms=self.rcv_rtt / 1000.0 if self.rcv_rtt else None,
        )


# (name, struct code, offset) after the 8 leading u8s, in linux/tcp.h (6.1) order.
_TCPI_FIELDS: tuple[tuple[str, str, int], ...] = (
    *((n, "I", 8 + 4 * k) for k, n in enumerate(
        "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets last_data_sent "
        "last_ack_sent last_data_recv last_ack_recv pmtu rcv_ssthresh rtt rttvar snd_ssthresh "
        "snd_cwnd advmss reordering rcv_rtt rcv_space total_retrans".split())),
    ("pacing_rate", "Q", 104), ("max_pacing_rate", "Q", 112), ("bytes_acked", "Q", 120),
    ("bytes_received", "Q", 128), ("segs_out", "I", 136), ("segs_in", "I", 140),
    ("notsent_bytes", "I", 144), ("min_rtt", "I", 148), ("data_segs_in", "I", 152),
    ("data_segs_out", "I", 156), ("delivery_rate", "Q", 160), ("busy_time", "Q", 168),
    ("rwnd_limited", "Q", 176), ("sndbuf_limited", "Q", 184), ("delivered", "I", 192),
    ("delivered_ce", "I", 196), ("bytes_sent", "Q", 200), ("bytes_retrans", "Q", 208),
    ("dsack_dups", "I", 216), ("reord_seen", "I", 220), ("rcv_ooopack", "I", 224),
    ("snd_wnd", "I", 228),
)  # fmt: skip
TCP_INFO_MIN_LEN = 104  # up to tcpi_total_retrans (Linux 2.6)
TCP_INFO_LEN_6_1 = 232  # sizeof(struct tcp_info) in linux/tcp.h of kernel 6.1


def parse_tcp_info(buf: bytes) -> TcpInfo:
    """Decode ``getsockopt(IPPROTO_TCP, TCP_INFO)`` bytes (native byte order, kernel layout).

    Accepts what any kernel since 2.6 returns: fields past the end of a short buffer are None,
    bytes past the 6.1 struct (newer kernels append fields) are ignored.
    """
    if len(buf) < TCP_INFO_MIN_LEN:
        raise ValueError(f"tcp_info needs >= {TCP_INFO_MIN_LEN} bytes, got {len(buf)}")
    b = struct.unpack_from("=8B", buf)
    vals: dict[str, int | None] = {}
    for name, code, off in _TCPI_FIELDS:
        size = struct.calcsize("=" + code)
        vals[name] = struct.unpack_from("=" + code, buf, off)[0] if off + size <= len(buf) else None
    return TcpInfo(
        state=b[0],
        ca_state=b[1],
        retransmits=b[2],
        probes=b[3],
        backoff=b[4],
        options=b[5],
        snd_wscale=b[6] & 0x0F,  # bit-fields: first declared = low bits (x86, arm64)
        rcv_wscale=b[6] >> 4,
        delivery_rate_app_limited=b[7] & 0x01,
        fastopen_client_fail=(b[7] >> 1) & 0x03,
        **vals,  # type: ignore[arg-type]
    )


def tcp_info(sock: socket.socket) -> TcpInfo:
    """``TcpInfo`` of a connected TCP socket (Linux only)."""
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 512))


# --------------------------------------------------------------------------------------------
# pcap


class PcapError(ValueError):
    """The file is not a classic pcap file we can read (bad global header)."""


class PcapPacket(NamedTuple):
    """One IPv4 packet of a capture. Ports and ``tcp_seq`` are None when absent (other
    protocols, non-first fragments); ``payload_len`` is the transport payload length from the
    IP header (so it is right for snaplen-truncated frames)."""

    ts: float
    src: str
    dst: str
    proto: int
    sport: int | None
    dport: int | None
    ip_id: int
    tcp_seq: int | None
    payload_len: int


@dataclass
class PcapStats:
    """What the reader did with the records: ``packets`` yielded, ``non_ip`` skipped (ARP,
    IPv6…), ``malformed`` skipped (truncated or garbage headers), ``truncated_file``: 1 if the
    file ended inside a record or a record header was implausible (reading stops there)."""

    records: int = 0
    packets: int = 0
    non_ip: int = 0
    malformed: int = 0
    truncated_file: int = 0


LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276
_LINKTYPES = (LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2)
_MAX_RECORD = 0x40000  # tcpdump's MAXIMUM_SNAPLEN: larger records are garbage
_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6),
    b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9),
    b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}


class _MalformedError(Exception):
    pass


class PcapReader:
    """Iterate over the IPv4 packets of a classic libpcap file (``tcpdump -w``).

    Both byte orders, micro- and nanosecond timestamps; link types Ethernet (with 802.1Q/802.1ad
    tags), Linux cooked v1/v2 (``tcpdump -i any``) and raw IP. Records that cannot be decoded
    are skipped and counted in ``stats`` instead of raising; only an unreadable global header
    raises ``PcapError``. pcapng is not read (``tcpdump -w`` writes classic pcap).
    """

    def __init__(self, source: str | Path | BinaryIO):
        if isinstance(source, str | Path):
            self._file: BinaryIO = open(source, "rb")  # noqa: SIM115 - closed in close()
            self._owned = True
        else:
            self._file, self._owned = source, False
        self.stats = PcapStats()
        header = self._file.read(24)
        if len(header) < 24:
            self.close()
            raise PcapError(f"pcap global header truncated ({len(header)} of 24 bytes)")
        if header[:4] == b"\x0a\x0d\x0d\x0a":
            self.close()
            raise PcapError("pcapng is not supported; write classic pcap (tcpdump -w)")
        if header[:4] not in _MAGIC:
            self.close()
            raise PcapError(f"not a pcap file (magic {header[:4].hex()})")
        self._endian, self._tick = _MAGIC[header[:4]]
        _, _, _, _, self.snaplen, network = struct.unpack(self._endian + "HHiIII", header[4:])
        self.linktype = network & 0xFFFF
        self.nanosecond = self._tick < 1e-6
        if self.linktype not in _LINKTYPES:
            self.close()
            raise PcapError(f"unsupported link type {self.linktype}")

    def close(self) -> None:
        if self._owned:
            self._file.close()

    def __enter__(self) -> PcapReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[PcapPacket]:
        rec = struct.Struct(self._endian + "IIII")
        while True:
            hdr = self._file.read(16)
            if not hdr:
                return
            if len(hdr) < 16:
                self._truncated("record header")
                return
            sec, frac, incl, orig = rec.unpack(hdr)
            if incl > _MAX_RECORD:
                self._truncated(f"implausible record length {incl}")
                return
            data = self._file.read(incl)
            self.stats.records += 1
            if len(data) < incl:
                self._truncated("record data")
                return
            try:
                pkt = self._decode(sec + frac * self._tick, data, orig)
            except (_MalformedError, struct.error, ValueError) as exc:
                self.stats.malformed += 1
                log.debug("pcap record %d skipped: %s", self.stats.records, exc)
                continue
            if pkt is None:
                self.stats.non_ip += 1
                continue
            self.stats.packets += 1
            yield pkt

    def _truncated(self, what: str) -> None:
        self.stats.truncated_file += 1
        log.warning("pcap ends inside a record (%s) after %d records", what, self.stats.records)

    def _link(self, data: bytes) -> int | None:
        """Offset of the IPv4 header in the frame, None if the frame is not IPv4."""
        if self.linktype == LINKTYPE_ETHERNET:
            off, etype = 14, _u16(data, 12)
            for _ in range(2):  # 802.1Q / 802.1ad tags
                if etype not in (0x8100, 0x88A8):
                    break
                etype, off = _u16(data, off + 2), off + 4
            return off if etype == 0x0800 else None
        if self.linktype == LINKTYPE_LINUX_SLL:
            return 16 if _u16(data, 14) == 0x0800 else None
        if self.linktype == LINKTYPE_LINUX_SLL2:
            return 20 if _u16(data, 0) == 0x0800 else None
        if not data:  # LINKTYPE_RAW
            raise _MalformedError("empty frame")
        return 0 if data[0] >> 4 == 4 else None

    def _decode(self, ts: float, data: bytes, orig_len: int) -> PcapPacket | None:
        off = self._link(data)
        if off is None:
            return None
        if len(data) < off + 20:
            raise _MalformedError("IPv4 header truncated")
        vihl = data[off]
        if vihl >> 4 != 4:
            raise _MalformedError(f"IP version {vihl >> 4} behind an IPv4 link type")
        ihl = (vihl & 0x0F) * 4
        total = _u16(data, off + 2)
        if total == 0:  # GSO packets > 64 KiB (BIG TCP) carry length 0; use the frame length
            total = orig_len - off
        if ihl < 20 or total < ihl:
            raise _MalformedError(f"bad IPv4 header length {ihl} / total length {total}")
        ip_id = _u16(data, off + 4)
        frag_off = _u16(data, off + 6) & 0x1FFF
        proto = data[off + 9]
        src = socket.inet_ntoa(data[off + 12 : off + 16])
        dst = socket.inet_ntoa(data[off + 16 : off + 20])
        l4 = off + ihl
        sport = dport = seq = None
        payload = total - ihl
        if frag_off == 0 and proto in (6, 17):
            need = 14 if proto == 6 else 4
            if len(data) < l4 + need:
                raise _MalformedError("transport header truncated")
            sport, dport = _u16(data, l4), _u16(data, l4 + 2)
            if proto == 6:
                seq = struct.unpack_from(">I", data, l4 + 4)[0]
                doff = (data[l4 + 12] >> 4) * 4
                if doff < 20:
                    raise _MalformedError(f"bad TCP data offset {doff}")
                payload -= doff
            else:
                payload -= 8
            if payload < 0:
                raise _MalformedError("transport header longer than the IP packet")
        return PcapPacket(ts, src, dst, proto, sport, dport, ip_id, seq, payload)


def _u16(data: bytes, off: int) -> int:
    if off + 2 > len(data):
        raise _MalformedError("frame truncated")
    return (data[off] << 8) | data[off + 1]


def read_pcap(source: str | Path | BinaryIO) -> tuple[list[PcapPacket], PcapStats]:
    """All IPv4 packets of a classic pcap file and the reader's counters."""
    with PcapReader(source) as reader:
        packets = list(reader)
    return packets, reader.stats


class Flow(NamedTuple):
    """A unidirectional transport flow."""

    src: str
    sport: int | None
    dst: str
    dport: int | None
    proto: int


def ip_id_sequences(
    packets: Iterable[PcapPacket], *, proto: int = 6, data_only: bool = True
) -> dict[Flow, list[int]]:
    """Per flow, the IPv4 IDs of its packets in capture (arrival) order.

    Linux gives each connected TCP socket its own IP ID counter, incremented per segment sent
    (GSO segments included), and a retransmission goes out with a new, higher ID. So at the
    receiver an ID lower than one already seen in the same flow means the network reordered the
    segment — unlike TCP sequence numbers, where loss recovery looks like reordering. With
    ``data_only`` only packets with payload count (pure ACKs share the counter but are not the
    data being measured). Capture at the receiver with GRO off (``ethtool -K <if> gro off``)
    to see every segment; with GRO on, in-order runs arrive merged under their first ID.
    """
    flows: dict[Flow, list[int]] = {}
    for p in packets:
        if p.proto != proto or (data_only and p.payload_len <= 0):
            continue
        flows.setdefault(Flow(p.src, p.sport, p.dst, p.dport, p.proto), []).append(p.ip_id)
    return flows


def pcap_reordering(
    packets: Iterable[PcapPacket], *, proto: int = 6, data_only: bool = True
) -> dict[Flow, ReorderStats]:
    """RFC 4737 reordering per flow of a receiver-side capture, by IPv4 ID (16-bit wrap)."""
    return {
        flow: reordering(ids, modulus=1 << 16)
        for flow, ids in ip_id_sequences(packets, proto=proto, data_only=data_only).items()
    }
