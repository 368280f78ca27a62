"""The global parameters as written over REST (``PUT /params``) and kept in the state file:
a partial update, declared as a pydantic model made from the policies' Params declarations
(src/mpsched/controller/policies/params.py), so its JSON schema is the one the REST description
serves.

`GlobalParams.updated` (src/mpsched/controller/scheduling/params.py) checks a change against
`params_changes_model()` (unknown keys, types, ranges, naming the field, e.g.
``policies.llhd.beta``) and then merges it over the current values, where the Params
classes' cross-field checks run.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from mpsched.controller.policies import REGISTRY
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.policies.params import params_model
from mpsched.controller.runtime.governor import CPU_BUDGET_PCT, MAX_CPU_BUDGET_PCT
from mpsched.controller.scheduling.mptcp import MptcpParams
from mpsched.validation import fail, finite

CONTROL_PERIOD_MS = 100.0
MIN_CONTROL_PERIOD_MS = 10.0
MAX_CONTROL_PERIOD_MS = 10_000.0
# of the control period: how long a loop step may spend stepping a fabric's due pairs
# (src/mpsched/controller/scheduling/due.py); `step_budget_pct` is this in percent
STEP_BUDGET = 0.25
MAX_STEP_BUDGET_PCT = 100.0
TOP_KEYS = ("control_period_ms", "step_budget_pct", "cpu_budget_pct", "lm3", "policies",
            "mptcp")


def _period(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not finite(value)
        or not MIN_CONTROL_PERIOD_MS <= value <= MAX_CONTROL_PERIOD_MS
    ):
        raise ValueError(
            f"must be a number {MIN_CONTROL_PERIOD_MS:g}..{MAX_CONTROL_PERIOD_MS:g}, got {value!r}"
        )
    return float(value)


def _budget_pct(value: Any) -> float:
    """A share of the control period in percent: a number > 0 and <= 100."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not finite(value)
        or not 0 < value <= MAX_STEP_BUDGET_PCT
    ):
        raise ValueError(f"must be a number > 0 and <= {MAX_STEP_BUDGET_PCT:g}, got {value!r}")
    return float(value)


def _cpu_budget_pct(value: Any) -> float | None:
    """The process's CPU budget in % of one core: a number > 0 and <= MAX_CPU_BUDGET_PCT,
    or null (no budget)."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not finite(value)
        or not 0 < value <= MAX_CPU_BUDGET_PCT
    ):
        raise ValueError(
            f"must be null (no budget) or a number > 0 and <= {MAX_CPU_BUDGET_PCT:g}, "
            f"got {value!r}")
    return float(value)


def _object(value: Any) -> Any:
    if not isinstance(value, dict) and not isinstance(value, BaseModel):
        raise ValueError("must be an object")
    return value


def _known(keys: tuple[str, ...], message: str) -> Any:
    def check(data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key not in keys:
                    fail(str(key), f"{message}; known: {', '.join(keys)}", data[key])
        return data

    return model_validator(mode="before")(staticmethod(check))


def _partial(cls_params: type) -> Any:
    """A Params model as a field of a partial update: an object (any subset of its keys)."""
    return Annotated[params_model(cls_params), BeforeValidator(_object)]


@functools.cache
def params_changes_model() -> type[BaseModel]:
    """The model of a ``PUT /params`` body (every key optional: what is given changes)."""
    names = tuple(sorted(REGISTRY))
    each: dict[str, Any] = {name: (_partial(REGISTRY[name].Params), None) for name in names}
    policies: type[BaseModel] = create_model(
        "PolicyParams",
        __config__=ConfigDict(extra="forbid", frozen=True),
        __doc__="Per policy (by name), the global defaults of its parameters.",
        __validators__={"_known": _known(names, "no such policy")},
        **each,
    )
    period = Annotated[float, Field(ge=MIN_CONTROL_PERIOD_MS, le=MAX_CONTROL_PERIOD_MS,
                                    description="period of the control loop (ms)"),
                       BeforeValidator(_period)]
    budget = Annotated[float, Field(gt=0, le=MAX_STEP_BUDGET_PCT,
                                    description="the share of each control period (%) a "
                                    "control step may spend stepping a fabric's pairs; the "
                                    "rest wait for the next step"),
                       BeforeValidator(_budget_pct)]
    cpu = Annotated[float | None,
                    Field(description="the controller process's CPU (% of one core) that its "
                          "control steps keep within by stepping fewer of a fabric's pairs "
                          "(null: no budget)"),
                    BeforeValidator(_cpu_budget_pct)]
    fields: dict[str, Any] = {
        "control_period_ms": (period, CONTROL_PERIOD_MS),
        "step_budget_pct": (budget, STEP_BUDGET * 100),
        "cpu_budget_pct": (cpu, CPU_BUDGET_PCT),
        "lm3": (_partial(Lm3.Params), None),
        "policies": (Annotated[policies, BeforeValidator(_object)], None),
        "mptcp": (_partial(MptcpParams), None),
    }
    model: type[BaseModel] = create_model(
        "ParamsChanges",
        __config__=ConfigDict(extra="forbid", frozen=True),
        __doc__="A partial update of the global parameters: the keys given change.",
        __validators__={"_known": _known(TOP_KEYS, "unknown parameter")},
        **fields,
    )
    return model
