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

Finding them does not visit every pair in every step (`DueQueue`): the due pairs wait in a
queue between steps, and a step adds only those whose direction was handed an input since the
last (the intake's `take_dirty`) and those whose view's time came (a timer per stepped pair);
the stepper looks at every pair again only when the configuration, the routing or the ready
switches changed.

The due pairs are stepped most overdue first (the longest waiting since their inputs
changed, `overdue_since`) within a time budget per control step (`within_budget`, a
fraction of the control period, ControllerSettings.step_budget): those not reached stay due
and wait for the next step, first in line. So a step never outlasts its period and the loop's
CPU is bounded, whatever the number of active pairs; the price is the pairs' refresh time
(from an input change to the step that sees it), which the stepper keeps
(`Stepper.refresh_ms`). A small fabric's due pairs all fit: each is stepped in the period its
input came, as before (docs/fabric.md, "Scheduling per pair").
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

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


@dataclass
class DueQueue:
    """The due pairs (by key) between control steps, most overdue first, and when each
    stepped pair's view changes with time alone (its timer). Not thread-safe.

    `push` queues a pair since when it waits (an earlier time replaces a later one); `pop`
    takes the most overdue, ties in the order they came; `expire` hands back the timers whose
    time came. `basis` is what the queue's contents were found under (the configuration, the
    routing and the ready switches): the stepper rebuilds the queue when it changes."""

    basis: Hashable = None
    _heap: list[tuple[float, int, str]] = field(default_factory=list)
    _since: dict[str, float] = field(default_factory=dict)  # each queued key's entry
    _timers: list[tuple[float, str]] = field(default_factory=list)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def __len__(self) -> int:
        return len(self._since)

    def __contains__(self, key: object) -> bool:
        return key in self._since

    def clear(self, basis: Hashable) -> None:
        self.basis = basis
        self._heap.clear()
        self._since.clear()
        self._timers.clear()

    def push(self, key: str, since: float) -> None:
        if self._since.get(key, math.inf) <= since:
            return
        self._since[key] = since
        heapq.heappush(self._heap, (since, next(self._order), key))

    def pop(self) -> tuple[float, str] | None:
        """The most overdue pair (since, key), off the queue; None when none is due."""
        while self._heap:
            since, _, key = heapq.heappop(self._heap)
            if self._since.get(key) == since:  # else replaced by an earlier entry
                del self._since[key]
                return since, key
        return None

    def timer(self, key: str, at: float) -> None:
        """Hand `key` back from `expire` at `at` (math.inf: never)."""
        if math.isfinite(at):
            heapq.heappush(self._timers, (at, key))

    def expire(self, now: float) -> list[tuple[float, str]]:
        """The timers due at `now` (at, key), off the queue of timers."""
        out = []
        while self._timers and self._timers[0][0] <= now:
            out.append(heapq.heappop(self._timers))
        return out


def within_budget(queue: DueQueue, step: Callable[[float, str], bool],
                  budget_s: float | None, clock: Callable[[], float] = time.perf_counter,
                  start: float | None = None) -> int:
    """Take the due pairs off `queue` most overdue first and `step` each (since, key) until
    `budget_s` of `clock` since `start` (by default: now) is spent (None: no budget); at
    least one is stepped. `step` says whether it stepped the pair (False: it was no longer
    due, and does not count). Those not reached stay queued. Returns how many were stepped."""
    start = clock() if start is None else start
    stepped = 0
    while queue:
        if budget_s is not None and stepped and clock() - start >= budget_s:
            break
        item = queue.pop()
        if item is None:
            break
        stepped += step(*item)
    return stepped
