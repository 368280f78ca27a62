"""Failed links and switches the controller infers, and its re-routing around them
(docs/fabric-controller.md, "Inferred failures").

Every FAILURE_CHECK_S the control loop asks `FailureWatch.check`: the liveness of every
installed path of every pair (a pair's current paths and its watched ones, routes.py; a path
is alive while its egress edge reports it, the estimators' `dead_after_s`) goes to the pure
inference (tomography.py); when the links held failed change, the operator's stable re-route
runs (`Operator.set_links_failed`: the paths a failure does not cut keep their ids; the cut
ones stay installed, unweighted, as watched paths so that their return is seen, and come back
under their ids when it is). The operator's admin states are not touched: the routing avoids
the links of both (routes.py), and GET /links shows both.

Only evidence that says something is used: a pair is observed only while the agents of both
its edges have been ready for `settle_s` (a pair whose ingress stopped probing, or whose
egress cannot report, would look dead) and its ingress probes at least twice per
`settle_s` (without probes, or with probes stretched by the probe cap, an idle path goes
unreported that long, `TelemetryConfig.for_targets`; an idle pair's slow probes count,
telemetry/regimes.py), and a path only once it has been
installed under its id for `settle_s` (the estimator of an id a re-route gave to another
path still holds the old path's last report). `settle_s` is the estimators' `dead_after_s`:
a path silent that long after it was installed is dead for what it is. Only the primary
controller acts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.fabric.tomography import Hop, Observation, infer, path_hops
from mpsched.controller.intent.operator import Operator
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.fabric.paths import Path

log = logging.getLogger(__name__)

FAILURE_CHECK_S = 0.5  # how often the control loop's failure thread checks for failed links


@dataclass(eq=False)
class _Watched:
    """One installed path of a unit under observation: what the check reads, built once per
    routing (`Routes.generation`), and since when it has been observable."""

    ingress: str
    egress: str
    key: tuple[int, str]  # the estimator's (path id, direction)
    path: Path
    alive: Observation
    dead: Observation
    since: float | None = None  # installed and its pair observable since (None: not now)


class FailureWatch:
    def __init__(
        self,
        lock: AbstractContextManager[Any],
        routes: Routes,
        intake: TelemetryIntake,
        operator: Operator,
        ready: Callable[[str], bool],
        settle_s: float | None = None,
    ) -> None:
        """`ready(switch)`: whether the switch's agent is programmed and serving."""
        self.lock = lock
        self.routes = routes
        self.intake = intake
        self.operator = operator
        self.ready = ready
        self.settle_s = intake.settings.dead_after_s if settle_s is None else settle_s
        self.hops: frozenset[Hop] = frozenset()  # the directions held failed
        self.switches: frozenset[str] = frozenset()  # switches all of whose links are
        self._watched: list[_Watched] = []
        self._edges: list[str] = []  # the switches at either end of a watched path
        self._generation: int | None = None  # the routing `_watched` was built for
        self._ready_since: dict[str, float] = {}

    def _settled(self, switch: str, now: float) -> bool:
        if not self.ready(switch):
            self._ready_since.pop(switch, None)
            return False
        return now - self._ready_since.setdefault(switch, now) >= self.settle_s

    def _probes_often(self, switch: str) -> bool:
        """At least twice per settle_s onto every path: an idle pair's slow probes too
        (telemetry/regimes.py)."""
        cfg = self.intake.switch_telemetry[switch]
        interval = cfg.probe_interval_s
        if interval is not None and self.intake.regimes.enabled:
            interval = cfg.idle_interval_s
        return interval is not None and 2 * interval <= self.settle_s

    def _rebuild(self) -> None:
        """Every unit's installed paths, after a new routing: a path installed under the same
        id as before keeps its time; a new one, or another path under an old id, starts
        again (the estimator of an id a re-route gave to another path still holds the old
        path's last report)."""
        before = {(w.key, w.ingress): w for w in self._watched}
        out = []
        for unit in self.routes.units():
            for pid, path in self.routes.installed(unit).items():
                key = (pid, unit.direction)
                old = before.get((key, unit.ingress))
                if old is not None and (old.path is path or old.path == path):
                    out.append(old)
                    continue
                hops = path_hops(path)
                out.append(_Watched(unit.ingress, unit.egress, key, path,
                                    Observation(hops, True), Observation(hops, False)))
        self._watched = out
        self._edges = sorted({w.ingress for w in out} | {w.egress for w in out})
        self._generation = self.routes.generation

    def observations(self, now: float) -> list[Observation]:
        """The liveness of every installed path worth observing now (module docstring)."""
        if self._generation != self.routes.generation:
            self._rebuild()
        settled = {name: self._settled(name, now) for name in self._edges}
        often = {name: ok and self._probes_often(name) for name, ok in settled.items()}
        estimators = self.intake.estimators
        out = []
        for w in self._watched:
            if not (often[w.ingress] and settled[w.egress]):
                w.since = None  # observed again only after settling again
                continue
            if w.since is None:
                w.since = now
                continue
            if now - w.since < self.settle_s:
                continue
            est = estimators.get(w.key)
            alive = None if est is None else est.alive(now)
            if alive is not None:
                out.append(w.alive if alive else w.dead)
        return out

    def check(self, now: float) -> bool:
        """Infer the failed links now and re-route if they changed (True then). The
        observations are read under the controller's lock, the inference (pure) is made
        without it: only this check's thread writes `hops` and `switches`."""
        fabric = self.routes.fabric
        if fabric is None:
            return False
        with self.lock:
            observed = self.observations(now)
        got = infer(fabric, observed, self.hops)
        self.hops, self.switches = got.hops, got.switches
        with self.lock:
            before = self.routes.links_failed
        if got.links == before:
            return False
        log.warning("links held failed: %s (were %s); switches: %s", sorted(got.links) or "none",
                    sorted(before) or "none", sorted(got.switches) or "none")
        self.operator.set_links_failed(got.links)
        return True


__all__ = ["FAILURE_CHECK_S", "FailureWatch"]
