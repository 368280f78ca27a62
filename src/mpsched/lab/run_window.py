"""What the two-edge and the fabric analyses (analysis.py, fabric_analysis.py) both take from
a run's raw reports over the measurement window: counters read at a time, a censored
transfer's FCT and the machine's load. Both import it; neither imports the other's helpers.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from mpsched.lab import cpu
from mpsched.lab.cpu_sampler import measured_cores
from mpsched.lab.runner import RunRaw


def interp(series: list[tuple[float, float]], t: float) -> float:
    """Cumulative counter value at time t (linear between samples, clamped at the ends)."""
    if not series:
        return 0.0
    if t <= series[0][0]:
        return series[0][1]
    for (t1, v1), (t2, v2) in itertools.pairwise(series):
        if t1 <= t <= t2:
            return v1 if t2 == t1 else v1 + (v2 - v1) * (t - t1) / (t2 - t1)
    return series[-1][1]


def transfer_fct(transfer: dict[str, Any], report: dict[str, Any]) -> tuple[float | None, bool]:
    """A sender's transfer as the FCT figures count it: (its FCT, False) when it completed,
    (None, False) when it failed, (the time it had run, True) when it was still running at
    the end (`censored_fct_s`, None when that is not known)."""
    if "fct_s" in transfer:
        return float(transfer["fct_s"]), False
    if "error" in transfer:
        return None, False
    return censored_fct_s(transfer, report), True


def censored_fct_s(transfer: dict[str, Any], report: dict[str, Any]) -> float | None:
    """How long a transfer still running when its sender ended had run: the report's end
    minus the transfer's arrival (or start); None when either is missing."""
    began = transfer.get("arrival", transfer.get("start"))
    ended = report.get("ended")
    if began is None or ended is None:
        return None
    return max(0.0, float(ended) - float(began))


def cpu_load(raw: RunRaw, w0: float, w1: float) -> dict[str, Any]:
    """The machine's load in the window [w0, w1] (s after traffic start): the RunResult
    fields cpu_bound, cpu_rule, cpu_idle, cpu_shares, cpu_limit_pct (the CPU limit the run
    had, None without one: idle and cpu_bound are against it), and the metrics cpu_idle_pct,
    cpu_low_idle_pct (absent without samples) and cpu_cores (the cores the shares are a part
    of: the run's measured cores, `cpu_sampler.measured_cpus`)."""
    rule = raw.scenario.cpu_rule
    samples = raw.cpu_samples
    idle = cpu.window(cpu.idle_series(samples, raw.t0), w0, w1)
    # the samples that enclose the window: the last at or before w0 to the first at or after w1
    rel = [s.t - raw.t0 for s in samples]
    first = max((k for k, t in enumerate(rel) if t <= w0), default=0)
    last = min((k for k, t in enumerate(rel) if t >= w1), default=len(samples) - 1)
    out: dict[str, Any] = {
        "cpu_bound": cpu.is_cpu_bound(idle, rule),
        "cpu_rule": {"idle_below_pct": rule.idle_below_pct, "max_time_pct": rule.max_time_pct},
        "cpu_idle": idle,
        "cpu_shares": cpu.process_shares(samples[first : last + 1]),
        "cpu_limit_pct": cpu.limit_pct(samples),
        "metrics": {"cpu_cores": float(measured_cores())},
    }
    usable = [(b - a, x) for a, b, x in idle if math.isfinite(x)]
    covered = math.fsum(d for d, _ in usable)
    if covered > 0:
        out["metrics"]["cpu_idle_pct"] = math.fsum(d * x for d, x in usable) / covered
        out["metrics"]["cpu_low_idle_pct"] = 100.0 * cpu.low_idle_fraction(
            idle, rule.idle_below_pct
        )
    return out
