"""A soak's samples of one process (RSS, file descriptors, threads from /proc) and their
series: growth from the first sample to the last, the RSS's least-squares slope after a
warm-up, the span of fds and threads (mpsched/bench/soak.py, soak_fabric.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mpsched import stats


@dataclass(frozen=True)
class ProcSample:
    rss_kb: int
    fds: int
    threads: int


def proc_sample(pid: int) -> ProcSample:
    """VmRSS, open file descriptors and threads of a live process (from /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return ProcSample(
        rss_kb=int(fields["VmRSS"].split()[0]),
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(fields["Threads"]),
    )


def growth_pct(first: int, last: int) -> float:
    return 0.0 if first <= 0 else (last - first) * 100.0 / first


@dataclass
class Series:
    """One process's samples after the warm-up (t in seconds from the run's start); a
    process started during the run (a restarted switch) is born at `born_s`."""

    name: str
    pid: int
    samples: list[tuple[float, ProcSample]]
    born_s: float = 0.0

    def rss_growth_pct(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        return growth_pct(self.samples[0][1].rss_kb, self.samples[-1][1].rss_kb)

    def rss_slope_kb_per_min(self, after_s: float) -> float:
        """The RSS's least-squares slope over the samples from `after_s` after the process's
        birth on (NaN with fewer than three)."""
        points = [(t / 60.0, s.rss_kb) for t, s in self.samples if t >= self.born_s + after_s]
        return stats.slope(points) if len(points) >= 3 else stats.NAN

    def span(self, what: str) -> str:
        """"min..max" of `what` ("fds", "threads") over the samples: a rise that came back
        down shows here, not in `growth`."""
        values = [getattr(s, what) for _, s in self.samples]
        return f"{min(values)}..{max(values)}" if values else "-"

    def growth(self, what: str) -> int:
        """The rise of `what` ("fds", "threads") from the first sample to the last."""
        if not self.samples:
            return 0
        return int(getattr(self.samples[-1][1], what) - getattr(self.samples[0][1], what))


def largest(values: list[float]) -> float:
    """The largest value that is not NaN (NaN if none is)."""
    known = [v for v in values if v == v]
    return max(known) if known else stats.NAN
