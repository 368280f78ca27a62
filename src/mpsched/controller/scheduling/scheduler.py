"""The control loop's decisions, without I/O: path states in, table contents out.

Every control period, for each ingress edge switch and each traffic class:

    path states (estimators, admin state) -> the class's policy -> LM3 (if on)
    -> admin mask -> quantised weights, mode, flowlet gap (+ MVQS or CA parameters)

A class's output is written only when it differs from what the switch already has
(`Change`), and every change goes into the decision log with the policy's reason.
Per (switch, class) the policy and LM3 instances keep their state between periods;
a policy change or a parameter change makes new instances (their histories restart).

Parameters: the operator sets defaults per policy (`params.policies.<name>`), a class
may override any of them (`policy.params`); LM3's parameters, the control period and the
share of it a step may spend on a fabric's pairs are global (`params.lm3`,
`params.control_period_ms`, `params.step_budget_pct`).

The parts: the global parameters (`params`), what a decision becomes on a switch
(`placement`), the state per (switch, class) and the decision log's entries (`class_state`);
this module is the scheduler that runs them every period.
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.model.placement import Change, Placement
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.policies import REGISTRY
from mpsched.controller.policies.base import Policy
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.scheduling.class_state import ClassState, blocking, carry, log_entry
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, TrafficClass
from mpsched.controller.scheduling.params import (
    GlobalParams,
    make_class_policy,
    policy_switch,
)
from mpsched.controller.scheduling.params_changes import (
    CONTROL_PERIOD_MS,
    MAX_CONTROL_PERIOD_MS,
    MAX_STEP_BUDGET_PCT,
    MIN_CONTROL_PERIOD_MS,
    STEP_BUDGET,
    TOP_KEYS,
)
from mpsched.controller.scheduling.placement import (
    AUTO_GAP_MIN_US,
    AUTO_GAP_STEP_US,
    auto_gap_us,
    ca_dict,
    place,
    withdrawn,
)
from mpsched.p4profiles import FEATURE_CONGESTION, FEATURE_DEFINES

__all__ = [
    "AUTO_GAP_MIN_US",
    "AUTO_GAP_STEP_US",
    "CONTROL_PERIOD_MS",
    "DECISION_LOG",
    "MAX_CONTROL_PERIOD_MS",
    "MAX_STEP_BUDGET_PCT",
    "MIN_CONTROL_PERIOD_MS",
    "REGISTRY",
    "STEP_BUDGET",
    "TOP_KEYS",
    "GlobalParams",
    "Scheduler",
    "auto_gap_us",
    "ca_dict",
    "make_class_policy",
]

log = logging.getLogger(__name__)

DECISION_LOG = 2000
_INSTANCES = itertools.count(1)


class Scheduler:
    """The decisions of every (switch, class); call `step` once per control period.

    `ca_supported` False (a program compiled with -DNO_CONGESTION): a policy that decides
    mode ca is refused when it is set (FieldError naming `<where>.name`)."""

    def __init__(
        self,
        switches: Iterable[str],
        path_ids: Sequence[int],
        classes: Sequence[TrafficClass] | None = None,
        params: GlobalParams | None = None,
        *,
        ca_supported: bool = True,
    ) -> None:
        self.switches = list(switches)
        self.path_ids = sorted(path_ids)
        self.ca_supported = ca_supported
        self.params = params or GlobalParams()
        self.admin_down: set[int] = set()
        self.log: deque[dict[str, Any]] = deque(maxlen=DECISION_LOG)
        self.classes: dict[int, TrafficClass] = {}
        self._state: dict[tuple[str, int], ClassState] = {}
        # this scheduler among those made (one replaces another with the intent), and the
        # changes of its classes, policies and parameters: a pair stepped before either
        # changed is stepped again (src/mpsched/controller/scheduling/due.py)
        self.instance = next(_INSTANCES)
        self.generation = 0
        self.set_classes(classes or [TrafficClass(DEFAULT_CLASS_ID, "default")])

    # -- configuration ---------------------------------------------------

    def _new_state(self, c: TrafficClass, where: str = "policy") -> ClassState:
        policy = make_class_policy(c.policy, self.params, where)
        if not self.ca_supported and self._decides_ca(policy):
            raise FieldError(
                f"{where}.name",
                f"policy {c.policy.name!r} uses mode ca, but the P4 program was compiled "
                f"without congestion (-D{FEATURE_DEFINES[FEATURE_CONGESTION]})",
            )
        policy.set_target(c.qos_target)
        lm3 = Lm3(self.params.lm3) if c.policy.lm3 else None
        return ClassState(c, policy, lm3)

    def _decides_ca(self, policy: Policy) -> bool:
        """Whether `policy` (or one it delegates to) decides mode ca: a fresh instance with
        the same parameters (the class's own keeps no trace) decides once over unmeasured
        alive paths."""
        if any(self._decides_ca(sub) for sub in policy.sub_policies()):
            return True
        probe = type(policy)(policy.params)
        paths = [PathState(p, True) for p in self.path_ids]
        return probe.decide(paths, 0.0).mode == Mode.CA

    def set_classes(self, classes: Sequence[TrafficClass]) -> None:
        """Replace the classes; unchanged classes keep their state. Validates every policy
        first (FieldError `classes[i].policy...`), so a bad list changes nothing."""
        fresh: dict[tuple[str, int], ClassState] = {}
        for i, c in enumerate(classes):
            for sw in self.switches:
                old = self._state.get((sw, c.id))
                if old is not None and old.cls.policy == c.policy:
                    fresh[(sw, c.id)] = ClassState(
                        c, old.policy, old.lm3, old.last, old.ooo, old.logged
                    )
                else:
                    fresh[(sw, c.id)] = self._new_state(c, f"classes[{i}].policy")
                    if old is not None:
                        carry(old.policy, fresh[(sw, c.id)].policy)
        for st in fresh.values():
            st.policy.set_target(st.cls.qos_target)
        self.classes = {c.id: c for c in classes}
        self._state = fresh
        self.generation += 1

    def set_class_policy(self, class_id: int, changes: Mapping[str, Any]) -> TrafficClass:
        """Change a class's policy (`changes`: any of name, params, lm3, flowlet_gap_us);
        the class after it. A new policy without `params` keeps only the overrides it
        knows and takes (`policy_switch`); validates first, so a bad change changes
        nothing."""
        c = self.classes[class_id]
        updated = replace(c, policy=c.policy.updated(policy_switch(c.policy, changes,
                                                                   self.params)))
        states = {sw: self._new_state(updated) for sw in self.switches}  # validates first
        for sw, st in states.items():
            st.last = self._state[(sw, class_id)].last
            st.ooo = self._state[(sw, class_id)].ooo
            carry(self._state[(sw, class_id)].policy, st.policy)
            self._state[(sw, class_id)] = st
        self.classes[class_id] = updated
        self.generation += 1
        return updated

    def set_params(self, changes: Mapping[str, Any]) -> GlobalParams:
        """Apply a partial parameter change. Every class's policy is rebuilt with the new
        defaults before anything is swapped in, so a change that some class's own
        overrides make invalid (FieldError `class <id>: policy.params.<key>`) changes
        nothing."""
        new = self.params.updated(changes)
        self.generation += 1
        if new.policies == self.params.policies and new.lm3 == self.params.lm3:
            self.params = new
            return new
        old, self.params = self.params, new
        fresh: dict[tuple[str, int], ClassState] = {}
        try:
            for key, st in self._state.items():
                try:
                    state = self._new_state(st.cls)
                except FieldError as error:
                    raise FieldError(
                        f"policies.{st.cls.policy.name}",
                        f"class {st.cls.id} rejects it: {error}",
                    ) from None
                state.last, state.ooo = st.last, st.ooo
                carry(st.policy, state.policy)
                fresh[key] = state
        except FieldError:
            self.params = old
            raise
        self._state = fresh
        return new

    # -- decisions -------------------------------------------------------

    def policy_of(self, switch: str, class_id: int) -> Policy | None:
        """The policy instance deciding for (switch, class)."""
        st = self._state.get((switch, class_id))
        return None if st is None else st.policy

    def learned(self) -> dict[str, dict[str, Any]]:
        """What the classes' policies learned (`Policy.learned`), by class id and switch, for
        the state file; classes whose policy learns nothing are left out."""
        out: dict[str, dict[str, Any]] = {}
        for (sw, cid), st in sorted(self._state.items()):
            data = st.policy.learned()
            if data is not None:
                out.setdefault(str(cid), {})[sw] = data
        return out

    def restore_learned(self, data: Mapping[str, Any], where: str = "learned") -> None:
        """Hand `learned()` of an earlier scheduler to this one's policies. Entries for a
        class or switch that is gone are skipped (logged); malformed ones raise FieldError
        naming ``learned.<class>.<switch>...``."""
        if not isinstance(data, Mapping):
            raise FieldError(where, "must be an object")
        for cid, by_switch in data.items():
            if not isinstance(by_switch, Mapping):
                raise FieldError(f"{where}.{cid}", "must be an object")
            for sw, item in by_switch.items():
                st = self._state.get((sw, int(cid))) if str(cid).isdigit() else None
                if st is None or st.policy.learned() is None:
                    log.warning("%s.%s.%s: no such class, switch or learning policy; skipped",
                                where, cid, sw)
                    continue
                st.policy.restore_learned(item, f"{where}.{cid}.{sw}")

    def repeats(self) -> bool:
        """Whether every class's step decides as it did on equal inputs: its policy keeps no
        state (`Policy.repeats`) and LM3, if on, moves only on new inputs (on equal paths
        and no buffer-blocking event its re-admission re-admits nothing more)."""
        return all(REGISTRY[c.policy.name].repeats for c in self.classes.values())

    def placement_of(self, switch: str, class_id: int) -> Placement | None:
        st = self._state.get((switch, class_id))
        return None if st is None else st.last

    def step(self, view: SwitchView, now: float) -> list[Change]:
        """One period of one switch: the classes whose entries must change."""
        paths = [p if p.path_id not in self.admin_down else _down(p) for p in view.paths]
        changes = []
        for class_id in sorted(self.classes):
            st = self._state[(view.switch, class_id)]
            decision = st.policy.decide(paths, now)
            if st.lm3 is not None:
                events = blocking(st, view.flow_ooo)
                decision = st.lm3.apply(paths, decision, events, now)
            placement = place(st.cls, decision, paths, self.path_ids, self.admin_down)
            if placement != st.last or not st.logged:
                self.log.append(log_entry(now, view.switch, st, decision, placement, paths))
                st.logged = True
            if placement != st.last:
                changes.append(Change(view.switch, class_id, placement, st.last))
                st.last = placement
        return changes

    def withdraw(self, switch: str, keep: Container[int]) -> list[Change]:
        """Take the weight of every class of `switch` (a unit) off its paths not in `keep`
        at once, without a policy step (`withdrawn`): a re-route's vanished paths leave
        service before their entries go, and the pair's policy steps later, in the control
        loop (the routing changed: it is due)."""
        changes = []
        for class_id in sorted(self.classes):
            st = self._state[(switch, class_id)]
            if st.last is None:
                continue
            placement = withdrawn(st.last, keep, self.admin_down)
            if placement is not None:
                changes.append(Change(switch, class_id, placement, st.last))
                st.last = placement
        return changes


def _down(p: PathState) -> PathState:
    return replace(p, alive=False)
