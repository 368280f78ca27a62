"""The `adaptive` policy's mapping from context to QoS: Beta posteriors and the choice of arm.

Paper (QoS-MPTCP, docs/scheduling.md "Papers", Section 4.2.3): a Bayesian network learns, in real
time, the causal relation between the discretised context and the QoS metrics, so that the
choice expected to meet the QoS can be made. Here the network is the smallest one that
answers the question the policy asks, P(QoS met | context, choice): one Bernoulli node "met"
per (context, arm) with a conjugate Beta(alpha, beta) prior, updated by each dwell's outcome
u ∈ [0, 1] (alpha += u, beta += 1 - u; u is 0 or 1 for the binary "met" outcome, a fraction for
the graded one: a fractional observation of "met"). Posterior mean alpha / (alpha + beta).

Pooling (reconstructed, not in the paper): a context seen for the first time knows nothing,
and a testbed run sees each context for seconds; the posterior of (c, a) therefore borrows
`pool` times the evidence of arm a in every other context:

    alpha(c, a) = alpha0 + s(c, a) + pool · Σ_{c' ≠ c} s(c', a),  beta likewise with f.

pool = 0 gives independent contexts.

Centred prior (reconstructed, `prior="context"`): with a flat prior (`prior="flat"`) an arm not
tried in a context has mean alpha0 / (alpha0 + beta0) = 0.5, so in a context where every arm
scores below 0.5 (a graded outcome against a target nothing can meet there, e.g. the ACK
direction's goodput, or congestion loss no path choice avoids) each arm tried falls below the
untried ones and the greedy choice walks through the whole arm list. The centred prior is the
empirical-Bayes one: of the same strength n0 = alpha0 + beta0, centred on the mean outcome m of
the dwells scored in the context so far (any arm; clamped to [0.02, 0.98]), alpha0' = m · n0,
beta0' = (1 - m) · n0; a context without scored dwells keeps (alpha0, beta0). An untried arm is
then expected to do as well as the arms tried there, so the greedy choice stays with an arm
that does as well as the rest, and other arms are reached by exploration.

Discounting (reconstructed, `discount` gamma; the paper learns a stationary mapping): a context
can keep its key while the network under it changes (on the mixed scenario every phase is
``loss=high delay=high jitter=high load=high``), and an arm's long record of good dwells then
outweighs its recent bad ones for tens of dwells. With gamma < 1 every dwell scored in a
context first multiplies the evidence of every arm in that context by gamma (discounted
Thompson sampling, Raj & Kalyani 2017): the evidence of a context is at most 1 / (1 - gamma)
dwells, so the mean follows the recent outcomes and the posterior stays wide enough for
Thompson draws to try other arms; an arm not tried for a while drifts back to the prior, and
the centred prior uses the discounted outcomes (Σ s / Σ (s + f)). gamma = 1 (default) is the
stationary update above.

Choice (`choose`): the arm of highest posterior mean (ties: the order of the arm list), with
damping: the current arm is kept unless another's mean is more than `margin` above its own.
Exploration, bounded and visible:
- "epsilon": with probability ε a uniformly drawn other arm;
- "thompson": θ_a ~ Beta(alpha, beta) per arm, the largest θ (Thompson sampling).
Either way a choice that is not the damped greedy one is "explored", and it is made only while
the context's explored dwells stay within `max_explore_frac` of its dwells (else the greedy
arm, "budget spent"). The caller may also hold exploration back (`explore=False`, "no
exploration": the policy does so while the current arm meets the class's target). The random
draws come from the caller's seeded `random.Random`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mpsched.controller.model.errors import FieldError
from mpsched.validation import MAX_MAGNITUDE, finite, shown

EXPLORATIONS = ("epsilon", "thompson")
PRIORS = ("context", "flat")
CENTRE_CLAMP = (0.02, 0.98)
TABLE_VERSION = 1


@dataclass
class Cell:
    """Evidence of one (context, arm): summed outcomes and failures, and the dwells scored."""

    s: float = 0.0  # Σ u
    f: float = 0.0  # Σ (1 - u)
    n: int = 0
    last: float | None = None  # the latest outcome


@dataclass
class ContextStats:
    dwells: int = 0  # choices made in this context
    explored: int = 0  # of them, exploratory


@dataclass
class BetaTable:
    """P(QoS met | context, arm) as Beta posteriors (module docstring)."""

    alpha0: float = 1.0
    beta0: float = 1.0
    pool: float = 0.0
    prior: str = "flat"
    discount: float = 1.0  # gamma: evidence of a context is multiplied by it at each of its dwells
    cells: dict[str, dict[str, Cell]] = field(default_factory=dict)
    contexts: dict[str, ContextStats] = field(default_factory=dict)

    def update(self, ctx: str, arm: str, u: float) -> Cell:
        """One dwell's outcome u ∈ [0, 1] for (ctx, arm)."""
        if not 0.0 <= u <= 1.0 or math.isnan(u):
            raise ValueError(f"outcome must be in [0, 1], got {u!r}")
        arms = self.cells.setdefault(ctx, {})
        if self.discount < 1.0:
            for c in arms.values():
                c.s *= self.discount
                c.f *= self.discount
        cell = arms.setdefault(arm, Cell())
        cell.s += u
        cell.f += 1.0 - u
        cell.n += 1
        cell.last = u
        return cell

    def base(self, ctx: str) -> tuple[float, float]:
        """The prior of ctx: (alpha0, beta0), or with prior "context" the same strength
        centred on the context's mean outcome so far."""
        arms = self.cells.get(ctx, {}).values()
        n = sum(c.s + c.f for c in arms)  # the dwells scored (discounted)
        if self.prior != "context" or n <= 0:
            return self.alpha0, self.beta0
        lo, hi = CENTRE_CLAMP
        m = min(hi, max(lo, sum(c.s for c in arms) / n))
        strength = self.alpha0 + self.beta0
        return m * strength, (1.0 - m) * strength

    def posterior(self, ctx: str, arm: str) -> tuple[float, float]:
        """(alpha, beta) of (ctx, arm), with the pooled evidence of the other contexts."""
        alpha0, beta0 = self.base(ctx)
        own = self.cells.get(ctx, {}).get(arm, Cell())
        s_other = f_other = 0.0
        if self.pool > 0:
            for c, arms in self.cells.items():
                if c != ctx and arm in arms:
                    s_other += arms[arm].s
                    f_other += arms[arm].f
        return (
            alpha0 + own.s + self.pool * s_other,
            beta0 + own.f + self.pool * f_other,
        )

    def mean(self, ctx: str, arm: str) -> float:
        a, b = self.posterior(ctx, arm)
        return a / (a + b)

    def means(self, ctx: str, arms: Sequence[str]) -> dict[str, float]:
        return {arm: self.mean(ctx, arm) for arm in arms}

    def stats(self, ctx: str) -> ContextStats:
        return self.contexts.setdefault(ctx, ContextStats())

    # -- JSON (the controller's state file and GET /classes/{id}/adaptive) ------------

    def to_json(self) -> dict[str, Any]:
        return {
            "version": TABLE_VERSION,
            "contexts": {
                ctx: {
                    "dwells": self.stats(ctx).dwells,
                    "explored": self.stats(ctx).explored,
                    "arms": {
                        arm: {"s": _r(c.s), "f": _r(c.f), "n": c.n, "last": c.last}
                        for arm, c in sorted(arms.items())
                    },
                }
                for ctx, arms in sorted(
                    {**{c: {} for c in self.contexts}, **self.cells}.items()
                )
            },
        }

    def load_json(self, data: Any, where: str, arms: Sequence[str] | None = None) -> None:
        """Replace the evidence by `data` (from `to_json`); FieldError names the bad field
        under `where`. With `arms`, evidence of other arms is left out (the arm list changed)."""
        if not isinstance(data, Mapping):
            raise FieldError(where, "must be an object")
        if data.get("version") != TABLE_VERSION:
            raise FieldError(f"{where}.version", f"must be {TABLE_VERSION}")
        unknown = sorted(set(data) - {"version", "contexts"})
        if unknown:
            raise FieldError(f"{where}.{unknown[0]}", "unknown field")
        contexts = data.get("contexts", {})
        if not isinstance(contexts, Mapping):
            raise FieldError(f"{where}.contexts", "must be an object")
        cells: dict[str, dict[str, Cell]] = {}
        stats: dict[str, ContextStats] = {}
        for ctx, item in contexts.items():
            w = f"{where}.contexts.{ctx}"
            if not isinstance(item, Mapping):
                raise FieldError(w, "must be an object")
            stats[ctx] = ContextStats(
                _count(item.get("dwells", 0), f"{w}.dwells"),
                _count(item.get("explored", 0), f"{w}.explored"),
            )
            raw = item.get("arms", {})
            if not isinstance(raw, Mapping):
                raise FieldError(f"{w}.arms", "must be an object")
            for arm, c in raw.items():
                wa = f"{w}.arms.{arm}"
                if not isinstance(c, Mapping):
                    raise FieldError(wa, "must be an object")
                cell = Cell(
                    _number(c.get("s"), f"{wa}.s"),
                    _number(c.get("f"), f"{wa}.f"),
                    _count(c.get("n"), f"{wa}.n"),
                    None if c.get("last") is None else _number(c.get("last"), f"{wa}.last"),
                )
                if arms is None or arm in arms:
                    cells.setdefault(ctx, {})[arm] = cell
        self.cells, self.contexts = cells, stats


