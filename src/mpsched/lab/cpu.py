"""Was the machine the bottleneck? CPU idle and per-process CPU shares of a run, from /proc.

The testbed (two BMv2 switches, the link emulators, the controller, the traffic tools) shares
the machine's few cores; a run taken on a saturated machine measures the machine, not the
policy. The runner samples two kernel counters (``CpuSampler`` in ``cpu_sampler.py``); this module
holds the pure parsing and arithmetic:

- ``/proc/stat`` (proc(5)): the ``cpu`` line sums, over all cores, the time spent in each state
  in USER_HZ ticks. Idle time is ``idle + iowait``; the total is the sum of the first eight
  fields (user nice system idle iowait irq softirq steal; guest and guest_nice are already
  inside user and nice). The idle share of an interval is Δidle / Δtotal, in % of all cores.
  A run confined to some cores (``taskset -c 0 mpsched run ...``: every process it starts
  inherits the affinity) is measured on those cores only: the ``cpuN`` lines of its cores are
  summed instead (``allowed_cpus``), so "all cores" below means the cores the run may use.
- ``/proc/<pid>/stat``: fields 14 and 15 (utime, stime) are the CPU time of the process in the
  same ticks. A process's share of an interval is Δ(utime + stime) / Δtotal of ``/proc/stat``,
  so it is in % of the whole machine (all cores = 100 %, like the idle share), and idle plus
  all shares plus everything else running sums to 100 %. The kernel's packet work in softirq
  context (veths, TCP) is not charged to any process: it is in that "everything else".
  Resolution: one tick (10 ms at USER_HZ 100) per interval, i.e. 1 % of a 2-core machine for
  a 0.5 s interval; shares over a whole run are much finer.

Under a CPU limit (``--cpu-limit P``, src/mpsched/proc/cpulimit.py: the testbed's cgroup may use
P % of the cores) the idle share is against the limit: each sample also holds the cgroup's CPU
usage, and an interval's idle is what the testbed left of its quota, 100 x (1 - Δusage /
(P / 100 x ncpus x Δwall)), but no more than the machine had idle (``limited_idle_pct``: a
quota is a ceiling, not a guarantee; other programs can take the rest). Process shares stay
in % of the whole machine.

A run is ``cpu_bound`` (``CpuRule``) when the idle share stayed below ``idle_below_pct`` for
more than ``max_time_pct`` of the measured time; ``None`` (unknown) when fewer than two samples
fall in the measured time.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Annotated

from mpsched.proc.cgroups import CpuLimit
from mpsched.validation import KeyCheck, number

NAN = float("nan")
STAT_FIELDS = 8  # user nice system idle iowait irq softirq steal


class ProcParseError(ValueError):
    """A /proc text that does not have the documented format."""


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative ticks of the ``cpu`` line of /proc/stat: idle (idle + iowait) and total."""

    idle: int
    total: int


@dataclass(frozen=True)
class CpuRule(KeyCheck):
    """When a run counts as CPU-bound: idle < ``idle_below_pct`` % of all cores for more than
    ``max_time_pct`` % of the measured time (scenario key ``cpu_bound``)."""

    idle_below_pct: Annotated[float, number(0, 100)] = 10.0
    max_time_pct: Annotated[float, number(0, 100)] = 20.0

    def describe(self) -> str:
        return (
            f"machine idle < {self.idle_below_pct:g} % for more than "
            f"{self.max_time_pct:g} % of the measured time"
        )


@dataclass(frozen=True)
class CpuSample:
    """One sample: wall time, /proc/stat, per role (e.g. ``s1``) (pid, utime + stime), and
    under a CPU limit the limit and its cgroup's CPU usage (s)."""

    t: float
    cpu: CpuTimes
    procs: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    usage_s: float | None = None
    limit: CpuLimit | None = None


def _cpu_line(line: str) -> CpuTimes:
    values = line.split()[1 : 1 + STAT_FIELDS]
    if len(values) < 4:
        raise ProcParseError(f"/proc/stat: short cpu line {line!r}")
    try:
        ticks = [int(v) for v in values]
    except ValueError:
        raise ProcParseError(f"/proc/stat: non-numeric cpu line {line!r}") from None
    return CpuTimes(idle=ticks[3] + (ticks[4] if len(ticks) > 4 else 0), total=sum(ticks))


