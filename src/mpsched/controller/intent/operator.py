"""The operator's writes (REST PUTs): every one goes through `Operator.write`.

A write is refused while this controller is a backup (NotPrimaryError). Under the
controller's lock it changes the intent and steps the scheduler for every switch, then waits
for every switch to acknowledge (UnavailableError names those that did not: the intended
state stays, and a switch that comes back is reprogrammed with it, but it is not saved), then
saves the intent (src/mpsched/controller/intent/state.py) and logs the change.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any

from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.mastership import Mastership
from mpsched.controller.intent.state import Intent
from mpsched.controller.model.errors import NotFoundError, NotHereError
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, TrafficClass
from mpsched.controller.scheduling.scheduler import Scheduler
from mpsched.controller.scheduling.stepper import Extra, Stepper
from mpsched.controller.southbound.writes import await_all, delete_all, upsert_forwarding
from mpsched.p4rt.weights import MAX_WEIGHT

log = logging.getLogger(__name__)

Mutation = Callable[[Scheduler], Extra | None]  # changes the intent; extra jobs per switch


class Operator:
    def __init__(
        self,
        lock: AbstractContextManager[Any],
        mastership: Mastership,
        keeper: IntentKeeper,
        stepper: Stepper,
        write_timeout: float,
    ) -> None:
        self.lock = lock
        self.mastership = mastership
        self.keeper = keeper
        self.stepper = stepper
        self.write_timeout = write_timeout
        self.last_reroute_ms: dict[str, float] = {}
        # held for a whole re-route (`_reroute`): the control loop's steps take it too, so
        # that no step places a pair onto a path while the entries of its hops are still
        # being written, whether the re-route comes from a request or the failure thread
        self.rerouting = threading.Lock()

    def snapshot(self) -> Intent:
        with self.lock:
            return self.keeper.snapshot()

    def write(self, mutate: Mutation, what: str, only_changed: bool = False) -> None:
        """lock -> mutate -> submit -> await -> persist, then log `what`. `only_changed`:
        step only the pairs whose paths (or inputs) changed (`Stepper.submit`)."""
        self.mastership.require_primary()
        with self.lock:
            scheduler = self.keeper.scheduler
            extra = mutate(scheduler)
            futures = self.stepper.submit(scheduler, time.time(), extra,
                                          only_changed=only_changed)
        await_all(futures, self.write_timeout)
        self.keeper.persist(self.snapshot)
        log.info("%s", what)

    def _check_path(self, path_id: int) -> None:
        if path_id not in self.keeper.weights:
            raise NotFoundError(f"no path {path_id}")

    def _refuse_on_fabric(self, path_id: int, what: str, instead: str) -> None:
        """NotHereError on a fabric: there a path id names one path per pair of edges, and
        path `path_id` of one pair and of another are unrelated routes (docs/fabric.md)."""
        if self.stepper.routes.is_fabric:
            raise NotHereError(
                f"{what} of path {path_id} would act on path {path_id} of every pair of edges, "
                f"which on a fabric are different routes (GET /pairs lists each pair's "
                f"paths): {instead}")

    def set_weight(self, path_id: int, weight: int) -> None:
        """One path's static weight: the default class then runs the static `wcmp` policy
        with the operator's weights. Refused on a fabric (NotHereError)."""
        self._refuse_on_fabric(path_id, "a weight", "set a class's policy "
                               "(PUT /classes/{id}/policy) or take links down "
                               "(PUT /links/{name}/admin, GET /links)")

        def mutate(scheduler: Scheduler) -> None:
            if not 0 <= weight <= MAX_WEIGHT:
                raise ValueError(f"weight must be 0..{MAX_WEIGHT}")
            self._check_path(path_id)
            weights = self.keeper.weights
            weights[path_id] = weight
            spec = ",".join(f"{p}:{w}" for p, w in sorted(weights.items()))
            scheduler.set_class_policy(
                DEFAULT_CLASS_ID, {"name": "wcmp", "params": {"weights": spec}, "lm3": False}
            )

        self.write(mutate, f"path {path_id} weight -> {weight}")

    def set_admin(self, path_id: int, up: bool) -> None:
        """A path's admin state. On a fabric only `up` (it undoes a down kept from before);
        down is refused (NotHereError): take links down instead."""
        if not up:
            self._refuse_on_fabric(path_id, "taking down", "take links down instead "
                                   "(PUT /links/{name}/admin, GET /links)")

        def mutate(scheduler: Scheduler) -> None:
            self._check_path(path_id)
            if up:
                scheduler.admin_down.discard(path_id)
            else:
                scheduler.admin_down.add(path_id)

        self.write(mutate, f"path {path_id} admin -> {'up' if up else 'down'}")

    def set_classes(self, classes: list[TrafficClass]) -> None:
        """Replace the traffic classes on every switch without a gap: new placements
        first, then the classifier, then the removed classes' placements."""

        def mutate(scheduler: Scheduler) -> Extra:
            before = set(scheduler.classes)
            scheduler.set_classes(classes)
            removed = sorted(before - set(scheduler.classes))
            return self.stepper.class_swap(scheduler, removed)

        self.write(mutate, f"classes -> {sorted(c.id for c in classes)}")

    def set_class_policy(self, class_id: int, changes: dict) -> list[str]:
        """Change a class's policy; the parameter overrides a change of policy dropped (the
        new policy does not have them, or does not take their values: Scheduler's
        `set_class_policy`), logged."""
        dropped: list[str] = []

        def mutate(scheduler: Scheduler) -> None:
            if class_id not in scheduler.classes:
                raise NotFoundError(f"no class {class_id}")
            before = scheduler.classes[class_id].policy.params
            after = scheduler.set_class_policy(class_id, changes).policy.params
            if "params" not in changes:
                dropped.extend(sorted(set(before) - set(after)))

        self.write(mutate, f"class {class_id} policy -> {changes}")
        if dropped:
            log.info("class %d: the change of policy dropped params %s", class_id, dropped)
        return dropped

    def set_params(self, changes: dict) -> None:
        def mutate(scheduler: Scheduler) -> None:
            scheduler.set_params(changes)

        self.write(mutate, f"params -> {changes}")

    def set_link_admin(self, name: str, up: bool) -> None:
        """Take a fabric link administratively down or up (`set_links_admin`)."""
        self.set_links_admin([name], up)

    def set_links_admin(self, names: list[str], up: bool) -> None:
        """Take fabric links administratively down or up together (e.g. every link of a
        switch): re-route once (routes.py) and rewrite only the changed forwarding entries
        (`_reroute`)."""
        routes = self.stepper.routes

        def change() -> dict[str, tuple[list, list]]:
            known = {link[0] for link in routes.links()}
            unknown = [n for n in names if n not in known]
            if unknown or not names:
                raise NotFoundError(f"no link {', '.join(unknown) or '(none named)'}")
            return routes.set_links_changes(
                self.stepper.pipeline, names, up, self.stepper.intake.telemetry
            )

        which = f"link{'s' if len(names) > 1 else ''} {', '.join(names)}"
        self._reroute(change, f"{which} admin -> {'up' if up else 'down'}")

    def set_links_failed(self, names: frozenset[str]) -> None:
        """Exactly the links `names` held failed, as the controller inferred them
        (src/mpsched/controller/fabric/failures.py; the operator's admin states stay as they are):
        re-route
        and rewrite as `set_links_admin`."""
        routes = self.stepper.routes

        def change() -> dict[str, tuple[list, list]]:
            return routes.set_links_failed_changes(
                self.stepper.pipeline, names, self.stepper.intake.telemetry
            )

        self._reroute(change, f"links held failed -> {sorted(names) or 'none'}")

    def _submit_each(self, write: Callable[..., object],
                     entries: dict[str, list]) -> dict[str, Future]:
        """One job per switch with entries: `write(client, entries=...)`."""
        return {
            a.sw.name: a.submit(functools.partial(write, entries=entries[a.sw.name]))
            for a in self.stepper.agents
            if entries.get(a.sw.name)
        }

    def _reroute(self, change: Callable[[], dict[str, tuple[list, list]]], what: str) -> None:
        """Re-route (`change`, under the lock: the routing's new state and the entries per
        switch to write and delete) in three phases, so that no switch sends onto a path before
        every hop of it can forward it: first every new or changed entry on every switch
        (awaited), then the re-routed pairs' placements off their vanished paths
        (`Stepper.withdraw`: no policy step, the control loop steps those pairs, due since
        their paths changed; awaited: every pair's paths are then re-installed) and, after
        them, the entries that went (awaited too: the request returns when all is done).
        Each switch's writes of a phase are one job of its agent, the switches' in
        parallel. `last_reroute_ms` keeps each phase's time."""
        self.mastership.require_primary()
        with self.rerouting:
            t0 = time.perf_counter()
            with self.lock:
                t_lock = time.perf_counter()
                changes = change()
                t_routes = time.perf_counter()
                write = functools.partial(upsert_forwarding, pipeline=self.stepper.pipeline)
                futures = self._submit_each(write, {sw: c[0] for sw, c in changes.items()})
            await_all(futures, self.write_timeout)
            t_new = time.perf_counter()
            with self.lock:
                futures = self.stepper.withdraw(self.keeper.scheduler, time.time())
            await_all(futures, self.write_timeout)
            t_placed = time.perf_counter()
            with self.lock:
                futures = self._submit_each(delete_all, {sw: c[1] for sw, c in changes.items()})
            await_all(futures, self.write_timeout)
            t_end = time.perf_counter()
        self.keeper.persist(self.snapshot)
        # where a re-route's time went, in ms (logged; make bench-scale prints it): the
        # paths are re-installed after lock + routes + new_entries + placements
        self.last_reroute_ms = {
            "lock": (t_lock - t0) * 1000, "routes": (t_routes - t_lock) * 1000,
            "new_entries": (t_new - t_routes) * 1000,
            "placements": (t_placed - t_new) * 1000, "deletions": (t_end - t_placed) * 1000,
        }
        log.info("%s (%s)", what, ", ".join(f"{k} {v:.0f} ms"
                                             for k, v in self.last_reroute_ms.items()))
