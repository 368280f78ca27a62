"""Sample statistics shared by the controller, the lab and the benchmarks (one definition)."""

from __future__ import annotations

import math
from collections.abc import Iterable

NAN = float("nan")


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