def parse_proc_stat(text: str, cpus: Collection[int] | None = None) -> CpuTimes:
    """The aggregate ``cpu`` line of /proc/stat, or with `cpus` the sum of those cores'
    ``cpuN`` lines (every one of them must be there)."""
    lines = {parts[0]: line for line in text.splitlines() if (parts := line.split())}
    if cpus is None:
        if "cpu" not in lines:
            raise ProcParseError("/proc/stat: no aggregate 'cpu' line")
        return _cpu_line(lines["cpu"])
    if not cpus:
        raise ProcParseError("/proc/stat: no cores asked for")
    missing = sorted(n for n in cpus if f"cpu{n}" not in lines)
    if missing:
        raise ProcParseError(f"/proc/stat: no line for core(s) {missing}")
    per_core = [_cpu_line(lines[f"cpu{n}"]) for n in sorted(cpus)]
    return CpuTimes(idle=sum(c.idle for c in per_core), total=sum(c.total for c in per_core))


def allowed_cpus(affinity: Collection[int], online: int) -> frozenset[int] | None:
    """The cores to measure a run on: None (the aggregate line) when this process may use
    every one of the `online` cores, else its affinity (``os.sched_getaffinity(0)``)."""
    cores = frozenset(affinity)
    return None if cores >= frozenset(range(online)) else cores


def parse_pid_stat(text: str) -> int:
    """utime + stime (ticks) from a /proc/<pid>/stat line.

    The second field, ``(comm)``, may itself contain spaces and parentheses, so the fields
    are counted from the last ``)``: state is field 3, utime field 14, stime field 15.
    """
    close = text.rfind(")")
    if close < 0:
        raise ProcParseError(f"/proc/<pid>/stat: no '(comm)' in {text[:80]!r}")
    rest = text[close + 1 :].split()
    if len(rest) < 13:
        raise ProcParseError(f"/proc/<pid>/stat: too few fields in {text[:80]!r}")
    try:
        return int(rest[11]) + int(rest[12])  # rest[0] is field 3
    except ValueError:
        raise ProcParseError(
            f"/proc/<pid>/stat: non-numeric utime/stime in {text[:80]!r}"
        ) from None


def idle_pct(before: CpuTimes, after: CpuTimes) -> float:
    """Idle share (%) of all cores between two samples; NaN when no time passed or the counters
    went backwards (a reset: never happens on a running kernel, but never divide by it)."""
    d_total = after.total - before.total
    d_idle = after.idle - before.idle
    if d_total <= 0 or d_idle < 0:
        return NAN
    return min(100.0, 100.0 * d_idle / d_total)


def limited_idle_pct(
    usage_delta_s: float, wall_delta_s: float, limit: CpuLimit, machine_idle_pct: float = NAN
) -> float:
    """Idle share (%) of a CPU limit over an interval: the part of the limit's CPU
    (``limit.cores`` x `wall_delta_s`) the cgroup did not use (`usage_delta_s`), but no more
    than the machine had idle (`machine_idle_pct` of the limit's cores; NaN: not known);
    clamped to 0..100 (the kernel enforces the quota per period, so an interval can hold a
    little more). NaN when no time passed or the usage went backwards."""
    if wall_delta_s <= 0 or usage_delta_s < 0:
        return NAN
    capacity = limit.cores * wall_delta_s
    left = capacity - usage_delta_s
    if math.isfinite(machine_idle_pct):
        left = min(left, machine_idle_pct / 100.0 * limit.ncpus * wall_delta_s)
    return min(100.0, max(0.0, 100.0 * left / capacity))


def interval_idle_pct(a: CpuSample, b: CpuSample) -> float:
    """The idle share between two samples: against the limit where both have one
    (``limited_idle_pct``), else of the machine (``idle_pct``)."""
    machine = idle_pct(a.cpu, b.cpu)
    if b.limit is None or a.usage_s is None or b.usage_s is None:
        return machine
    return limited_idle_pct(b.usage_s - a.usage_s, b.t - a.t, b.limit, machine)


def limit_pct(samples: Sequence[CpuSample]) -> float | None:
    """The CPU limit (% of the cores) the samples were taken under; None without one."""
    return next((s.limit.pct for s in samples if s.limit is not None), None)


