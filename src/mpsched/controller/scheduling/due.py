"""Which pairs a control step must visit: those whose inputs changed since their last step.

A fabric of E edges has E · (E - 1) pairs (src/mpsched/controller/fabric/routes.py), and a
step over every one of them every control period costs the controller a core from a few
dozen edges on (docs/results/scale.md). A pair's step is a function of its view (its paths'
estimates, src/mpsched/controller/telemetry/intake_views.py), of the scheduler's
configuration (classes, policies, parameters, administrative states) and of the routing,
and, for a policy whose decision repeats on equal inputs (`Policy.repeats`), of nothing
else. So a pair is due when

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
share of the control period, the parameter `step_budget_pct` of GET/PUT /params, at start
`--step-budget-pct`): those not reached stay due and wait for the next step, first in line.
So a step never outlasts its period and the loop's CPU is bounded, whatever the number of
active pairs; the price is the pairs' refresh time (from an input change to the step that
sees it), which the stepper keeps (`Stepper.refresh_ms`). A small fabric's due pairs all fit:
each is stepped in the period its input came, as before (docs/fabric-controller.md, "Scheduling per
pair").

Each pair stepped brings its ingress switch's other due pairs after it (its group's, most
overdue first) before the next most overdue pair of another switch: a pair's placements are
written to its ingress switch, one Write per switch and step, and a step lasts until every
switch it wrote to acknowledged, so a budget's pairs on a few switches are written sooner
than as many spread over many switches (at 64 leaves a step reached some fifty pairs on as
many leaves: fifty Writes, docs/results/scale.md).
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
# A queue's heaps are rebuilt when they hold this many entries more than four per pair queued
# (two per pair, and those left behind by pops and replaced pushes, DueQueue._compact).
COMPACT_SLACK = 1024


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


Entry = tuple[float, int, str]  # (since, order of the push, key)


@dataclass
class DueQueue:
    """The due pairs (by key) between control steps, most overdue first, and when each
    stepped pair's view changes with time alone (its timer). Not thread-safe.

    `push` queues a pair since when it waits (an earlier time replaces a later one), in a
    group (its ingress switch); `pop` takes the most overdue, ties in the order they came, or
    with `prefer` the most overdue of that group while it has one; `expire` hands back the
    timers whose time came. `basis` is what the queue's contents were found under (the
    configuration, the routing and the ready switches): the stepper rebuilds the queue when
    it changes. An entry is in two heaps (all, its group's); the one a pop leaves behind
    goes when it reaches the top of its heap (it no longer matches `_queued`)."""

    basis: Hashable = None
    _heap: list[Entry] = field(default_factory=list)
    _groups: dict[Hashable, list[Entry]] = field(default_factory=dict)
    _queued: dict[str, tuple[Entry, Hashable]] = field(default_factory=dict)  # key: its entry
    _timers: list[tuple[float, str]] = field(default_factory=list)
    _order: itertools.count[int] = field(default_factory=itertools.count)
    _held: int = 0  # entries in all the heaps together

    def __len__(self) -> int:
        return len(self._queued)

    def __contains__(self, key: object) -> bool:
        return key in self._queued

    def clear(self, basis: Hashable) -> None:
        self.basis = basis
        self._heap.clear()
        self._groups.clear()
        self._queued.clear()
        self._timers.clear()
        self._held = 0

    def push(self, key: str, since: float, group: Hashable = None) -> None:
        queued = self._queued.get(key)
        if queued is not None and queued[0][0] <= since:
            return
        entry = (since, next(self._order), key)
        self._queued[key] = (entry, group)
        heapq.heappush(self._heap, entry)
        self._held += 1
        if group is not None:
            heapq.heappush(self._groups.setdefault(group, []), entry)
            self._held += 1
        if self._held > 4 * len(self._queued) + COMPACT_SLACK:
            self._compact()

    def _compact(self) -> None:
        """The heaps rebuilt from what is queued: the entries left behind by pops and
        earlier pushes dropped."""
        self._heap = [entry for entry, _ in self._queued.values()]
        heapq.heapify(self._heap)
        self._groups = {}
        for entry, group in self._queued.values():
            if group is not None:
                self._groups.setdefault(group, []).append(entry)
        for heap in self._groups.values():
            heapq.heapify(heap)
        self._held = len(self._heap) + sum(len(heap) for heap in self._groups.values())

    def pop(self, prefer: Hashable = None) -> tuple[float, str] | None:
        """The most overdue pair (since, key) (with `prefer`: of that group while it has
        one, `pop_grouped`), off the queue; None when none is due."""
        item = self.pop_grouped(prefer)
        return None if item is None else (item[0], item[1])

    def pop_grouped(self, prefer: Hashable = None) -> tuple[float, str, Hashable] | None:
        """The most overdue pair of group `prefer` if it has one, else of all: (since, key,
        its group), off the queue; None when none is due."""
        if prefer is not None and prefer in self._groups:
            item = self._take(self._groups[prefer])
            if not self._groups[prefer]:
                del self._groups[prefer]
            if item is not None:
                return item
        return self._take(self._heap)

    def _take(self, heap: list[Entry]) -> tuple[float, str, Hashable] | None:
        while heap:
            entry = heapq.heappop(heap)
            self._held -= 1
            queued = self._queued.get(entry[2])
            if queued is not None and queued[0] == entry:  # else replaced or popped
                del self._queued[entry[2]]
                return entry[0], entry[2], queued[1]
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
    """Take the due pairs off `queue` most overdue first, each followed by the rest of its
    group (most overdue first) before another group's, and `step` each (since, key) until
    `budget_s` of `clock` since `start` (by default: now) is spent (None: no budget); at
    least one is stepped. `step` says whether it stepped the pair (False: it was no longer
    due, and does not count). Those not reached stay queued. Returns how many were stepped."""
    start = clock() if start is None else start
    stepped = 0
    group: Hashable = None
    while queue:
        if budget_s is not None and stepped and clock() - start >= budget_s:
            break
        item = queue.pop_grouped(group)
        if item is None:
            break
        since, key, group = item
        stepped += step(since, key)
    return stepped
