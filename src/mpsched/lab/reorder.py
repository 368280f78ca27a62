"""Reordering at the receiver (RFC 4737), from per-flow sequence numbers or IPv4 IDs: one of
the measurement metrics (src/mpsched/lab/metrics.py has the others and their conventions).
Pure functions on plain Python values."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field


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
        return self.reordered / self.packets if self.packets else math.nan

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