def idle_series(samples: Sequence[CpuSample], t0: float = 0.0) -> list[tuple[float, float, float]]:
    """Per interval between consecutive samples: (start_s, end_s, idle %), times - ``t0``
    (idle against the CPU limit where there is one: ``interval_idle_pct``)."""
    return [
        (a.t - t0, b.t - t0, interval_idle_pct(a, b)) for a, b in pairwise(samples) if b.t > a.t
    ]


def process_ticks(samples: Sequence[CpuSample]) -> dict[str, int]:
    """CPU ticks each role used between the first and the last sample.

    A role's ticks are summed over the processes it had: when its pid changes or its counter
    goes down (the process was replaced), the old process counts up to its last sample and the
    new one from 0. A role first seen after the first sample started during the sampled time:
    it counts from 0. A process that exits counts up to its last sample (at most one sampling
    interval is missed).
    """
    used: dict[str, int] = {}
    last: dict[str, tuple[int, int]] = {}  # role -> (pid, ticks at its last sample)
    for k, sample in enumerate(samples):
        for role, (pid, ticks) in sample.procs.items():
            if role not in last:
                used[role] = 0
                base = ticks if k == 0 else 0
                last[role] = (pid, base)
            prev_pid, prev_ticks = last[role]
            if pid != prev_pid or ticks < prev_ticks:
                prev_ticks = 0  # a new process: counts from its start
            used[role] += ticks - prev_ticks
            last[role] = (pid, ticks)
    return used


def process_shares(samples: Sequence[CpuSample]) -> dict[str, float]:
    """Each role's CPU share (%) of the whole machine between the first and the last sample
    (``process_ticks`` / Δtotal of /proc/stat); empty with fewer than two samples."""
    if len(samples) < 2:
        return {}
    d_total = samples[-1].cpu.total - samples[0].cpu.total
    if d_total <= 0:
        return {}
    return {role: 100.0 * t / d_total for role, t in sorted(process_ticks(samples).items())}


def low_idle_fraction(series: Sequence[tuple[float, float, float]], below_pct: float) -> float:
    """Fraction (0..1) of the covered time whose idle share was < ``below_pct``, weighting each
    interval by its length (intervals with an undefined idle share are left out); NaN when no
    interval is usable."""
    usable = [
        (end - start, idle) for start, end, idle in series if end > start and math.isfinite(idle)
    ]
    covered = math.fsum(d for d, _ in usable)
    if covered <= 0:
        return NAN
    return math.fsum(d for d, idle in usable if idle < below_pct) / covered


def window(
    series: Sequence[tuple[float, float, float]], start: float, end: float
) -> list[tuple[float, float, float]]:
    """The intervals clipped to [start, end] (those outside dropped)."""
    out = []
    for a, b, idle in series:
        a2, b2 = max(a, start), min(b, end)
        if b2 > a2:
            out.append((a2, b2, idle))
    return out


def is_cpu_bound(series: Sequence[tuple[float, float, float]], rule: CpuRule) -> bool | None:
    """The marking rule: True when idle < ``rule.idle_below_pct`` for more than
    ``rule.max_time_pct`` % of the time the series covers; None (unknown) without usable
    intervals (e.g. a run shorter than one sampling interval)."""
    frac = low_idle_fraction(series, rule.idle_below_pct)
    if math.isnan(frac):
        return None
    return 100.0 * frac > rule.max_time_pct


def interval_rows(
    samples: Sequence[CpuSample], t0: float = 0.0
) -> tuple[list[str], list[list[float]]]:
    """The per-interval table of a run (``cpu.csv``): roles in first-seen order, and per
    interval [start_s, end_s, idle % (``interval_idle_pct``), share % of the machine of each
    role (NaN while a role had no process)]."""
    roles = list(dict.fromkeys(r for s in samples for r in s.procs))
    rows = []
    for a, b in pairwise(samples):
        if b.t <= a.t:
            continue
        d_total = b.cpu.total - a.cpu.total
        row = [a.t - t0, b.t - t0, interval_idle_pct(a, b)]
        for role in roles:
            if role not in b.procs or d_total <= 0:
                row.append(NAN)
                continue
            ticks = process_ticks(
                [CpuSample(a.t, a.cpu, _only(a, role)), CpuSample(b.t, b.cpu, _only(b, role))]
            )
            row.append(100.0 * ticks.get(role, 0) / d_total)
        rows.append(row)
    return roles, rows


def _only(sample: CpuSample, role: str) -> dict[str, tuple[int, int]]:
    return {role: sample.procs[role]} if role in sample.procs else {}
