"""The controller's CPU budget: the share of a core its process may use, kept by stepping
fewer of a large fabric's pairs per control step.

A control step steps a fabric's due pairs, most overdue first, until its share of the period
is spent (the parameter `step_budget_pct`, src/mpsched/controller/scheduling/due.py). Once a fabric
has
more active pairs than fit, the loop uses that share of a core whatever else the process does:
at 64 leaves the reports' intake, the agents' polls and writes, the recorder and gRPC's
threads take some 40 % of a core besides (docs/results/scale.md). `CpuGovernor` measures the
process's CPU over each window of WINDOW_S and, while it is over the budget (the parameter
`cpu_budget_pct`; it aims at AIM of it), lowers the share a step may spend, by GAIN times the
excess per window, down to MIN_STEP_SHARE; under it, it gives the share back, up to
`step_budget_pct`.
The price is the pairs' refresh time (from an input to the step that sees it), which grows
as the share falls; a fabric whose due pairs all fit in the lowered share (a small one)
loses nothing, and with two edges no step has a budget at all.

An integral controller on the loop's share: the loop's CPU follows its share about one to one
while pairs are left over, so the gain of 0.5 settles within a few windows without
overshooting, and a window of 2 s averages out single slow steps and bursts of REST calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# The process's CPU budget by default, % of one core: on the lab's two cores the controller
# leaves one and a half to the switches and the link emulators it shares them with.
CPU_BUDGET_PCT = 50.0
MAX_CPU_BUDGET_PCT = 1000.0  # ten cores' worth: past that a budget means nothing here
WINDOW_S = 2.0  # the CPU is measured over windows this long
GAIN = 0.5  # of the excess over the aim, taken off the step's share per window
# The governor aims this far under the budget: the process's CPU over a window varies by a
# few points of a core (a slow step, a burst of REST calls, a re-route), and the budget is a
# ceiling, not a mean (at 50 % of a core it aims at 47.5).
AIM = 0.95
# A step's least share of the period however far over the budget: 2 ms of a 100 ms period
# steps a handful of pairs, so every due pair is still reached, only later.
MIN_STEP_SHARE = 0.02


def next_share(share: float, step_share: float, cpu_share: float, cpu_budget: float,
               gain: float = GAIN, floor: float = MIN_STEP_SHARE) -> float:
    """The step's share of the period after a window in which it was `share` and the process
    used `cpu_share` of a core against `cpu_budget` (all fractions): lowered by `gain` times
    the excess, raised by as much under the budget, within [floor, step_share]."""
    least = min(floor, step_share)
    return min(step_share, max(least, share - gain * (cpu_share - cpu_budget)))


class CpuGovernor:
    """The share of each control period a step may spend under the CPU budget.

    `clock` and `cpu_clock` are the wall and the process's CPU clocks (seconds; tests and
    bench-scale give their own: the bench takes out the CPU its synthetic reports cost to
    make, which a controller's process does not spend)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 cpu_clock: Callable[[], float] = time.process_time,
                 window_s: float = WINDOW_S) -> None:
        self.clock = clock
        self.cpu_clock = cpu_clock
        self.window_s = window_s
        self.cpu_share: float | None = None  # the process's CPU over the last whole window
        self._share: float | None = None  # the governed share (None: not lowered)
        self._window: tuple[float, float] | None = None  # its start: (wall, cpu)

    def step_share(self, step_share: float, cpu_budget: float | None) -> float:
        """The share of this period the step may spend: `step_share` (the parameter
        `step_budget_pct` as a fraction), lowered while the process used more than
        `cpu_budget` of a core (a fraction; None: no budget)."""
        now, cpu = self.clock(), self.cpu_clock()
        if self._window is None:
            self._window = (now, cpu)
        elif now - self._window[0] >= self.window_s:
            used = (cpu - self._window[1]) / (now - self._window[0])
            self.cpu_share, self._window = used, (now, cpu)
            if cpu_budget is not None:
                self._share = next_share(self.share_now(step_share), step_share, used,
                                         AIM * cpu_budget)
        if cpu_budget is None:
            self._share = None
        return self.share_now(step_share)

    def share_now(self, step_share: float) -> float:
        """The share the next step gets (without measuring), for GET /decisions."""
        return step_share if self._share is None else min(self._share, step_share)
