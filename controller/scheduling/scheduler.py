"""The control loop's decisions, without I/O: path states in, table contents out.

Every control period, for each ingress edge switch and each traffic class:

    path states (estimators, admin state) -> the class's policy -> LM3 (if on)
    -> admin mask -> quantised weights, mode, flowlet gap (+ MVQS or CA parameters)

A class's output is written only when it differs from what the switch already has
(`Change`), and every change goes into the decision log with the policy's reason.
Per (switch, class) the policy and LM3 instances keep their state between periods;
a policy change or a parameter change makes new instances (their histories restart).

Parameters: the operator sets defaults per policy (`params.policies.<name>`), a class
may override any of them (`policy.params`); LM3's parameters and the control period are
global (`params.lm3`, `params.control_period_ms`).
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mpsched.controller.errors import FieldError
from mpsched.controller.policies import REGISTRY
from mpsched.controller.policies.base import (
    CaCost,
    Decision,
    Mode,
    PathState,
    Policy,
    params_from_dict,
    params_schema,
    params_to_dict,
    quantise,
)
from mpsched.controller.policies.ca import fmt_ca, quantise_ca
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.mptcp import MptcpParams
from mpsched.p4profiles import FEATURE_CONGESTION, FEATURE_DEFINES

log = logging.getLogger(__name__)

CONTROL_PERIOD_MS = 100.0
MIN_CONTROL_PERIOD_MS = 10.0
MAX_CONTROL_PERIOD_MS = 10_000.0
DECISION_LOG = 2000
TOP_KEYS = ("control_period_ms", "lm3", "policies", "mptcp")


@dataclass(frozen=True)
class Placement:
    """What one class's path_weights (and mvqs_params or ca_params) entry says on one switch.

    `ca` (mode ca only) is the policy's CaCost with offsets and capacities quantised
    (`quantise_ca`), so estimator noise does not rewrite the switch every period; the writer
    turns it into set_ca's parameters with the program's units (`ca_fixed_point`)."""

    weights: tuple[tuple[int, int], ...]  # (path id, weight 0..255), by path id
    mode: str
    flowlet_gap_us: int
    vq: tuple[tuple[int, tuple[int, int, int, int]], ...] = ()  # mode vq: path -> params
    ca: CaCost | None = None  # mode ca: the cost the switch computes

    def weight_map(self) -> dict[int, int]:
        return dict(self.weights)

    def vq_map(self) -> dict[int, tuple[int, int, int, int]]:
        return dict(self.vq)


@dataclass(frozen=True)
class Change:
    switch: str
    class_id: int
    placement: Placement
    previous: Placement | None = None  # what the switch had (None: nothing, or unknown)


@dataclass
class GlobalParams:
    control_period_ms: float = CONTROL_PERIOD_MS
    lm3: Any = field(default_factory=lambda: Lm3.Params())
    policies: dict[str, Any] = field(
        default_factory=lambda: {name: cls.Params() for name, cls in REGISTRY.items()}
    )
    mptcp: MptcpParams = field(default_factory=MptcpParams)

    def to_dict(self) -> dict[str, Any]:
        return {
            "control_period_ms": self.control_period_ms,
            "lm3": params_to_dict(self.lm3),
            "policies": {name: params_to_dict(p) for name, p in sorted(self.policies.items())},
            "mptcp": params_to_dict(self.mptcp),
        }

    def updated(self, changes: Mapping[str, Any]) -> GlobalParams:
        """A copy with a partial dict applied; FieldError names the offending key."""
        if not isinstance(changes, Mapping):
            raise FieldError("body", "must be an object")
        unknown = sorted(set(changes) - set(TOP_KEYS))
        if unknown:
            raise FieldError(unknown[0], f"unknown parameter; known: {', '.join(TOP_KEYS)}")
        period = self.control_period_ms
        if "control_period_ms" in changes:
            value = changes["control_period_ms"]
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not MIN_CONTROL_PERIOD_MS <= value <= MAX_CONTROL_PERIOD_MS
            ):
                raise FieldError(
                    "control_period_ms",
                    f"must be a number {MIN_CONTROL_PERIOD_MS:g}..{MAX_CONTROL_PERIOD_MS:g}",
                )
            period = float(value)
        lm3 = self.lm3
        if "lm3" in changes:
            lm3 = params_from_dict(Lm3.Params, _object(changes["lm3"], "lm3"), self.lm3, "lm3.")
        policies = dict(self.policies)
        if "policies" in changes:
            for name, data in _object(changes["policies"], "policies").items():
                if name not in REGISTRY:
                    raise FieldError(
                        f"policies.{name}", f"no such policy; known: {', '.join(sorted(REGISTRY))}"
                    )
                where = f"policies.{name}"
                policies[name] = params_from_dict(
                    REGISTRY[name].Params, _object(data, where), policies[name], where + "."
                )
        mptcp = self.mptcp
        if "mptcp" in changes:
            data = _object(changes["mptcp"], "mptcp")
            mptcp = params_from_dict(MptcpParams, data, mptcp, "mptcp.")
        return GlobalParams(period, lm3, policies, mptcp)

    def schema(self) -> dict[str, Any]:
        return {
            "lm3": params_schema(Lm3.Params),
            "policies": {name: params_schema(cls.Params) for name, cls in sorted(REGISTRY.items())},
            "mptcp": params_schema(MptcpParams),
        }


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise FieldError(where, "must be an object")
    return value


def make_class_policy(cp: ClassPolicy, params: GlobalParams, where: str = "policy") -> Policy:
    """The policy instance of a class: global defaults overridden by the class's params."""
    if cp.name not in REGISTRY:
        raise FieldError(
            f"{where}.name", f"no policy {cp.name!r}; known: {', '.join(sorted(REGISTRY))}"
        )
    cls = REGISTRY[cp.name]
    merged = params_from_dict(
        cls.Params, dict(cp.params), params.policies[cp.name], f"{where}.params."
    )
    return cls(merged)