def _r(x: float) -> float:
    return round(x, 6)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not finite(value):
        raise FieldError(where, f"must be a finite number, got {value!r}")
    if value < 0:
        raise FieldError(where, f"must be >= 0, got {value!r}")
    if value > MAX_MAGNITUDE:
        raise FieldError(where, f"must be at most {MAX_MAGNITUDE}, got {shown(value)}")
    return float(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FieldError(where, f"must be an integer >= 0, got {value!r}")
    return value


@dataclass(frozen=True)
class Choice:
    """What `choose` decided and why (for the reason line and the REST view)."""

    arm: str
    greedy: str  # the damped greedy arm
    explored: bool
    means: dict[str, float]
    samples: dict[str, float]  # Thompson draws (empty for epsilon)
    # "greedy", "kept (margin)", "epsilon", "thompson", "budget spent"; the first two with
    # ", no exploration" when the caller held exploration back
    note: str


def choose(
    table: BetaTable,
    ctx: str,
    arms: Sequence[str],
    current: str | None,
    rng: random.Random,
    exploration: str = "epsilon",
    epsilon: float = 0.1,
    margin: float = 0.05,
    max_explore_frac: float = 0.25,
    explore: bool = True,
) -> Choice:
    """The arm for the next dwell in `ctx`, counted in the context's stats (module docstring)."""
    if not arms:
        raise ValueError("no arms")
    means = table.means(ctx, arms)
    best = max(arms, key=lambda a: (means[a], -arms.index(a)))
    greedy, note = best, "greedy"
    if current in means and current != best and means[best] - means[current] <= margin:
        greedy, note = current, "kept (margin)"
    stats = table.stats(ctx)
    budget = (stats.explored + 1) <= max_explore_frac * (stats.dwells + 1)
    if not explore:
        stats.dwells += 1
        return Choice(greedy, greedy, False, means, {}, note + ", no exploration")
    arm, samples = greedy, {}
    if exploration == "thompson":
        for a in arms:
            samples[a] = rng.betavariate(*table.posterior(ctx, a))
        drawn = max(arms, key=lambda a: (samples[a], -arms.index(a)))
        if drawn != greedy:
            arm, note = (drawn, "thompson") if budget else (greedy, "budget spent")
    elif len(arms) > 1 and rng.random() < epsilon:
        others = [a for a in arms if a != greedy]
        if budget:
            arm, note = others[rng.randrange(len(others))], "epsilon"
        else:
            note = "budget spent"
    explored = arm != greedy
    stats.dwells += 1
    stats.explored += int(explored)
    return Choice(arm, greedy, explored, means, samples, note)
