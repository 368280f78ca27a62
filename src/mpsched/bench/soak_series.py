"""A soak's samples of one process (RSS, file descriptors, threads from /proc) and their
series: growth from the first sample to the last, the RSS's slope after a warm-up (Theil-Sen,
and least squares beside it), the span of fds and threads (src/mpsched/bench/soak.py,
soak_fabric.py)."""

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
        """The RSS's Theil-Sen slope over the samples from `after_s` after the process's
        birth on (NaN with fewer than three): a line fitted so follows a steady rise, or
        steps that keep coming, and not one step (a switch reaching a new high-water mark,
        soak_warm.py) unless it falls in the middle third of the window; the least-squares
        line reads any such step as a slope for the whole window
        (`rss_ls_slope_kb_per_min`)."""
        points = self._rss_points(after_s)
        return stats.theil_sen_slope(points) if len(points) >= 3 else stats.NAN

    def rss_ls_slope_kb_per_min(self, after_s: float) -> float:
        """The RSS's least-squares slope over the same samples (NaN with fewer than three)."""
        points = self._rss_points(after_s)
        return stats.slope(points) if len(points) >= 3 else stats.NAN

    def _rss_points(self, after_s: float) -> list[tuple[float, int]]:
        """(minutes, RSS kB) of the samples from `after_s` after the process's birth on."""
        return [(t / 60.0, s.rss_kb) for t, s in self.samples if t >= self.born_s + after_s]

    def span(self, what: str) -> str:
        """"min..max" of `what` ("fds", "threads") over the samples: a rise that came back
        down shows here, not in `growth`."""
        values = [getattr(s, what) for _, s in self.samples]
        return f"{min(values)}..{max(values)}" if values else "-"

    def growth(self, what: str) -> int:
        """The rise of `what` ("fds", "threads") from the most in the first quarter of the
        samples to the most in the last quarter (one sample each with fewer than eight): a
        descriptor open at one sample and not the next (a request in flight, the controller's
        fds 19, 20, 19, ... through a fabric soak) is no rise, one that stays open is."""
        if not self.samples:
            return 0
        values = [getattr(s, what) for _, s in self.samples]
        quarter = max(1, len(values) // 4)
        return int(max(values[-quarter:]) - max(values[:quarter]))


SAMPLES_HEADER = "t_s,process,pid,rss_kb,fds,threads,loop_p99_ms"


def sample_row(t: float, name: str, pid: int, sample: ProcSample, p99: float | None) -> str:
    """One line of a soak's samples.csv (SAMPLES_HEADER)."""
    return (f"{t:.1f},{name},{pid},{sample.rss_kb},{sample.fds},{sample.threads},"
            f"{'' if p99 is None else p99}\n")


def read_samples(path: Path, warmup_s: float) -> tuple[list[Series], list[float]]:
    """A finished soak's samples.csv back as its series (in the order their processes first
    appear) and the controller's loop p99s. A later life (`spine1#2`) was born `warmup_s`
    before its first sample (soak_fabric.py samples a life from its warm-up's end on).
    ValueError names the line of a malformed file."""
    lines = path.read_text().splitlines()
    if not lines or lines[0].strip() != SAMPLES_HEADER:
        raise ValueError(f"{path}: not a soak's samples (first line must be {SAMPLES_HEADER})")
    series: dict[str, Series] = {}
    loop_p99: list[float] = []
    for n, line in enumerate(lines[1:], start=2):
        try:
            t_s, name, pid, rss, fds, threads, p99 = line.split(",")
            t, sample = float(t_s), ProcSample(int(rss), int(fds), int(threads))
            s = series.get(name)
            if s is None:
                born = t - warmup_s if "#" in name else 0.0
                s = series[name] = Series(name, int(pid), [], born_s=born)
            s.samples.append((t, sample))
            if name == "controller" and p99:
                loop_p99.append(float(p99))
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: {exc}") from None
    return list(series.values()), loop_p99


def largest(values: list[float]) -> float:
    """The largest value that is not NaN (NaN if none is)."""
    known = [v for v in values if v == v]
    return max(known) if known else stats.NAN