@dataclass
class _ClassState:
    cls: TrafficClass
    policy: Policy
    lm3: Lm3 | None
    last: Placement | None = None
    ooo: dict[int, int] = field(default_factory=dict)  # path -> flow_ooo total last period
    logged: bool = False  # a new policy's first decision is logged even if nothing changes


@dataclass(frozen=True)
class SwitchView:
    """The inputs of one ingress edge switch for one period."""

    switch: str
    paths: Sequence[PathState]  # its paths, by path id, as seen for its outgoing traffic
    flow_ooo: Mapping[int, int]  # path -> cumulative flow_ooo at the far egress edge


AUTO_GAP_MIN_US = 500
AUTO_GAP_STEP_US = 1000


def auto_gap_us(paths: Sequence[PathState], weighted: Iterable[int]) -> int:
    """The flowlet gap of a class with `flowlet_gap_us` 0: a flowlet may move to another
    path without reordering when the gap exceeds the difference of the paths' one-way
    delays (FLARE, Kandula et al. 2007). Over the alive weighted paths: the spread of the
    latest raw one-way delays (the edges' clock offset cancels), else half the spread of
    the smoothed RTTs; plus AUTO_GAP_MIN_US, rounded up to AUTO_GAP_STEP_US (fewer
    rewrites), at least AUTO_GAP_MIN_US."""
    ids = set(weighted)
    live = [p for p in paths if p.alive and p.path_id in ids]
    owd = [p.owd_raw_ms for p in live if p.owd_raw_ms is not None]
    rtt = [p.srtt_ms for p in live if p.srtt_ms is not None]
    if len(owd) == len(live) and len(owd) >= 2:
        spread_us = (max(owd) - min(owd)) * 1000
    elif len(rtt) >= 2:
        spread_us = (max(rtt) - min(rtt)) * 500
    else:
        spread_us = 0.0
    gap = spread_us + AUTO_GAP_MIN_US
    return max(AUTO_GAP_MIN_US, int(math.ceil(gap / AUTO_GAP_STEP_US)) * AUTO_GAP_STEP_US)


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
        self._state: dict[tuple[str, int], _ClassState] = {}
        self.set_classes(classes or [TrafficClass(DEFAULT_CLASS_ID, "default")])

    # -- configuration ---------------------------------------------------

    def _new_state(self, c: TrafficClass, where: str = "policy") -> _ClassState:
        policy = make_class_policy(c.policy, self.params, where)
        if not self.ca_supported and self._decides_ca(policy):
            raise FieldError(
                f"{where}.name",
                f"policy {c.policy.name!r} uses mode ca, but the P4 program was compiled "
                f"without congestion (-D{FEATURE_DEFINES[FEATURE_CONGESTION]})",
            )
        policy.set_target(c.qos_target)
        lm3 = Lm3(self.params.lm3) if c.policy.lm3 else None
        return _ClassState(c, policy, lm3)

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
        fresh: dict[tuple[str, int], _ClassState] = {}
        for i, c in enumerate(classes):
            for sw in self.switches:
                old = self._state.get((sw, c.id))
                if old is not None and old.cls.policy == c.policy:
                    fresh[(sw, c.id)] = _ClassState(
                        c, old.policy, old.lm3, old.last, old.ooo, old.logged
                    )
                else:
                    fresh[(sw, c.id)] = self._new_state(c, f"classes[{i}].policy")
                    if old is not None:
                        _carry(old.policy, fresh[(sw, c.id)].policy)
        for st in fresh.values():
            st.policy.set_target(st.cls.qos_target)
        self.classes = {c.id: c for c in classes}
        self._state = fresh

    def set_class_policy(self, class_id: int, changes: Mapping[str, Any]) -> TrafficClass:
        c = self.classes[class_id]
        updated = replace(c, policy=c.policy.updated(changes))
        states = {sw: self._new_state(updated) for sw in self.switches}  # validates first
        for sw, st in states.items():
            st.last = self._state[(sw, class_id)].last
            st.ooo = self._state[(sw, class_id)].ooo
            _carry(self._state[(sw, class_id)].policy, st.policy)
            self._state[(sw, class_id)] = st
        self.classes[class_id] = updated
        return updated

    def set_params(self, changes: Mapping[str, Any]) -> GlobalParams:
        """Apply a partial parameter change. Every class's policy is rebuilt with the new
        defaults before anything is swapped in, so a change that some class's own
        overrides make invalid (FieldError `class <id>: policy.params.<key>`) changes
        nothing."""
        new = self.params.updated(changes)
        if new.policies == self.params.policies and new.lm3 == self.params.lm3:
            self.params = new
            return new
        old, self.params = self.params, new
        fresh: dict[tuple[str, int], _ClassState] = {}
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
                _carry(st.policy, state.policy)
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
                events = _blocking(st, view.flow_ooo)
                decision = st.lm3.apply(paths, decision, events, now)
            placement = self._placement(st.cls, decision, paths)
            if placement != st.last or not st.logged:
                self.log.append(_entry(now, view.switch, st, decision, placement))
                st.logged = True
            if placement != st.last:
                changes.append(Change(view.switch, class_id, placement, st.last))
                st.last = placement
        return changes

    def _placement(self, c: TrafficClass, d: Decision, paths: Sequence[PathState]) -> Placement:
        weights = {
            p: (0.0 if p in self.admin_down else d.weights.get(p, 0.0)) for p in self.path_ids
        }
        q = quantise(weights) if any(w > 0 for w in weights.values()) else {p: 0 for p in weights}
        vq: tuple[tuple[int, tuple[int, int, int, int]], ...] = ()
        if d.mode == Mode.VQ:
            vq = tuple(
                # mvqs.p4 drains per 1024 µs: bytes/ms * 1.024
                (p, (v.pad_us, v.bdp_bytes, v.us_per_kbyte, round(v.drain_bytes_per_ms * 1.024)))
                for p, v in sorted(d.vq.items())
            )
        ca = None
        if d.mode == Mode.CA:
            # None: the switch's default no_ca (every cost 0: a random usable path, LetFlow)
            zero = CaCost(qdelay_coef=0.0, loss_coef_us=0.0, util_coef_us=0.0, epsilon_us=0.0,
                          max_age_ms=0.0)
            ca = quantise_ca(d.ca) if d.ca is not None else zero
        gap = c.policy.flowlet_gap_us
        if Mode(d.mode) not in (Mode.FLOWLET, Mode.VQ, Mode.CA):
            gap = 0  # unused by hash and rr: no rewrites when the delays move
        elif gap == 0:
            gap = auto_gap_us(paths, [p for p, w in q.items() if w > 0])
        return Placement(tuple(sorted(q.items())), Mode(d.mode).value, gap, vq, ca)


