"""Short full collections on a large fabric: the controller's long-lived state out of the
cyclic garbage collector's way.

A full collection of CPython's collector traverses every object it tracks. At 64 leaves and 4
spines the controller's long-lived state alone is some 200 000 tracked objects (per path an
estimator with its windows' deques and last report, the routes' paths and units): 70 ms a
pass on an idle core, 200-400 ms on the busy 2-core machine of docs/results/scale.md, where
such passes came every second or two and stopped every thread for that long, the control
loop's among them. `gc.freeze()` moves every tracked object into a permanent generation that
collections skip.

The controller freezes when its state has grown (`Freezer.maybe`, from the telemetry recorder's
thread once a period): when the paths with an estimator first reach `min_paths`, and again
whenever they have grown by FREEZE_GROWTH since, each time after a `gc.collect()` so that no
garbage is frozen with the state; from the first freeze on, full collections come
FROZEN_FULL_EVERY middle-generation passes apart instead of 10 (until `release`). Frozen
objects are still freed by their reference counts when dropped (a re-route's old paths); only
a reference cycle among frozen objects would stay until `release` (the controller's stop)
unfreezes them. Testbeds with fewer paths (two edges, a 4 x 2 leaf-spine: tens of paths) never
freeze; a leaf-spine of 8 leaves and 4 spines does.
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger(__name__)

# paths with an estimator before the first freeze (0: never freeze): 8 leaves of 4 spines have
# 224, and their full collections took 65-100 ms each, several a run (docs/results/scale.md)
FREEZE_MIN_PATHS = 200
FREEZE_GROWTH = 0.5  # grown by this share of the last freeze's paths: freeze again
# Once frozen, a full collection every this many collections of the middle generation
# (CPython's default: 10). What a full pass walks then is what outlived two young passes
# since the freeze: at 64 leaves, most likely each pair's newest step state and the reports
# in flight; 40-90 ms a pass, 9-12 passes in 10 s, a pass within about one control step in
# ten (docs/results/scale.md). Ten times rarer, they cost the same each; a reference cycle
# waits that much longer to be freed.
FROZEN_FULL_EVERY = 100


def freeze_due(paths: int, last: int, min_paths: int) -> bool:
    """Whether to freeze with `paths` estimators, the last freeze at `last` (0: none yet)."""
    if min_paths <= 0 or paths < min_paths:
        return False
    return last == 0 or paths >= last * (1 + FREEZE_GROWTH)


class Freezer:
    """The freezes of one controller (the collector's state is the process's)."""

    def __init__(self, min_paths: int = FREEZE_MIN_PATHS) -> None:
        self.min_paths = min_paths
        self.last = 0  # paths at the last freeze
        self.frozen = 0  # objects in the permanent generation after it
        self._thresholds: tuple[int, int, int] | None = None  # the collector's before the first

    def maybe(self, paths: int) -> bool:
        """Collect and freeze if `freeze_due`; True if it did."""
        if not freeze_due(paths, self.last, self.min_paths):
            return False
        t0 = time.perf_counter()
        gc.collect()
        gc.freeze()
        if self._thresholds is None:
            self._thresholds = gc.get_threshold()
            gc.set_threshold(self._thresholds[0], self._thresholds[1], FROZEN_FULL_EVERY)
        self.last, self.frozen = paths, gc.get_freeze_count()
        log.info("gc: %d objects frozen at %d paths (collect and freeze: %.0f ms)",
                 self.frozen, paths, (time.perf_counter() - t0) * 1000)
        return True

    def release(self) -> None:
        """Unfreeze what this controller froze (at its stop), so that a process running
        several controllers one after the other (`make bench-scale`) collects the last
        one's cycles."""
        if self.last:
            gc.unfreeze()
            self.last = self.frozen = 0
        if self._thresholds is not None:
            gc.set_threshold(*self._thresholds)
            self._thresholds = None


__all__ = ["FREEZE_GROWTH", "FREEZE_MIN_PATHS", "FROZEN_FULL_EVERY", "Freezer", "freeze_due"]
