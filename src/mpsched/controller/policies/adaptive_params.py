"""The `adaptive` policy's parameters (GET/PUT /params, key "policies.adaptive").

Their meaning is the `adaptive` module docstring's: arms and exploration, the dwell and its
damping, the context's discretisation (`adaptive_context`), the outcome and the Beta prior
(`adaptive_bayes`), and the default QoS target of a class without `qos_target`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies.adaptive_arms import DEFAULT_ARMS, parse_arms
from mpsched.controller.policies.adaptive_bayes import EXPLORATIONS, PRIORS
from mpsched.controller.policies.adaptive_context import (
    CONTEXT_MODES,
    DEFAULT_LEVELS,
    FEATURES,
    parse_levels,
)
from mpsched.controller.policies.base import QosTarget

OUTCOMES = ("graded", "met")
EXPLORE_WHEN = ("unmet", "always")


def _levels_meta(feature: str) -> dict[str, Any]:
    return {
        "doc": f"Gaussian memberships of the {feature} levels 'name:centre:width[:k],...' "
        "(eq. 6; reconstructed defaults)"
    }


@dataclass(frozen=True)
class AdaptiveParams:
    arms: str = field(
        default=DEFAULT_ARMS,
        metadata={
            "doc": "candidate policies 'name[+lm3][:k=v;k=v],...' (their parameters; "
            "values as JSON)"
        },
    )
    exploration: str = field(
        default="thompson",
        metadata={"choices": EXPLORATIONS, "doc": "how other arms are tried"},
    )
    explore_when: str = field(
        default="unmet",
        metadata={"choices": EXPLORE_WHEN,
                  "doc": "explore only after a dwell in which the current arm did not meet the "
                  "target in this context (or has none), or at every choice"},
    )
    epsilon: float = field(
        default=0.1, metadata={"min": 0.0, "max": 1.0, "doc": "ε: exploration probability"}
    )
    max_explore_frac: float = field(
        default=0.3,
        metadata={"min": 0.0, "max": 1.0, "doc": "bound: exploratory dwells / dwells per context"},
    )
    switch_margin: float = field(
        default=0.02,
        metadata={"min": 0.0, "max": 1.0, "doc": "another arm replaces the current one only "
                  "when its posterior mean is this much higher"},
    )
    dwell_periods: int = field(
        default=20,
        metadata={"min": 2, "max": 100_000, "doc": "control periods an arm runs before scoring"},
    )
    settle_periods: int = field(
        default=3,
        metadata={"min": 0, "max": 100_000, "doc": "first periods of a dwell not measured"},
    )
    min_dwell_periods: int = field(
        default=5,
        metadata={"min": 1, "max": 100_000,
                  "doc": "periods an arm runs at least before a context change ends its dwell"},
    )
    context_hold_periods: int = field(
        default=3,
        metadata={"min": 1, "max": 100_000,
                  "doc": "periods a new context key must hold before it counts"},
    )
    context_hysteresis: float = field(
        default=0.0,
        metadata={"min": 0.0, "max": 10.0,
                  "doc": "a feature leaves its level only when the best level's ln membership is "
                  "this much higher (0: the plain argmax)"},
    )
    context_mode: str = field(
        default="set",
        metadata={"choices": CONTEXT_MODES,
                  "doc": "context key: the path set's levels, or every path's"},
    )
    loss_levels: str = field(default=DEFAULT_LEVELS["loss"], metadata=_levels_meta("loss"))
    delay_levels: str = field(
        default=DEFAULT_LEVELS["delay"], metadata=_levels_meta("queueing delay (ms)")
    )
    jitter_levels: str = field(
        default=DEFAULT_LEVELS["jitter"], metadata=_levels_meta("jitter (ms)")
    )
    load_levels: str = field(default=DEFAULT_LEVELS["load"], metadata=_levels_meta("load"))
    outcome: str = field(
        default="graded",
        metadata={"choices": OUTCOMES,
                  "doc": "dwell outcome: product of per-target ratios, or 1/0 all met"},
    )
    prior: str = field(
        default="context",
        metadata={"choices": PRIORS,
                  "doc": "Beta prior of an untried arm: centred on the context's mean outcome "
                  "so far (empirical Bayes), or flat (prior_alpha, prior_beta)"},
    )
    prior_alpha: float = field(
        default=1.0, metadata={"min": 0.001, "max": 1e6, "doc": "alpha0 of the Beta prior"}
    )
    prior_beta: float = field(
        default=1.0, metadata={"min": 0.001, "max": 1e6, "doc": "beta0 of the Beta prior"}
    )
    pool: float = field(
        default=0.2,
        metadata={"min": 0.0, "max": 1.0,
                  "doc": "weight of an arm's evidence in other contexts (0: independent)"},
    )
    discount: float = field(
        default=1.0,
        metadata={"min": 0.5, "max": 1.0,
                  "doc": "gamma: at each dwell scored in a context, its evidence is first "
                  "multiplied by gamma (1: stationary; < 1 tracks a network that changes under "
                  "one context)"},
    )
    seed: int = field(
        default=1, metadata={"min": 0, "max": 2**31 - 1, "doc": "seed of the exploration draws"}
    )
    min_goodput_mbps: float = field(
        default=0.5,
        metadata={"min": 0.0, "max": 1e6, "doc": "a dwell delivering less is idle: not scored"},
    )
    target_min_goodput_frac: float | None = field(
        default=0.95,
        metadata={"min": 0.0, "max": 1.0,
                  "doc": "default target (class without qos_target): goodput / capacity"},
    )
    target_max_delay_ms: float | None = field(
        default=None,
        metadata={"min": 0.0, "max": 1e6, "doc": "default target: queueing delay (ms)"},
    )
    target_max_loss: float | None = field(
        default=None, metadata={"min": 0.0, "max": 1.0, "doc": "default target: loss"}
    )
    target_max_reorder: float | None = field(
        default=None,
        metadata={"min": 0.0, "max": 1.0, "doc": "default target: reordered / delivered packets"},
    )

    def __post_init__(self) -> None:
        parse_arms(self.arms)
        for f in FEATURES:
            parse_levels(getattr(self, f"{f}_levels"), f"{f}_levels")
        if self.settle_periods >= self.dwell_periods:
            raise FieldError("settle_periods", "must be < dwell_periods")
        if self.min_dwell_periods > self.dwell_periods:
            raise FieldError("min_dwell_periods", "must be <= dwell_periods")

    def default_target(self) -> QosTarget:
        return QosTarget(
            self.target_min_goodput_frac,
            self.target_max_delay_ms,
            self.target_max_loss,
            self.target_max_reorder,
        )
