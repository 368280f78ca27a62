"""Path weights -> cumulative hash-bucket ends written into `set_weights`.

The data plane hashes each flow into a bucket in [0, BUCKETS) and picks path i
when end_{i-1} <= bucket < end_i. Buckets are shared out in proportion to the
weights by the largest-remainder method, so the ends are exact integers, never
decrease, and the last used end is BUCKETS.
"""

from __future__ import annotations

from collections.abc import Sequence

BUCKETS = 1 << 16
MAX_WEIGHT = 255


def bucket_ends(weights: Sequence[int], buckets: int = BUCKETS) -> list[int]:
    """Cumulative bucket ends for weights[0..n-1] (paths 1..n).

    All-zero weights give all-zero ends: no path is chosen and the data plane
    drops the packet.
    """
    if any(w < 0 for w in weights):
        raise ValueError("weights must not be negative")
    total = sum(weights)
    if total == 0:
        return [0] * len(weights)
    exact = [w * buckets / total for w in weights]
    shares = [int(x) for x in exact]
    leftover = buckets - sum(shares)
    by_remainder = sorted(
        (i for i, w in enumerate(weights) if w > 0),
        key=lambda i: (-(exact[i] - shares[i]), i),
    )
    for i in by_remainder[:leftover]:
        shares[i] += 1
    ends, running = [], 0
    for share in shares:
        running += share
        ends.append(running)
    return ends


def path_for_bucket(ends: Sequence[int], bucket: int) -> int:
    """The path id (1-based) the data plane picks for a bucket; 0 for none."""
    for i, end in enumerate(ends):
        if bucket < end:
            return i + 1
    return 0
