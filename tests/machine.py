"""Was the machine saturated while a live test ran? The lab runner's CPU record
(mpsched.lab.cpu, sampled as mpsched.lab.runner.CpuSampler does for each experiment run),
taken over one test, so that a live test failing on a deadline says whether the machine was
the bottleneck (by the runner's own `cpu_bound` rule) rather than only that the code was late.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mpsched.lab import cpu
from mpsched.lab.cpu_sampler import CpuSampler, read_cpu_sample

SAMPLE_S = 0.5


@dataclass(frozen=True)
class LoadRecord:
    """The machine's idle share over a test, judged by the experiment runner's rule."""

    cpu_bound: bool | None  # None: too short to tell
    low_idle_pct: float  # % of the time with idle below rule.idle_below_pct
    mean_idle_pct: float
    rule: cpu.CpuRule

    def describe(self) -> str:
        if self.cpu_bound is None:
            return "machine load unknown (the test was shorter than one CPU sample)"
        verdict = "SATURATED (cpu_bound)" if self.cpu_bound else "not saturated"
        return (f"machine {verdict} during the test: mean idle {self.mean_idle_pct:.0f} %, "
                f"idle < {self.rule.idle_below_pct:g} % for {self.low_idle_pct:.0f} % of the "
                f"time (rule: {self.rule.describe()})")


def record(samples: list[cpu.CpuSample], rule: cpu.CpuRule | None = None) -> LoadRecord:
    """The LoadRecord of `samples` (pure: the sampling is MachineLoad's)."""
    rule = rule or cpu.CpuRule()
    series = cpu.idle_series(samples)
    usable = [(b - a, idle) for a, b, idle in series if b > a and math.isfinite(idle)]
    covered = math.fsum(d for d, _ in usable)
    mean = math.fsum(d * idle for d, idle in usable) / covered if covered > 0 else math.nan
    frac = cpu.low_idle_fraction(series, rule.idle_below_pct)
    return LoadRecord(cpu.is_cpu_bound(series, rule), 100.0 * frac, mean, rule)


class MachineLoad:
    """Samples the machine's CPU (no processes by role) from enter to exit."""

    def __init__(self, period: float = SAMPLE_S) -> None:
        self.sampler = CpuSampler(dict, period=period)
        self.result: LoadRecord | None = None

    def __enter__(self) -> MachineLoad:
        self.sampler.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.result = record(self.sampler.stop())

    def so_far(self) -> LoadRecord:
        """The record up to now (while the test still runs)."""
        if self.result is not None:
            return self.result
        now = read_cpu_sample({}, cpus=self.sampler.cpus)
        return record([*self.sampler.samples, now])
