"""Which pairs a control step must visit: those whose inputs changed since their last step.

A fabric of E edges has E · (E - 1) pairs (controller/routes.py), and a step over every one
of them every control period costs the controller a core from a few dozen edges on
(docs/results/scale.md). A pair's step is a function of its view (its paths' estimates,
controller/telemetry/intake.py), of the scheduler's configuration (classes, policies,
parameters, administrative states) and of the routing, and, for a policy whose decision
repeats on equal inputs (`Policy.repeats`), of nothing else. So a pair is due when

- it has not been stepped yet, or its policy does not repeat;
- its direction was handed a report or an RTT sample since its last step (`inputs`);
- the configuration or the routing changed (`context`: whatever identifies them);
- its view changes with time alone (`until`, `PathEstimator.changes_at`): a path's liveness
  verdict flips when no report came for `dead_after_s`, its srtt, rttvar and bytes in flight
  go stale after `stale_after_s` and then age towards their priors, read every
  AGE_STEP_S while they do.

Otherwise its step would decide what it decided last time, and is skipped.

The due pairs are stepped most overdue first (`by_overdue`: the longest waiting since their
inputs changed, `overdue_since`) within a time budget per control step (`within_budget`, a
fraction of the control period, ControllerSettings.step_budget): those not reached stay due
and wait for the next step, first in line. So a step never outlasts its period and the loop's
CPU is bounded, whatever the number of active pairs; the price is the pairs' refresh time
(from an input change to the step that sees it), which the stepper keeps
(`Stepper.refresh_ms`). A small fabric's due pairs all fit: each is stepped in the period its
input came, as before (docs/fabric.md, "Scheduling per pair").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# How often an aging estimate (srtt, rttvar: exp(-t / age_tau_s), 2 s by default) is read
# again while nothing else changes: it moves by at most 1 - e^-0.1, about 10 % of what is
# left of its way to the prior, between two steps.
AGE_STEP_S = 0.2


@dataclass(frozen=True)
class Stepped:
    """What a pair's last step saw."""

    inputs: int  # the count of its direction's inputs then (TelemetryIntake.unit_inputs)
    context: Hashable  # the configuration and routing then
    until: float  # when its view changes with time alone (math.inf: not without input)


def is_due(last: Stepped | None, inputs: int, context: Hashable, now: float,
           repeats: bool = True) -> bool:
    """Whether a pair whose last step saw `last` must be stepped at `now`."""
    return (
        last is None
        or not repeats
        or last.inputs != inputs
        or last.context != context
        or now >= last.until
    )


def overdue_since(noticed: float, input_since: float | None, last: Stepped | None,
                  now: float) -> float:
    """Since when a due pair has waited: the first input since its last step, the moment
    its view changed with time alone, or (a changed configuration or routing, a first step)
    when the stepper first found it due (`noticed`), whichever is earliest."""
    since = noticed
    if input_since is not None:
        since = min(since, input_since)
    if last is not None and now >= last.until:
        since = min(since, last.until)
    return since


def by_overdue(due: Sequence[tuple[float, T]]) -> list[tuple[float, T]]:
    """The due pairs (since when each waits, the pair) most overdue first; ties in the
    given order."""
    return sorted(due, key=lambda item: item[0])


def within_budget(due: Sequence[tuple[float, T]], step: Callable[[float, T], None],
                  budget_s: float | None, clock: Callable[[], float] = time.perf_counter,
                  start: float | None = None) -> list[tuple[float, T]]:
    """Step the due pairs most overdue first until `budget_s` of `clock` since `start` (by
    default: now) is spent (None: no budget); at least one is stepped. Returns those not
    reached, most overdue first."""
    ordered = by_overdue(due)
    start = clock() if start is None else start
    for i, (since, item) in enumerate(ordered):
        if budget_s is not None and i > 0 and clock() - start >= budget_s:
            return ordered[i:]
        step(since, item)
    return []
