"""The state file's document (src/mpsched/controller/intent/state.py) as a pydantic model.

`IntentFile` declares the file: ``version`` (1 or 2), ``classes`` (as ``PUT /classes``),
``params`` (as ``PUT /params``: checked and merged over the defaults by
`GlobalParams.updated`), ``paths`` (``{"<id>": {"weight": W, "admin": "up"|"down"}}``) and
``learned`` (version 2) and, for a fabric with links the operator took down, ``links``
(``{"<link name>": {"admin": "down"}}``, version 2). Every class's policy and params are
checked against the policy registry with those params. The messages are the ones the file has
always had (``unknown field; expected [...]``, ``must be the integer 2, got '1'``); `parse`
raises FieldError naming the field (``classes[1].policy.name``, ``paths.2.weight``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, model_validator

from mpsched.controller.model.errors import FieldError
from mpsched.controller.scheduling.classes import TrafficClass, classes_from_list
from mpsched.controller.scheduling.scheduler import GlobalParams, make_class_policy
from mpsched.p4rt.weights import MAX_WEIGHT
from mpsched.validation import fail

VERSION = 2
READ_VERSIONS = (1, 2)  # version 1: the same without "learned"
MAX_PATH_ID = 255  # as src/mpsched/netcfg.py
CONFIG = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


def _known(*keys: str) -> Any:
    """A before-validator naming an unknown key with the keys the object has."""

    def check(data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"must be a JSON object, got {type(data).__name__}")
        for key in data:
            if key not in keys:
                fail(str(key), f"unknown field; expected {list(keys)}", data[key])
        return data

    return model_validator(mode="before")(staticmethod(check))


def _weight(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WEIGHT:
        raise ValueError(f"must be an integer 0..{MAX_WEIGHT}, got {value!r}")
    return value


def _admin(value: Any) -> str:
    if value not in ("up", "down"):
        raise ValueError(f'must be "up" or "down", got {str(value)[:40]!r}')
    return str(value)


class PathEntry(BaseModel):
    """What an operator set for one path."""

    model_config = CONFIG
    known_keys = _known("weight", "admin")

    weight: Annotated[int, Field(ge=0, le=MAX_WEIGHT), BeforeValidator(_weight)]
    admin: Annotated[Literal["up", "down"], BeforeValidator(_admin)]


class LinkEntry(BaseModel):
    """What an operator set for one link of a fabric (PUT /links/{id}/admin)."""

    model_config = CONFIG
    known_keys = _known("admin")

    admin: Annotated[Literal["up", "down"], BeforeValidator(_admin)]


def _paths(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError('must be a JSON object {"<path id>": {"weight": W, "admin": A}}')
    seen: set[int] = set()
    for key in value:
        if not (key.isascii() and key.isdigit()) or not 1 <= int(key) <= MAX_PATH_ID:
            fail(key, f"path ids are integers 1..{MAX_PATH_ID}")
        if int(key) in seen:
            fail(key, "duplicate path id")
        seen.add(int(key))
    return value


def _version(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be the integer {VERSION}, got {value!r}")
    if value not in READ_VERSIONS:
        raise ValueError(
            f"unsupported version {value} (this controller reads versions "
            f"{', '.join(map(str, READ_VERSIONS))})"
        )
    return value


def _object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    return value


def _params(value: Any) -> GlobalParams:
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    try:
        return GlobalParams().updated(value)
    except FieldError as error:
        fail(error.field, error.message, value)


def loc(field: str) -> tuple[str | int, ...]:
    """``classes[2].match.dscp`` -> ``("classes", 2, "match", "dscp")``."""
    return tuple(int(index) if index else name
                 for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", field))


def _classes(value: Any) -> list[TrafficClass]:
    """As ``PUT /classes`` (src/mpsched/controller/scheduling/classes.py `classes_from_list`)."""
    try:
        return classes_from_list(value)
    except FieldError as error:
        fail(loc(error.field)[1:], error.message, value)


class IntentFile(BaseModel):
    """The state file: the operator's intent and what learning policies learned."""

    model_config = CONFIG
    known_keys = _known("version", "classes", "params", "paths", "learned", "links")

    version: Annotated[int, BeforeValidator(_version)]
    classes: Annotated[list[TrafficClass], PlainValidator(_classes)]
    params: Annotated[GlobalParams, PlainValidator(_params)]
    paths: Annotated[dict[str, PathEntry], BeforeValidator(_paths)]
    learned: Annotated[dict[str, Any], BeforeValidator(_object)] = Field(default_factory=dict)
    links: Annotated[dict[str, LinkEntry], BeforeValidator(_object)] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _checks(self) -> IntentFile:
        for key in ("learned", "links"):
            if self.version == 1 and key in self.model_fields_set:
                fail(key, "not in a version 1 file")
        for i, c in enumerate(self.classes):
            try:
                make_class_policy(c.policy, self.params, f"classes[{i}].policy")
            except FieldError as error:
                fail(error.field, error.message)
        return self
