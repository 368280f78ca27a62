"""Sample statistics shared by the controller, the lab and the benchmarks (one definition).

Mean, median and percentile, empirical CDF, mean with its Student-t 95 % confidence interval,
a summary of one metric over runs, ratios paired by seed, a least-squares and a Theil-Sen
slope. Pure functions on plain Python values: the controller imports this module too, and
needs neither numpy nor scipy for it (the t quantiles are a table and an expansion, checked
against printed tables in tests/unit/test_stats.py). Conventions: an empty input gives NaN
(never an exception), so that a run without samples reports "no value" instead of failing;
invalid arguments (q outside [0, 100], df < 1) raise ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

NAN = float("nan")
K = TypeVar("K", bound=Hashable)


def mean(xs: Iterable[float]) -> float:
    """The arithmetic mean (``math.fsum``, exact rounding). Empty input → NaN."""
    vals = [float(x) for x in xs]
    return math.fsum(vals) / len(vals) if vals else NAN


def median(xs: Iterable[float]) -> float:
    """The median: the 50th `percentile` (the mean of the two middle values of an even
    count, as ``statistics.median``). Empty input → NaN."""
    return percentile(xs, 50)


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


def iqr(xs: Iterable[float]) -> float:
    """The interquartile range: the 75th minus the 25th `percentile`. Empty input → NaN."""
    vals = list(xs)
    return percentile(vals, 75) - percentile(vals, 25)


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


def ratio(a: float, b: float) -> float:
    """a / b, NaN unless both are finite and b > 0 (a ratio to a reference that is missing,
    zero or infinite says nothing)."""
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else NAN


def paired_ratios(values: Mapping[K, float], reference: Mapping[K, float]) -> list[float]:
    """values[k] / reference[k] for every key k (a seed) in both, in the order of `values`;
    a key whose `ratio` is NaN (a value not finite, a reference not finite and positive) is
    left out.

    Runs with the same seed see the same arrivals, sizes and link randomness, so most of the
    run-to-run spread cancels in the ratio: its interval says whether one policy beats
    another where the unpaired means' intervals overlap (Jain 1991, §13.4.1, paired
    observations)."""
    got = (ratio(v, reference[k]) for k, v in values.items() if k in reference)
    return [r for r in got if not math.isnan(r)]


@dataclass(frozen=True)
class PairedRatio:
    """The mean of ratios paired by seed, the half width of its 95 % interval (NaN for n < 2)
    and the number of seeds n (the mean is NaN for n = 0)."""

    mean: float
    ci95: float
    n: int


def paired_ratio(values: Mapping[K, float], reference: Mapping[K, float]) -> PairedRatio:
    """`paired_ratios` summed up as mean ± 95 % interval (`mean_ci95`) over the seeds."""
    ratios = paired_ratios(values, reference)
    return PairedRatio(*mean_ci95(ratios), len(ratios))


def theil_sen_slope(points: Iterable[tuple[float, float]]) -> float:
    """The Theil-Sen slope of the (x, y) points: the median of the slopes between every two
    points of distinct x (NaN without such a pair). A line fitted so is robust to a step:
    one jump at a fraction f of the span moves only the 2 f (1 - f) <= 1/2 of the pairs
    that straddle it, so the median stays with the slope on either side, while a steady rise,
    or steps that keep coming, move every pair (Sen 1968, JASA 63:1379)."""
    pts = sorted((float(x), float(y)) for x, y in points)
    slopes = [
        (y2 - y1) / (x2 - x1)
        for i, (x1, y1) in enumerate(pts)
        for x2, y2 in pts[i + 1:]
        if x2 != x1
    ]
    if not slopes:
        return NAN
    slopes.sort()
    mid = len(slopes) // 2
    return slopes[mid] if len(slopes) % 2 else (slopes[mid - 1] + slopes[mid]) / 2


def slope(points: Iterable[tuple[float, float]]) -> float:
    """The least-squares slope of the (x, y) points (NaN with fewer than two distinct x)."""
    pts = [(float(x), float(y)) for x, y in points]
    if len({x for x, _ in pts}) < 2:
        return NAN
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx
