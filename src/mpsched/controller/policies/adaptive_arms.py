"""The `adaptive` policy's arms: the candidate policies it chooses among, and their spec.

An arm is a registered policy with its own parameters, optionally under LM3, written
``name[+lm3][:k=v;k=v]`` (values as JSON, else strings) and listed comma-separated in the
policy's `arms` parameter, e.g. ``ecmp,llhd,llhd+lm3,qos-ca:max_loss=0.01``. Arms use the
registry defaults plus their own parameters (not the global `policies.<name>`), and LM3 arms
the default LM3 parameters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies.base import Policy, params_from_dict
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.policies.registry import REGISTRY

# The policies that lead, or are within the intervals of the leader, on the goodput fraction of
# the comparisons of docs/results (wcmp: CMT-LA and the LM3 failure; letflow: the many-flow
# workloads; cmtla: LLHD #2; fdmvqs: LLHD #2), ordered by the mean goodput fraction relative to
# each scenario's best: in a context not seen yet every arm's posterior is the prior, and ties
# go to the earlier arm, so the first is the best generalist known. Few arms, because a context
# lasts seconds to minutes and every arm has to be tried in it (any policy can be listed).
DEFAULT_ARMS = "wcmp,cmtla,fdmvqs,letflow"


@dataclass(frozen=True)
class Arm:
    """One candidate: a policy, its parameters, LM3 on or off. `label` is its spec."""

    label: str
    name: str
    params: tuple[tuple[str, Any], ...] = ()
    lm3: bool = False

    def make(self) -> tuple[Policy, Lm3 | None]:
        cls = REGISTRY[self.name]
        return cls(params_from_dict(cls.Params, dict(self.params))), (Lm3() if self.lm3 else None)


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_arms(text: str, field_name: str = "arms") -> tuple[Arm, ...]:
    """'ecmp,llhd+lm3,qos-ca:max_loss=0.01;weighted=false' -> Arms (comma between arms,
    ':' before an arm's parameters, ';' between them; values as JSON, else strings).
    FieldError(field_name) names the bad arm."""
    given: object = text  # checked as given: a REST body or state file may hold anything
    if not isinstance(given, str) or not given.strip():
        raise FieldError(field_name, "must list at least one arm")
    arms: list[Arm] = []
    for spec in (s.strip() for s in text.split(",")):
        head, _, rest = spec.partition(":")
        name = head.strip()
        lm3 = name.endswith("+lm3")
        name = name.removesuffix("+lm3")
        if name == "adaptive" or name not in REGISTRY:
            known = sorted(n for n in REGISTRY if n != "adaptive")
            raise FieldError(field_name, f"arm {spec!r}: no policy {name!r} (known: {known})")
        params: dict[str, Any] = {}
        for item in (i.strip() for i in rest.split(";") if i.strip()):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise FieldError(field_name, f"arm {spec!r}: {item!r} is not key=value")
            params[key.strip()] = _value(value.strip())
        cls = REGISTRY[name]
        try:
            checked = params_from_dict(cls.Params, params)
        except FieldError as error:
            raise FieldError(field_name, f"arm {spec!r}: {error.field}: {error.message}") from None
        given = tuple((k, getattr(checked, k)) for k in params)
        label = head.strip() + (
            ":" + ";".join(f"{k}={json.dumps(v)}" for k, v in given) if given else ""
        )
        if any(a.label == label for a in arms):
            raise FieldError(field_name, f"arm {label!r} given twice")
        arms.append(Arm(label, name, given, lm3))
    return tuple(arms)
