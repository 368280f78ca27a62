"""Context-adaptive policy selection, `adaptive` (QoS-MPTCP, section 4.2;
docs/adaptive-policy.md, "Adaptive policy selection").

No single policy wins everywhere; the QoS-MPTCP paper discretises the network context and learns a
Bayesian mapping from context to the QoS each scheduling choice achieved, to pick the choice
expected to meet the QoS target. In-network form, once per control period:

1. Context (`adaptive_context`): per path loss, queueing delay, jitter and load, discretised
   by Gaussian memberships (eq. 6; centres and widths are parameters), and the path set's key.
2. Arms: the other policies with their parameters, optionally under LM3 (`arms`, e.g.
   ``ecmp,llhd,llhd+lm3,qos-ca:max_loss=0.01``); the current arm's own instance decides, so
   its mode (hash, flowlet, vq, ca) and per-path scores are the class's. An arm starts fresh
   each time it is chosen (histories restart, as after a policy change).
3. Outcome: an arm runs for a dwell of `dwell_periods` control periods; over the dwell
   (after `settle_periods`, while flowlets of the previous arm drain) the class's QoS is
   measured from the egress edge's counters (`PathState.counters`) on the paths the arm
   weighted: goodput as a fraction of the alive paths' summed capacity, queueing delay
   (byte-weighted), loss (by bytes: lost packets times the path's mean packet size, so lost
   probes weigh little), reordering (flow_ooo / delivered packets). `score` rates it against
   the class's `qos_target` (or the default target of the parameters `target_*`): "met" is 1
   when every target is met, else 0; "graded" (default) multiplies per target min(1,
   achieved / target) for a minimum and min(1, target / achieved) for a maximum. A dwell with
   less than `min_goodput_mbps` delivered (an idle class) is not scored.
4. Mapping (`adaptive_bayes`): Beta posteriors of P(QoS met | context, arm), updated per dwell
   (optionally discounted, `discount`, for a network that changes under one context);
   the next arm is the one of highest posterior mean for the current context, kept unless
   another is `switch_margin` better, with bounded, visible exploration (Thompson sampling or
   ε), seeded (`seed`); with `explore_when` "unmet" (default) only after a dwell in which the
   current arm did not meet the target in this context (the paper's aim is a choice that meets
   the QoS, and every exploratory dwell moves flows twice).

Damping: an arm keeps the class for its whole dwell; a change of the context (a new key held
for `context_hold_periods` periods; levels move with `context_hysteresis`, and the view counts
the changes of the key and of the held key) ends the dwell early, unscored, once the arm has run
`min_dwell_periods`; the outcome of a dwell is credited to the context it was chosen in, and
only if the context held throughout.

Limits: the data plane counts per path, not per class, so classes sharing paths share their
measurements. Arms use the registry defaults plus their own parameters (not the global
`policies.<name>`), and LM3 arms the default LM3 parameters, with blocking events from the
counters' flow_ooo increase over the switch's paths, as the scheduler computes them.

The parts, each in its own module: the arms and their spec (`adaptive_arms`), the parameters
(`adaptive_params`), the context (`adaptive_context`), the dwell's outcome and score
(`adaptive_outcome`), the Beta posteriors and the choice (`adaptive_bayes`) and the REST view
(`adaptive_view`); this module is the policy that runs them once per period.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mpsched.controller.model.decision import Decision
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathCounters, PathState
from mpsched.controller.policies.adaptive_arms import DEFAULT_ARMS, Arm, parse_arms
from mpsched.controller.policies.adaptive_bayes import BetaTable, Choice, choose
from mpsched.controller.policies.adaptive_context import (
    FEATURES,
    Context,
    Level,
    context,
    parse_levels,
)
from mpsched.controller.policies.adaptive_outcome import Measured, PathTally, score, summarise
from mpsched.controller.policies.adaptive_params import EXPLORE_WHEN, OUTCOMES, AdaptiveParams
from mpsched.controller.policies.adaptive_view import dwell_view, table_view
from mpsched.controller.policies.base import Policy, QosTarget
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.policies.registry import register

__all__ = [
    "DEFAULT_ARMS",
    "EXPLORE_WHEN",
    "HISTORY",
    "OUTCOMES",
    "Adaptive",
    "AdaptiveParams",
    "Arm",
    "Dwell",
    "Measured",
    "PathTally",
    "parse_arms",
    "score",
    "summarise",
]

log = logging.getLogger(__name__)

HISTORY = 50  # dwells kept for the REST view


@dataclass
class Dwell:
    """The current arm's run: when and in which context it was chosen, what it measured."""

    arm: Arm
    ctx: str
    started: float
    choice: Choice
    periods: int = 0
    ctx_changed: bool = False
    tallies: dict[int, PathTally] = field(default_factory=dict)
    seconds: float = 0.0
    capacity_sum: float = 0.0
    capacity_n: int = 0
    used: set[int] = field(default_factory=set)


