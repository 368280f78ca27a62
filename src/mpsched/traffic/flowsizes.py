"""Published data-centre flow-size distributions and the open-loop Poisson arrival process.

The two empirical CDFs that flow-scheduling papers (pFabric, CONGA, Hermes, HULA, ...) load
their fabrics with, as the piecewise-linear point lists distributed with the pFabric
simulations (M. Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport",
SIGCOMM 2013), sizes in packets of 1460 payload bytes:

- ``websearch``: the web-search cluster of M. Alizadeh et al., "Data Center TCP (DCTCP)",
  SIGCOMM 2010, Fig. 4 (query and background flows). About 54 % of flows are below 100 kB,
  16 % between 100 kB and 1 MB, 30 % above; mean 1.67 MB, largest 29.2 MB.
- ``datamining``: the data-mining cluster of A. Greenberg et al., "VL2: A Scalable and
  Flexible Data Center Network", SIGCOMM 2009, Fig. 2. About 82 % of flows below 100 kB,
  9 % in each of the other two buckets; mean 7.5 MB, largest 973 MB (heavy-tailed).

Scaling to the testbed. Those figures were measured on 1-10 Gbit/s links; the testbed's paths
run at 2-10 Mbit/s, and a run lasts tens of seconds. Sizes are kept as published (so the size
buckets < 100 kB, 100 kB-1 MB, > 1 MB keep their meaning: a 50 kB flow is still a few
round trips, a 3 MB flow is still bandwidth-bound) and **censored at** ``max_bytes`` (default
3 MB): a draw above it becomes ``max_bytes``. The cap sits above the largest bucket boundary,
so every bucket keeps its published share of flows; only the > 1 MB bucket's mean shrinks,
and the mean flow size drops (web search 1.67 MB -> 0.81 MB, data mining 7.5 MB -> 0.26 MB),
so a 30 s run at 70 % of 26 Mbit/s starts about 78 web-search flows (43 / 12 / 23 per bucket)
or about 250 data-mining flows (200 / 22 / 22), and a capped flow alone takes 3 s on an
8 Mbit/s path. ``scale`` multiplies every size before the cap (default 1: none), for a
testbed of other rates.

Arrivals are open loop (M/G/1-like): exponential inter-arrival times of mean
``mean_size * 8 / rate``, so the offered load in application bits per second is ``rate``.
Everything here is a pure function of a seeded ``random.Random``.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

PACKET_BYTES = 1460  # the unit of the published point lists
DEFAULT_MAX_BYTES = 3_000_000

# (size in 1460-byte packets, cumulative probability); linear between points.
WEBSEARCH: tuple[tuple[float, float], ...] = (
    (6, 0.0), (6, 0.15), (13, 0.2), (19, 0.3), (33, 0.4), (53, 0.53), (133, 0.6), (667, 0.7),
    (1333, 0.8), (3333, 0.9), (6667, 0.97), (20000, 1.0),
)  # fmt: skip
DATAMINING: tuple[tuple[float, float], ...] = (
    (1, 0.0), (1, 0.5), (2, 0.6), (3, 0.7), (7, 0.8), (267, 0.9), (2107, 0.95), (66667, 0.99),
    (666667, 1.0),
)  # fmt: skip
DISTRIBUTIONS: dict[str, tuple[tuple[float, float], ...]] = {
    "websearch": WEBSEARCH,
    "datamining": DATAMINING,
}


@dataclass(frozen=True)
class SizeDist:
    """An empirical flow-size CDF in bytes: ``points`` are (bytes, F) with F rising from 0 to 1,
    sampled by inverse transform with linear interpolation (ns-2's EmpiricalRandomVariable),
    each draw multiplied by ``scale`` and censored at ``max_bytes``."""

    points: tuple[tuple[float, float], ...]
    max_bytes: float = DEFAULT_MAX_BYTES
    scale: float = 1.0

    def __post_init__(self) -> None:
        if len(self.points) < 2:
            raise ValueError("a CDF needs at least two points")
        probs = [p for _, p in self.points]
        sizes = [s for s, _ in self.points]
        if probs[0] != 0.0 or probs[-1] != 1.0:
            raise ValueError("a CDF starts at probability 0 and ends at 1")
        if any(b < a for a, b in itertools.pairwise(probs)) or any(
            b < a for a, b in itertools.pairwise(sizes)
        ):
            raise ValueError("a CDF's sizes and probabilities must not decrease")
        if sizes[0] <= 0 or self.max_bytes <= 0 or self.scale <= 0:
            raise ValueError("sizes, max_bytes and scale must be > 0")

    def quantile(self, u: float) -> int:
        """The size in bytes (>= 1) at cumulative probability u in [0, 1]."""
        probs = [p for _, p in self.points]
        k = min(max(bisect.bisect_left(probs, u), 1), len(probs) - 1)
        (x0, p0), (x1, p1) = self.points[k - 1], self.points[k]
        x = x1 if p1 == p0 else x0 + (x1 - x0) * (u - p0) / (p1 - p0)
        return max(1, round(min(x * self.scale, self.max_bytes)))

    def sample(self, rng: random.Random) -> int:
        return self.quantile(rng.random())

    def mean(self) -> float:
        """E[min(scale * X, max_bytes)] in bytes, exactly (X uniform within each segment)."""
        total = 0.0
        cap = self.max_bytes
        for (x0, p0), (x1, p1) in itertools.pairwise(self.points):
            if p1 == p0:
                continue
            a, b = x0 * self.scale, x1 * self.scale
            if b <= cap:
                seg = (a + b) / 2
            elif a >= cap:
                seg = cap
            else:  # part of the segment is above the cap
                f = (cap - a) / (b - a)
                seg = f * (a + cap) / 2 + (1 - f) * cap
            total += (p1 - p0) * seg
        return total

    def share(self, low: float, high: float) -> float:
        """P(low <= size < high) of the censored, scaled sizes (high may be inf)."""
        return self._cdf(high) - self._cdf(low)

    def _cdf(self, x: float) -> float:
        """P(size < x)."""
        if x > self.max_bytes:
            return 1.0
        pts = [(s * self.scale, p) for s, p in self.points]
        if x <= pts[0][0]:
            return 0.0
        for (x0, p0), (x1, p1) in itertools.pairwise(pts):
            if x0 < x <= x1:
                return p0 + (p1 - p0) * (x - x0) / (x1 - x0)
        return 1.0


def distribution(name: str, max_bytes: float = DEFAULT_MAX_BYTES, scale: float = 1.0) -> SizeDist:
    """The published CDF ``name`` (``websearch`` or ``datamining``) in bytes."""
    if name not in DISTRIBUTIONS:
        raise ValueError(f"unknown size distribution {name!r} (known: {', '.join(DISTRIBUTIONS)})")
    points = tuple((s * PACKET_BYTES, p) for s, p in DISTRIBUTIONS[name])
    return SizeDist(points, max_bytes, scale)


def arrival_rate(dist: SizeDist, rate_mbps: float) -> float:
    """Flows per second that offer ``rate_mbps`` of application bits with sizes from ``dist``."""
    if rate_mbps <= 0:
        raise ValueError(f"rate_mbps must be > 0, got {rate_mbps}")
    return rate_mbps * 1e6 / 8 / dist.mean()


def poisson_arrivals(
    rng: random.Random, dist: SizeDist, rate_mbps: float
) -> Iterator[tuple[float, int]]:
    """Open-loop arrivals without end: ``(arrival time s, size bytes)`` in time order, with
    exponential gaps of mean 1 / ``arrival_rate`` and sizes drawn from ``dist`` (a gap, then
    that arrival's size: the same seed gives the same sequence)."""
    lam = arrival_rate(dist, rate_mbps)
    t = 0.0
    while True:
        t += rng.expovariate(lam)
        yield t, dist.sample(rng)


def poisson_plan(
    rng: random.Random, dist: SizeDist, rate_mbps: float, seconds: float
) -> list[tuple[float, int]]:
    """The arrivals of ``poisson_arrivals`` in [0, seconds)."""
    return list(
        itertools.takewhile(lambda a: a[0] < seconds, poisson_arrivals(rng, dist, rate_mbps))
    )


def offered_mbps(plan: Sequence[tuple[float, int]], seconds: float) -> float:
    """The load a plan offers, in Mbit/s of application bytes over ``seconds``."""
    if seconds <= 0 or not math.isfinite(seconds):
        raise ValueError(f"seconds must be > 0, got {seconds}")
    return sum(s for _, s in plan) * 8 / seconds / 1e6