def _carry(old: Policy, new: Policy) -> None:
    """What `old` learned goes to `new` when a change of policy or parameters replaces it by
    one of the same kind (a learning policy keeps its table across a parameter change)."""
    data = old.learned()
    if data is None or type(old) is not type(new):
        return
    try:
        new.restore_learned(data, "learned")
    except FieldError as error:
        log.warning("learned state of %s not carried over: %s", old.name, error)


def _down(p: PathState) -> PathState:
    return replace(p, alive=False)


def _blocking(st: _ClassState, totals: Mapping[int, int]) -> int:
    """LM3's buffer-blocking events this period, from the packets overtaken within their
    flow (egress flow_ooo) on the switch's paths since the last period. The egress counts
    per path, not per class: every LM3 class of a switch sees the same events."""
    delta = 0
    for p, total in totals.items():
        before = st.ooo.get(p)
        if before is not None and total >= before:
            delta += total - before
    st.ooo = dict(totals)
    return st.lm3.blocking_events(delta) if st.lm3 is not None else 0


def _entry(now: float, switch: str, st: _ClassState, d: Decision, pl: Placement) -> dict:
    return {
        "t": round(now, 3),
        "switch": switch,
        "class_id": st.cls.id,
        "policy": st.cls.policy.name + ("+lm3" if st.lm3 is not None else ""),
        "weights": {str(p): w for p, w in pl.weights},
        "active": sorted(p for p, w in pl.weights if w > 0),
        "mode": pl.mode,
        "scores": {str(p): round(s, 6) for p, s in sorted(d.scores.items())},
        "reason": d.reason + (f" | ca: {fmt_ca(pl.ca)}" if pl.ca is not None else ""),
        **({"ca": ca_dict(pl.ca)} if pl.ca is not None else {}),
    }


def ca_dict(cost: CaCost) -> dict[str, Any]:
    """A mode-ca placement's cost parameters for the decision log and the REST views: the
    coefficients and per path {offset_us, capacity_mbps} (keys are path ids as strings)."""
    return {
        "qdelay_coef": cost.qdelay_coef,
        "loss_coef_us": cost.loss_coef_us,
        "util_coef_us": cost.util_coef_us,
        "epsilon_us": cost.epsilon_us,
        "max_age_ms": cost.max_age_ms,
        "paths": {
            str(pid): {"offset_us": p.offset_us, "capacity_mbps": p.capacity_mbps}
            for pid, p in sorted(cost.paths.items())
        },
    }
