"""What a fabric run cost the machine: `make bench-fabric`'s CPU keys, from the runs' records.

Every run records the machine's mean idle share (metric ``cpu_idle_pct``), the cores it was
measured on (``cpu_cores``) and each process's CPU share in % of those cores together
(``cpu_shares``, by role: the controller as ``controller``, each BMv2 by its switch's name,
each link emulator by its link's; src/mpsched/lab/cpu.py). From them:

- ``controller_core_pct``: the controller's share of *one* core (share x cores), the mean
  over a policy's runs;
- ``idle_min_pct``: the lowest mean idle of any run (the run closest to CPU-bound);
- ``with_switch_cost``: each run's switches' CPU per delivered Mbit/s (metric
  ``switch_core_pct_per_mbps``: the switches' summed share of one core / the run's goodput),
  which the bench pairs by seed against the plain-forwarding reference's runs
  (``paired_ratios``, src/mpsched/lab/fct.py): what the scheduler costs per byte over plain
  forwarding on the same arrivals.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence

from mpsched import stats
from mpsched.lab.report import RunResult

CONTROLLER_ROLE = "controller"
SWITCH_COST = "switch_core_pct_per_mbps"


def cores_of(result: RunResult) -> float:
    """The cores a run's shares are a part of (NaN when the run did not record them)."""
    return result.metrics.get("cpu_cores", math.nan)


def controller_core_pct(results: Sequence[RunResult], policy: str) -> float:
    """The controller's CPU in % of one core, mean over `policy`'s runs that recorded it (NaN
    when none did)."""
    got = [r.cpu_shares[CONTROLLER_ROLE] * cores_of(r) for r in results
           if r.policy == policy and CONTROLLER_ROLE in r.cpu_shares]
    got = [v for v in got if math.isfinite(v)]
    return stats.mean(got)


def idle_min_pct(results: Sequence[RunResult]) -> float:
    """The lowest mean machine idle (%) of any run (NaN when no run recorded one)."""
    got = [r.metrics.get("cpu_idle_pct", math.nan) for r in results]
    got = [v for v in got if math.isfinite(v)]
    return min(got) if got else math.nan


def switch_core_pct(result: RunResult, switches: Collection[str]) -> float:
    """The switches' summed CPU in % of one core (NaN when a switch's share is missing)."""
    if any(name not in result.cpu_shares for name in switches):
        return math.nan
    return math.fsum(result.cpu_shares[name] for name in switches) * cores_of(result)


def with_switch_cost(results: Sequence[RunResult], switches: Collection[str]) -> list[RunResult]:
    """Copies of `results` with the metric SWITCH_COST: the switches' % of one core per
    delivered Mbit/s (NaN without goodput or shares)."""
    out = []
    for r in results:
        goodput = r.metrics.get("goodput_mbps", math.nan)
        cost = switch_core_pct(r, switches) / goodput if goodput > 0 else math.nan
        out.append(dataclasses.replace(r, metrics={**r.metrics, SWITCH_COST: cost}))
    return out
