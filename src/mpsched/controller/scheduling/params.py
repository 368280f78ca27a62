"""The scheduler's global parameters (GET/PUT /params) and a class's policy instance.

The operator sets defaults per policy (`params.policies.<name>`), a class may override any of
them (`policy.params`, `make_class_policy`); LM3's parameters, the MPTCP-aware mode's and the
control period are global (`params.lm3`, `params.mptcp`, `params.control_period_ms`), and so
are the share of each period a control step may spend stepping a fabric's pairs
(`params.step_budget_pct`, src/mpsched/controller/scheduling/due.py) and the process's CPU budget
that
lowers that share (`params.cpu_budget_pct`, src/mpsched/controller/runtime/governor.py).
`GlobalParams.updated` applies a partial change, naming the offending key on error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mpsched.controller.model.errors import FieldError, checked
from mpsched.controller.policies import REGISTRY
from mpsched.controller.policies.base import (
    Policy,
    params_from_dict,
    params_schema,
    params_to_dict,
)
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.runtime.governor import CPU_BUDGET_PCT
from mpsched.controller.scheduling.classes import ClassPolicy
from mpsched.controller.scheduling.mptcp_placement import MptcpParams
from mpsched.controller.scheduling.params_changes import (
    CONTROL_PERIOD_MS,
    STEP_BUDGET,
    params_changes_model,
)


@dataclass
class GlobalParams:
    control_period_ms: float = CONTROL_PERIOD_MS
    # of each control period, in percent: the pair steps of one loop step (due.py)
    step_budget_pct: float = STEP_BUDGET * 100
    # the process's CPU, % of one core, the steps keep within
    # (src/mpsched/controller/runtime/governor.py; None: no budget)
    cpu_budget_pct: float | None = CPU_BUDGET_PCT
    lm3: Any = field(default_factory=lambda: Lm3.Params())
    policies: dict[str, Any] = field(
        default_factory=lambda: {name: cls.Params() for name, cls in REGISTRY.items()}
    )
    mptcp: MptcpParams = field(default_factory=MptcpParams)

    def to_dict(self) -> dict[str, Any]:
        return {
            "control_period_ms": self.control_period_ms,
            "step_budget_pct": self.step_budget_pct,
            "cpu_budget_pct": self.cpu_budget_pct,
            "lm3": params_to_dict(self.lm3),
            "policies": {name: params_to_dict(p) for name, p in sorted(self.policies.items())},
            "mptcp": params_to_dict(self.mptcp),
        }

    def updated(self, changes: Mapping[str, Any]) -> GlobalParams:
        """A copy with a partial dict applied; FieldError names the offending key (the
        model of `params_changes_model`, then the Params classes' cross-field checks)."""
        checked(params_changes_model(), changes)
        period = float(changes.get("control_period_ms", self.control_period_ms))
        budget_pct = float(changes.get("step_budget_pct", self.step_budget_pct))
        cpu_pct = self.cpu_budget_pct
        if "cpu_budget_pct" in changes:
            given = changes["cpu_budget_pct"]
            cpu_pct = None if given is None else float(given)
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
        return GlobalParams(control_period_ms=period, step_budget_pct=budget_pct,
                            cpu_budget_pct=cpu_pct, lm3=lm3, policies=policies, mptcp=mptcp)

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


def policy_switch(cp: ClassPolicy, changes: Mapping[str, Any], params: GlobalParams
                  ) -> dict[str, Any]:
    """`changes` to a class's policy `cp`, with the class's parameter overrides a change of
    policy keeps: where `changes` names another policy and gives no `params`, those of `cp`'s
    the new policy has under the same name and takes as they are (checked one by one against
    its parameters over the global defaults); the others are dropped. `changes` as they are
    otherwise (an unknown name is refused later, naming it)."""
    name = changes.get("name", cp.name)
    if name == cp.name or "params" in changes or name not in REGISTRY:
        return dict(changes)
    cls = REGISTRY[name]
    kept = {}
    for key, value in cp.params.items():
        try:
            params_from_dict(cls.Params, {key: value}, params.policies[name])
        except FieldError:
            continue
        kept[key] = value
    return {**changes, "params": kept}
