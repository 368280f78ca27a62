"""The policies by name: each implementation registers itself with `@register`.

This module imports no implementation; importing the package `mpsched.controller.policies`
imports them all (its `__init__`), so `REGISTRY` is complete wherever it is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies.base import Policy, params_from_dict

REGISTRY: dict[str, type[Policy]] = {}

_PolicyClass = TypeVar("_PolicyClass", bound=type[Policy])


def register(cls: _PolicyClass) -> _PolicyClass:
    """Class decorator: make the policy available to `make_policy` under `cls.name`."""
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"policy name {cls.name!r} registered twice")
    REGISTRY[cls.name] = cls
    return cls


def policy_names() -> list[str]:
    """Every registered policy name, sorted."""
    return sorted(REGISTRY)


def make_policy(
    name: str, params_dict: Mapping[str, Any] | None = None, *, prefix: str = "params."
) -> Policy:
    """A new policy by name with its parameters from a (partial) mapping.

    An unknown name raises FieldError("policy", ...); a bad parameter raises FieldError
    naming ``prefix + key`` (default ``params.beta`` and so on).
    """
    cls = REGISTRY.get(name)
    if cls is None:
        raise FieldError("policy", f"unknown policy {name!r} (known: {policy_names()})")
    return cls(params_from_dict(cls.Params, params_dict or {}, prefix=prefix))
