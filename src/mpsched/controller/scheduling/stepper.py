"""One scheduler step per unit, and the writes that bring the switches along.

A unit (src/mpsched/controller/fabric/routes.py) is a two-edge switch's traffic, or a fabric's
ordered pair of
edges; its placements live on its ingress switch, keyed by its destination edge. A step reads
the unit's paths (telemetry/intake_views.py), lets the scheduler decide, and turns the changed
placements into table entries (southbound/entries.py); the MPTCP subflow pins
follow the new placements (scheduling/pins.py). Each switch's writes go as one job of its
agent, in the order of the decisions. In a fabric the control loop steps only the pairs
whose inputs changed since their last step, most overdue first within its time budget
(scheduling/due.py); an operator's request steps every pair, and a re-route only takes the
re-routed pairs' weight off their vanished paths (`withdraw`). Not thread-safe: the
controller calls it under its lock; the jobs run in the agents' threads.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from mpsched.controller.fabric.routes import Unit
from mpsched.controller.model.placement import Change
from mpsched.controller.runtime.samples import Samples
from mpsched.controller.scheduling.due import (
    AGE_STEP_S,
    DueQueue,
    Stepped,
    is_due,
    overdue_since,
    within_budget,
)
from mpsched.controller.scheduling.pins import PathStates, PinManager
from mpsched.controller.scheduling.scheduler import Scheduler
from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.southbound.entries import (
    change_entries,
    class_entries,
    classifier_entries,
)
from mpsched.controller.southbound.writes import delete_all, log_failure, upsert_all, write_pins
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.p4rt.client import P4RuntimeClient, TableEntry
from mpsched.p4rt.pipeline import TABLE_SUBFLOW_PIN, Pipeline

log = logging.getLogger(__name__)

REFRESH_KEPT = 20_000  # pair refresh times kept (Stepper.refresh_ms: a benchmark's window of them)

ClientJob = Callable[[P4RuntimeClient], None]
Extra = dict[str, tuple[list[ClientJob], list[ClientJob]]]  # switch -> (before, after) jobs
PinChanges = tuple[list[TableEntry], list[TableEntry], list[TableEntry]]


def _step_job(
    client: P4RuntimeClient,
    entries: list[TableEntry],
    pins: PinChanges,
    pre: list[ClientJob],
    post: list[ClientJob],
) -> None:
    for fn in pre:
        fn(client)
    upsert_all(client, entries)
    write_pins(client, *pins)
    for fn in post:
        fn(client)


class Stepper:
    def __init__(
        self,
        agents: Sequence[SwitchAgent],
        pipeline: Pipeline,
        intake: TelemetryIntake,
        pins: PinManager,
    ) -> None:
        self.agents = agents
        self.routes = intake.routes  # the units each switch holds placements of
        self.pipeline = pipeline
        self.intake = intake
        self.pins = pins
        # the classifier each switch was last sent (replaced in one Write by set_classes)
        self.installed_classes: dict[str, list[TableEntry]] = {}
        # a fabric's pairs: what each one's last step saw (scheduling/due.py), and how many
        # pair steps the control loop made and skipped
        self.stepped: dict[str, Stepped] = {}
        self.pair_steps = 0
        self.pair_skips = 0
        # the control loop's due pairs left for a later step (over the step's time budget),
        # when each due pair was first found due, and each stepped pair's wait in ms
        self.pair_deferred = 0
        self.noticed: dict[str, float] = {}
        self.refresh_ms = Samples(REFRESH_KEPT)
        # the due pairs between control steps, and the units they were found among (due.py)
        self.queue = DueQueue()
        self._units: dict[str, tuple[SwitchAgent, Unit]] | None = None

    def states(self, now: float) -> PathStates:
        """A unit's paths' states (MPTCP pins, scheduling/pins.py)."""
        return lambda key: list(self.intake.unit_view(self.routes.unit(key), now).paths)

    def sched_entries(self, scheduler: Scheduler, switch: str, now: float) -> list[TableEntry]:
        """Everything the scheduler keeps on a (re)programmed switch: every class's
        placement (and MVQS or mode-ca parameters) of each of its units, the classifier and
        the subflow pins (nothing on a transit switch)."""
        units = self.routes.units_at(switch)
        if not units:
            return []
        entries: list[TableEntry] = []
        for unit in units:
            scheduler.step(self.intake.unit_view(unit, now), now)
            for cid in sorted(scheduler.classes):
                pl = scheduler.placement_of(unit.key, cid)
                if pl is not None:
                    entries += change_entries(
                        self.pipeline, Change(unit.key, cid, pl), unit.dst_edge
                    )
        classifier = classifier_entries(self.pipeline, scheduler.classes.values())
        self.installed_classes[switch] = classifier
        pins = self.pins.desired(scheduler, self.states(now), now)[switch]
        return entries + classifier + self.pins.install(switch, pins)

    def submit(
        self,
        scheduler: Scheduler,
        now: float,
        extra: Extra | None = None,
        only_ready: bool = False,
        only_changed: bool | None = None,
        budget_s: float | None = None,
    ) -> dict[str, Future]:
        """One step per switch; submit its changes (plus `extra` jobs). Operator requests go
        to every switch (one that is down fails them: 503); the control loop skips those
        not ready (they get everything when they are reprogrammed). `only_changed` (by
        default the control loop's, `only_ready`): a fabric's pairs are stepped only when
        their inputs, the configuration or their own paths changed, most overdue first
        within `budget_s` (scheduling/due.py)."""
        only_changed = only_ready if only_changed is None else only_changed
        incremental = only_changed and self.routes.is_fabric and scheduler.repeats()
        context = self._context(scheduler)
        agents = [a for a in self.agents if not only_ready or a.status.state == "ready"]
        steps: dict[SwitchAgent, list[TableEntry]] = {a: [] for a in agents}
        if incremental:
            self._step_due(scheduler, agents, steps, context, now, budget_s)
        else:
            for agent in agents:
                for unit in self.routes.units_at(agent.sw.name):
                    steps[agent] += self._step_unit(scheduler, unit, context, now)
            self.queue.basis = None  # their timers changed: the next loop step looks again
        return self._submit_jobs(scheduler, steps, extra, now)

    def withdraw(self, scheduler: Scheduler, now: float,
                 extra: Extra | None = None) -> dict[str, Future]:
        """Every pair's placements off the paths it no longer has (`Scheduler.withdraw`,
        after a re-route) on every switch, without a policy step; submit them (plus
        `extra` jobs). The pairs stay due: the control loop steps them."""
        steps: dict[SwitchAgent, list[TableEntry]] = {}
        for agent in self.agents:
            steps[agent] = []
            for unit in self.routes.units_at(agent.sw.name):
                keep = self.routes.pair_paths(unit) if self.routes.is_fabric else None
                if keep is None:
                    continue
                for ch in scheduler.withdraw(unit.key, keep):
                    steps[agent] += change_entries(self.pipeline, ch, unit.dst_edge)
        return self._submit_jobs(scheduler, steps, extra, now)

    def _submit_jobs(self, scheduler: Scheduler, steps: dict[SwitchAgent, list[TableEntry]],
                     extra: Extra | None, now: float) -> dict[str, Future]:
        """One job per switch: its entries, then its subflow pins' changes, with `extra`."""
        # subflow pins follow the new placements (re-pinning off paths that left them)
        desired = self.pins.desired(scheduler, self.states(now), now)
        futures = {}
        for agent, entries in steps.items():
            pins = self.pins.changes(agent.sw.name, desired[agent.sw.name])
            pre, post = (extra or {}).get(agent.sw.name, ([], []))
            if not entries and not pre and not post and not any(pins):
                continue
            job = functools.partial(_step_job, entries=entries, pins=pins, pre=pre, post=post)
            futures[agent.sw.name] = agent.submit(job)
        return futures

    def _step_due(self, scheduler: Scheduler, agents: list[SwitchAgent],
                  steps: dict[SwitchAgent, list[TableEntry]], context: tuple, now: float,
                  budget_s: float | None) -> None:
        """The due pairs of `agents`, most overdue first within `budget_s` (due.py); the
        rest stay due. Each step's wait (from when it was due to this step's `now`) goes into
        `refresh_ms`. The budget counts from here: finding the due pairs is part of it."""
        start = time.perf_counter()
        units = self._find_due(agents, context, now)
        self.pair_skips += len(units) - len(self.queue)

        def step(since: float, key: str) -> bool:
            agent, unit = units[key]
            if not self._due(unit, context, now):  # stepped meanwhile (an operator's request)
                return False
            steps[agent] += self._step_unit(scheduler, unit, context, now)
            self.queue.timer(key, self.stepped[key].until)
            self.refresh_ms.append(max(0.0, now - since) * 1000)
            return True

        within_budget(self.queue, step, budget_s, start=start)
        self.pair_deferred += len(self.queue)

    def _find_due(self, agents: list[SwitchAgent], context: tuple,
                  now: float) -> dict[str, tuple[SwitchAgent, Unit]]:
        """Bring the due queue up to `now`; returns the units of `agents` by key. Every unit
        is looked at only when the configuration, the routing or `agents` changed since the
        queue was built; otherwise only those whose direction had an input since the last
        step (`TelemetryIntake.take_dirty`) and those whose timer came (due.py)."""
        basis = (context, self.routes.generation, tuple(a.sw.name for a in agents))
        dirty = self.intake.take_dirty()
        if self.queue.basis != basis or self._units is None:
            self.queue.clear(basis)
            self._units = {u.key: (a, u) for a in agents for u in self.routes.units_at(a.sw.name)}
            for key, (_, unit) in self._units.items():
                last = self.stepped.get(key)
                if last is not None:
                    self.queue.timer(key, last.until)
                self._queue_if_due(unit, context, now)
            return self._units
        for direction in dirty:  # a fabric pair's key is its direction (routes.py)
            if direction in self._units:
                self._queue_if_due(self._units[direction][1], context, now)
        for at, timed in self.queue.expire(now):
            last = self.stepped.get(timed)
            if last is not None and last.until == at:  # else stepped again since
                self._queue_if_due(self._units[timed][1], context, now)
        return self._units

    def _queue_if_due(self, unit: Unit, context: tuple, now: float) -> None:
        if unit.key in self.queue or not self._due(unit, context, now):
            return
        noticed = self.noticed.setdefault(unit.key, now)
        since = overdue_since(noticed, self.intake.input_since.get(unit.direction),
                              self.stepped.get(unit.key), now)
        self.queue.push(unit.key, since, unit.ingress)

    def _context(self, scheduler: Scheduler) -> tuple:
        """What every pair's step depends on besides its view: the scheduler (replaced when
        the intent is), its configuration and the administrative states."""
        return (scheduler.instance, scheduler.generation, frozenset(scheduler.admin_down))

    def _due(self, unit: Unit, context: tuple, now: float) -> bool:
        return is_due(self.stepped.get(unit.key), self.intake.unit_inputs(unit),
                      (context, self.routes.unit_routing.get(unit.key, 0)), now)

    def _step_unit(self, scheduler: Scheduler, unit: Unit, context: tuple,
                   now: float) -> list[TableEntry]:
        """One unit's step: the entries of its changed placements; a fabric pair's step is
        remembered (scheduling/due.py)."""
        inputs = self.intake.unit_inputs(unit)
        changes = scheduler.step(self.intake.unit_view(unit, now), now)
        if self.routes.is_fabric:
            self.intake.take_input_since(unit)
            self.noticed.pop(unit.key, None)
            until = self.intake.changes_at(unit, now, AGE_STEP_S)
            routing = self.routes.unit_routing.get(unit.key, 0)
            self.stepped[unit.key] = Stepped(inputs, (context, routing), until)
            self.pair_steps += 1
        return [e for ch in changes for e in change_entries(self.pipeline, ch, unit.dst_edge)]

    def class_swap(self, scheduler: Scheduler, removed: list[int]) -> Extra:
        """The jobs that follow a new class table on every switch without a gap: after the
        new placements, the classifier (one Write: the switch applies the deletions and
        insertions in order), then the removed classes' entries."""
        classifier = classifier_entries(self.pipeline, scheduler.classes.values())
        extra: Extra = {}
        for agent in self.agents:
            units = self.routes.units_at(agent.sw.name)
            if not units:  # a transit switch: no classes
                continue
            old = self.installed_classes.get(agent.sw.name, [])
            self.installed_classes[agent.sw.name] = classifier

            def swap(client: P4RuntimeClient, old: list[TableEntry] = old) -> None:
                client.replace_entries(old, classifier)

            gone = [e for u in units for e in class_entries(self.pipeline, removed, u.dst_edge)]
            extra[agent.sw.name] = ([], [swap, functools.partial(_delete, entries=gone)])
        return extra

    def push_pins(self, scheduler: Scheduler, now: float) -> None:
        """Pin new subflows at once on every ready switch (fire and forget: an agent
        handing over an MPTCP digest must not wait for its own queue)."""
        desired = self.pins.desired(scheduler, self.states(now), now)
        for agent in self.agents:
            if agent.status.state != "ready":
                continue
            pins = self.pins.changes(agent.sw.name, desired[agent.sw.name])
            if not any(pins):
                continue
            job = functools.partial(write_pins, new=pins[0], changed=pins[1], gone=pins[2])
            agent.submit(job).add_done_callback(log_failure)

    def read_pin_counters(self) -> dict[str, Future]:
        """Ask every ready switch for its subflow pins' direct counters."""
        return {
            a.sw.name: a.submit(lambda c: c.read_direct_counters(TABLE_SUBFLOW_PIN))
            for a in self.agents
            if a.status.state == "ready"
        }


def _delete(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    delete_all(client, entries)