@register
class Adaptive(Policy):
    """Chooses, per context, the arm expected to meet the class's QoS target (module
    docstring)."""

    name = "adaptive"
    Params = AdaptiveParams

    def __init__(self, params: AdaptiveParams | None = None) -> None:
        super().__init__(params)
        prm = self.params
        self.arms = parse_arms(prm.arms)
        self._by_label = {a.label: a for a in self.arms}
        self.levels: dict[str, tuple[Level, ...]] = {
            f: parse_levels(getattr(prm, f"{f}_levels"), f"{f}_levels") for f in FEATURES
        }
        self.table = BetaTable(prm.prior_alpha, prm.prior_beta, prm.pool, prm.prior, prm.discount)
        self.rng = random.Random(prm.seed)
        self.target: QosTarget | None = None
        self.dwell: Dwell | None = None
        self._policy: Policy | None = None
        self._lm3: Lm3 | None = None
        self._prev: dict[int, PathCounters] = {}
        self._prev_t: float | None = None
        self._ooo_prev: dict[int, int] = {}
        self._stable: str | None = None
        self._pending: tuple[str, int] | None = None
        self.context: Context | None = None
        self.history: deque[dict[str, Any]] = deque(maxlen=HISTORY)
        self._met: dict[tuple[str, str], bool] = {}  # (context, arm) -> its latest dwell met
        self.switches = 0
        # changes of the period's context key, and of the stable key (held long enough)
        self.context_changes = {"key": 0, "stable": 0}

    # -- hooks ---------------------------------------------------------------

    def set_target(self, target: QosTarget | None) -> None:
        self.target = None if target is None or target.is_empty() else target

    def effective_target(self) -> tuple[QosTarget, str]:
        if self.target is not None:
            return self.target, "class"
        return self.params.default_target(), "default"

    def sub_policies(self) -> list[Policy]:
        return [a.make()[0] for a in self.arms]

    def _signature(self) -> dict[str, Any]:
        prm = self.params
        return {
            "context_mode": prm.context_mode,
            **{f"{f}_levels": getattr(prm, f"{f}_levels") for f in FEATURES},
        }

    def learned(self) -> dict[str, Any]:
        return {"discretisation": self._signature(), "table": self.table.to_json()}

    def restore_learned(self, data: Any, where: str) -> None:
        """The table of an earlier instance; dropped (logged) if it was learned on another
        discretisation, evidence of arms no longer listed left out."""
        if not isinstance(data, Mapping):
            raise FieldError(where, "must be an object")
        unknown = sorted(set(data) - {"discretisation", "table"})
        if unknown:
            raise FieldError(f"{where}.{unknown[0]}", "unknown field")
        if data.get("discretisation") != self._signature():
            log.warning("adaptive: learned table at %s was learned on another context "
                        "discretisation; starting afresh", where)
            return
        table = BetaTable(self.table.alpha0, self.table.beta0, self.table.pool, self.table.prior,
                          self.table.discount)
        table.load_json(data.get("table"), f"{where}.table", [a.label for a in self.arms])
        self.table = table

    # -- the period --------------------------------------------------------------

    def _hold(self, key: str) -> str:
        """The stable context key: a new key counts once it held context_hold_periods."""
        if self._stable is None:
            self._stable = key
        if key == self._stable:
            self._pending = None
        else:
            n = self._pending[1] + 1 if self._pending and self._pending[0] == key else 1
            self._pending = (key, n)
            if n >= self.params.context_hold_periods:
                self._stable, self._pending = key, None
                self.context_changes["stable"] += 1
        return self._stable

    def _deltas(self, paths: Sequence[PathState], now: float
                ) -> tuple[dict[int, tuple[int, int, int, int]], float]:
        """Per path (packets, bytes, lost, flow_ooo) since the previous period (paths whose
        counters restarted or are missing are left out), and the seconds in between."""
        out = {}
        for p in paths:
            c, prev = p.counters, self._prev.get(p.path_id)
            if c is None:
                continue
            if prev is not None:
                d = (c.packets - prev.packets, c.bytes - prev.bytes, c.lost - prev.lost,
                     c.flow_ooo - prev.flow_ooo)
                if d[0] >= 0 and d[1] >= 0 and d[3] >= 0:
                    out[p.path_id] = (d[0], d[1], max(0, d[2]), d[3])
            self._prev[p.path_id] = c
        seconds = 0.0 if self._prev_t is None else max(0.0, now - self._prev_t)
        self._prev_t = now
        return out, seconds

    def _measure(self, paths: Sequence[PathState], deltas: Mapping[int, tuple[int, int, int, int]],
                 seconds: float) -> None:
        d = self.dwell
        if d is None or d.periods <= self.params.settle_periods or seconds <= 0:
            return
        d.seconds += seconds
        caps = [p.capacity_mbps for p in paths if p.alive and p.capacity_mbps]
        if caps:
            d.capacity_sum += sum(caps)
            d.capacity_n += 1
        for p in paths:
            if p.path_id not in d.used:
                continue
            t = d.tallies.setdefault(p.path_id, PathTally())
            if p.path_id in deltas:
                packets, nbytes, lost, ooo = deltas[p.path_id]
                t.packets += packets
                t.bytes += nbytes
                t.lost += lost
                t.ooo += ooo
            if p.owd_ms is not None:
                t.owd_sum += p.owd_ms
                t.owd_n += 1

    def _blocking(self, deltas: Mapping[int, tuple[int, int, int, int]]) -> int:
        if self._lm3 is None:
            return 0
        return self._lm3.blocking_events(sum(d[3] for d in deltas.values()))

    def _close(self, now: float, why: str) -> None:
        """End the dwell: score it (when it may be) and record it."""
        d = self.dwell
        if d is None:
            return
        target, source = self.effective_target()
        cap = d.capacity_sum / d.capacity_n if d.capacity_n else None
        m = summarise(d.tallies, d.seconds, cap)
        entry: dict[str, Any] = {
            "t": round(now, 3), "arm": d.arm.label, "context": d.ctx, "periods": d.periods,
            "explored": d.choice.explored, "measured": m.to_dict(), "scored": False,
        }
        if why != "dwell":
            entry["why"] = why
        elif d.ctx_changed:
            entry["why"] = "context changed during the dwell: not scored"
        elif d.seconds <= 0 or m.goodput_mbps < self.params.min_goodput_mbps:
            entry["why"] = f"idle (< {self.params.min_goodput_mbps:g} Mbit/s): not scored"
        else:
            u, met, terms = score(m, target, self.params.outcome == "graded")
            self.table.update(d.ctx, d.arm.label, u)
            self._met[(d.ctx, d.arm.label)] = met
            entry.update(scored=True, outcome=round(u, 6), met=met,
                         terms={k: round(v, 6) for k, v in terms.items()}, target=source)
        self.history.append(entry)
        log.debug("adaptive: dwell closed %s", entry)

    def _start(self, ctx: str, now: float) -> None:
        current = self.dwell.arm.label if self.dwell is not None else None
        prm = self.params
        explore = prm.explore_when == "always" or not self._met.get((ctx, current or ""), False)
        choice = choose(
            self.table, ctx, [a.label for a in self.arms], current, self.rng,
            prm.exploration, prm.epsilon, prm.switch_margin, prm.max_explore_frac, explore,
        )
        arm = self._by_label[choice.arm]
        if current is not None and arm.label != current:
            self.switches += 1
            log.info("adaptive: %s -> %s in context %s (%s)", current, arm.label, ctx, choice.note)
        self._policy, self._lm3 = arm.make()
        self.dwell = Dwell(arm, ctx, now, choice)

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        previous = self.context
        self.context = context(
            paths, self.levels, self.params.context_mode, previous, self.params.context_hysteresis
        )
        if previous is not None and previous.key != self.context.key:
            self.context_changes["key"] += 1
        stable = self._hold(self.context.key)
        deltas, seconds = self._deltas(paths, now)
        d = self.dwell
        if d is None:
            self._start(stable, now)
        else:
            d.periods += 1
            self._measure(paths, deltas, seconds)
            if stable != d.ctx:
                d.ctx_changed = True
            if d.periods >= self.params.dwell_periods:
                self._close(now, "dwell")
                self._start(stable, now)
            elif d.ctx_changed and d.periods >= self.params.min_dwell_periods:
                self._close(now, "context changed: dwell ended early, not scored")
                self._start(stable, now)
        d = self.dwell
        assert d is not None and self._policy is not None
        decision = self._policy.decide(paths, now)
        if self._lm3 is not None:
            decision = self._lm3.apply(paths, decision, self._blocking(deltas), now)
        d.used |= {pid for pid, w in decision.weights.items() if w > 0}
        means = d.choice.means
        how = "explored: " + d.choice.note if d.choice.explored else d.choice.note
        reason = (
            f"adaptive: arm {d.arm.label} ({how}; dwell {d.periods}/{self.params.dwell_periods})"
            f"; context {stable}; P(met) {' '.join(f'{a}={means[a]:.3g}' for a in means)}"
            f" | {decision.reason}"
        )
        return replace(decision, reason=reason)

    # -- the REST view -------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        target, source = self.effective_target()
        d = self.dwell
        return {
            "arms": [a.label for a in self.arms],
            "arm": None if d is None else d.arm.label,
            "dwell": dwell_view(d, self.params.dwell_periods),
            "context": None if self.context is None else self.context.to_dict(),
            "stable_context": self._stable,
            "target": {**target.__dict__, "source": source},
            "outcome": self.params.outcome,
            "exploration": self.params.exploration,
            "switches": self.switches,
            "context_changes": dict(self.context_changes),
            "table": table_view(self.table, self.arms),
            "history": list(self.history),
        }
