"""An edge's path liveness, rebuilt from what it received: for explaining a failover run.

An edge a judges its path p towards edge e by e's feedback (docs/fabric-dataplane.md, "Liveness";
p4src/include/liveness.p4): a tag from e with `fb_path` p, arriving at t with age `fb_age`,
says p delivered at t - fb_age; the path is dead while the latest such sign is more than
`dead_after` old. A capture of what a's ports towards the fabric receive (`tcpdump -Q in`,
fabric_failover.start_captures with `inbound`) holds every such tag, so the state of each of
a's paths at any instant can be replayed (up to the capture's and the switch's timing: a
frame is captured just before BMv2 takes it in). `states_at` answers, for the late frames of
a failover run, whether the sending edge then held the failed path alive, or its pair's every
path dead (the data plane then falls back on every weighted path, path_select.p4).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from mpsched.testing.tagcap import TagFrame, TagKey

Cell = tuple[int, int, int]  # (the judging edge, its peer edge, path id)


@dataclass(frozen=True)
class Signs:
    """Per cell, the arrival times of the peer's feedback about it and the latest delivery
    vouched for by then (a running maximum: liveness keeps the latest sign)."""

    arrivals: dict[Cell, list[float]]
    latest: dict[Cell, list[float]]

    def last_seen(self, cell: Cell, t: float) -> float | None:
        """The cell's last sign of life as judged at `t` (None: no feedback yet)."""
        times = self.arrivals.get(cell, [])
        i = bisect.bisect_right(times, t)
        return self.latest[cell][i - 1] if i else None

    def alive(self, cell: Cell, t: float, dead_after_s: float) -> bool:
        seen = self.last_seen(cell, t)
        return seen is not None and t - seen <= dead_after_s


def signs(received: Iterable[TagFrame]) -> Signs:
    """The feedback signs in frames the edges received: a frame keyed (e, a, path) with
    fb_path p at t is, for edge a, a sign that a's path p towards e delivered at t - age."""
    arrivals: dict[Cell, list[float]] = {}
    latest: dict[Cell, list[float]] = {}
    for f in sorted(received, key=lambda f: f.ts):
        if f.fb_path == 0:
            continue
        src, dst, _ = f.key
        cell = (dst, src, f.fb_path)
        delivered = f.ts - f.fb_age_s
        runs = latest.setdefault(cell, [])
        arrivals.setdefault(cell, []).append(f.ts)
        runs.append(max(delivered, runs[-1]) if runs else delivered)
    return Signs(arrivals, latest)


def dead_spans(s: Signs, cell: Cell, dead_after_s: float, start: float, end: float
               ) -> list[tuple[float, float]]:
    """The spans within [start, end) in which the cell was dead. Its last sign changes only
    at the arrivals of its feedback, so between two arrivals it dies at most once."""
    bounds = [start, *(x for x in s.arrivals.get(cell, []) if start < x < end), end]
    spans: list[tuple[float, float]] = []
    for lo, hi in itertools.pairwise(bounds):
        seen = s.last_seen(cell, lo)
        dies = lo if seen is None else max(lo, seen + dead_after_s)
        if dies >= hi:
            continue
        if spans and spans[-1][1] == dies:
            spans[-1] = (spans[-1][0], hi)
        else:
            spans.append((dies, hi))
    return spans


def states_at(s: Signs, late: Iterable[tuple[float, TagKey]], down_t: float, paths: int,
              dead_after_s: float) -> list[tuple[float, TagKey, dict[int, bool]]]:
    """For each late frame (ms after down_t, (src, dst, path)): whether its sender judged
    each path 1..`paths` towards dst alive at that instant."""
    out = []
    for ms, key in late:
        src, dst, _ = key
        t = down_t + ms / 1000.0
        out.append((ms, key, {p: s.alive((src, dst, p), t, dead_after_s)
                              for p in range(1, paths + 1)}))
    return out
