"""The scheduling-policy interface, parameter handling and helpers shared by every policy.

It knows no implementation: they register themselves in `registry` (see the package).

A policy turns the estimators' view of the paths (`PathState`, docs/control-loop.md, "The loop
around a policy") into a `Decision` once per control period: a weight per path, the data
plane's path-choice `Mode`, the policy's per-path scores and a one-line reason for the decision log.

Rules every policy follows (implemented here, used by all):
- a dead path (`alive` False: liveness and operator admin state combined) gets weight 0;
- if no path is alive the policy does NOT return all-zero weights (the data plane would drop
  everything): it returns equal weights over all paths with the reason "no path alive" and
  lets the data plane's local failover decide (`no_alive_decision`);
- a missing estimate (None) never raises; each policy documents its neutral treatment.

Parameters: each policy declares `Params`, a frozen dataclass whose fields carry defaults and
`metadata` with "doc" and optional "min", "max" and "choices";
src/mpsched/controller/policies/params.py
makes the pydantic model that validates them (`params_from_dict`, raising `FieldError` naming
the offending field) and gives their schema (`params_schema`).
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from mpsched.controller.model.decision import Decision, Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.params import (  # noqa: F401 (re-exported)
    params_from_dict,
    params_schema,
    params_to_dict,
)
from mpsched.p4rt.weights import MAX_WEIGHT

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QosTarget:
    """A traffic class's QoS target (`qos_target` of the class; None = no target on that
    metric), measured over the class's paths per dwell by the `adaptive` policy."""

    min_goodput_frac: float | None = None  # delivered / summed capacity of the alive paths
    max_delay_ms: float | None = None  # queueing delay (one-way delay above its minimum)
    max_loss: float | None = None  # lost / sent, by bytes
    max_reorder: float | None = None  # packets overtaken within their flow / delivered

    def is_empty(self) -> bool:
        return self == QosTarget()


@dataclass(frozen=True)
class NoParams:
    """A policy without parameters."""


P = TypeVar("P")


class Policy(ABC, Generic[P]):
    """A scheduling policy; `decide` is called once per control period.

    Stateful policies keep their history in the instance. `P` is the type of `params`, which
    is `Params` (a class variable cannot name a type variable, so the two are kept in step
    by hand: ``class Llhd(Policy[LlhdParams]): Params = LlhdParams``).
    """

    name: ClassVar[str]
    Params: ClassVar[type[Any]] = NoParams
    # True: `decide` keeps no state, so on equal paths it decides as it did (the control loop
    # may then skip a pair whose inputs did not change, src/mpsched/controller/scheduling/due.py);
    # False (the default, what a stateful policy must say): stepped every control period.
    repeats: ClassVar[bool] = False
    params: P

    def __init__(self, params: P | None = None) -> None:
        if params is None:
            params = self.Params()
        if not isinstance(params, self.Params):
            raise TypeError(f"{self.name}: params must be {self.Params.__name__}")
        self.params = params

    @abstractmethod
    def decide(self, paths: Sequence[PathState], now: float) -> Decision: ...

    # Hooks for policies that use their class's QoS target or learn across periods (`adaptive`);
    # the others ignore them.

    def set_target(self, target: QosTarget | None) -> None:
        """The class's QoS target (None: the class has none); called when it is set."""
        return None

    def learned(self) -> dict[str, Any] | None:
        """What the policy learned, as JSON to keep in the controller's state (None: nothing)."""
        return None

    def restore_learned(self, data: Any, where: str) -> None:
        """Take over `learned()` of an earlier instance; FieldError names the bad field."""
        raise FieldError(where, f"policy {self.name!r} keeps no learned state")

    def sub_policies(self) -> list[Policy]:
        """The policies this one may delegate a decision to (their modes count as its own)."""
        return []


# -- helpers shared by the policies --------------------------------------------


def quantise(weights: Mapping[int, float], max_weight: int = MAX_WEIGHT) -> dict[int, int]:
    """Integer weights 0..max_weight: the largest -> max_weight, others proportional
    (rounded), and a nonzero weight never rounds to 0."""
    for pid, w in weights.items():
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"weight of path {pid} must be finite and >= 0, got {w!r}")
    top = max(weights.values(), default=0.0)
    if top <= 0:
        return {pid: 0 for pid in weights}
    return {
        pid: 0 if w == 0 else min(max_weight, max(1, round(w / top * max_weight)))
        for pid, w in weights.items()
    }


def alive_ids(paths: Iterable[PathState]) -> list[int]:
    return [p.path_id for p in paths if p.alive]


def equal_weights(paths: Iterable[PathState], chosen: Iterable[int]) -> dict[int, float]:
    """1.0 for the chosen ids, 0.0 for every other path."""
    keep = set(chosen)
    return {p.path_id: 1.0 if p.path_id in keep else 0.0 for p in paths}


def no_alive_decision(paths: Sequence[PathState], mode: Mode) -> Decision:
    """Equal weights over all paths: the data plane's failover decides."""
    return Decision(
        weights={p.path_id: 1.0 for p in paths},
        mode=mode,
        scores={p.path_id: 0.0 for p in paths},
        reason="no path alive: equal weights over all paths (data-plane failover decides)",
    )


def jitter_indicator(values: Sequence[float]) -> float:
    """J = (x_now - x_avg) / (x_max - x_min) over `values` (oldest first, x_now the last);
    0 with fewer than two values or when the range is 0 (CMT-LA)."""
    if len(values) < 2:
        return 0.0
    lo, hi = min(values), max(values)
    if hi - lo <= 0:
        return 0.0
    return (values[-1] - sum(values) / len(values)) / (hi - lo)


def fmt_scores(scores: Mapping[int, float], digits: int = 3) -> str:
    """'1=0.5 2=0.25' for reason lines."""
    return " ".join(f"{pid}={value:.{digits}g}" for pid, value in sorted(scores.items()))
