"""The REST API's inputs as pydantic models: request bodies and query parameters.

Each write's body is a model (`WeightBody`, `AdminBody`, `ClassesBody`, the class's
`PolicyChanges`, the global `params_changes_model()`); the GETs with query parameters have
one (`TelemetryQuery`, `DecisionsQuery`). `parse` validates a body or query against its
model and raises `FieldError` naming the first bad field, which the REST layer answers with
400 ``{"error": message, "field": name}``. The route table (routing.py) names each route's
model, and the REST description's schemas are generated from them (openapi.py).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from mpsched.controller.model.errors import FieldError, checked
from mpsched.controller.scheduling.classes import (
    MAX_CLASSES,
    PolicyChanges,
    TrafficClass,
    check_table,
)
from mpsched.controller.scheduling.params_changes import params_changes_model
from mpsched.p4rt.weights import MAX_WEIGHT
from mpsched.validation import KeyCheck, fail

__all__ = ["PolicyChanges", "params_changes_model"]

MAX_DECISIONS = 1000
DEFAULT_DECISIONS = 100
MAX_ID_DIGITS = 9  # path, class and connection ids in URLs; the `limit` query parameter
M = TypeVar("M")


class Body(KeyCheck, BaseModel):
    """A JSON object with exactly the declared keys (an unknown one is named)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _weight(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WEIGHT:
        raise ValueError(f"'weight' must be an integer 0..{MAX_WEIGHT}")
    return value


class WeightBody(Body):
    """`PUT /paths/{id}/weight`: the path's static weight (0: not used)."""

    weight: Annotated[int, Field(ge=0, le=MAX_WEIGHT), BeforeValidator(_weight)]


def _state(value: Any) -> str:
    if value not in ("up", "down"):
        raise ValueError("'state' must be \"up\" or \"down\"")
    return str(value)


class AdminBody(Body):
    """`PUT /paths/{id}/admin`: the operator's admin state of a path (down: the policies
    give it no weight, as a dead path); `PUT /links/{id}/admin`: of a fabric's link (down:
    the paths are computed without it)."""

    state: Annotated[Literal["up", "down"], BeforeValidator(_state)]

    @property
    def up(self) -> bool:
        return self.state == "up"


def _class_list(value: Any) -> Any:
    if not isinstance(value, list):
        raise ValueError("must be a JSON array of classes")
    if len(value) > MAX_CLASSES:
        raise ValueError(f"at most {MAX_CLASSES} classes, got {len(value)}")
    return value


class ClassesBody(Body):
    """`PUT /classes`: the complete class table, in order (unique ids and names, the
    default class 0 exactly once, with an empty match)."""

    classes: Annotated[list[TrafficClass], Field(max_length=MAX_CLASSES),
                       BeforeValidator(_class_list)]

    @model_validator(mode="after")
    def _table(self) -> ClassesBody:
        try:
            check_table(self.classes)
        except FieldError as error:
            fail(error.field, error.message)
        return self


def _since(value: Any) -> float:
    try:
        since = float(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"'since' must be a number (seconds since the epoch), got {value!r}"
        ) from None
    if not math.isfinite(since) or since < 0:
        raise ValueError(f"'since' must be a number >= 0, got {value!r}")
    return since


Since = Annotated[float, Field(ge=0, description="only what is newer (seconds since the epoch)"),
                  BeforeValidator(_since)]


class Query(BaseModel):
    """Query parameters (strings in the URL); parameters a resource does not know are left
    unread, as a browser's cache busters."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class TelemetryQuery(Query):
    """`GET /telemetry?since=<t>&direction=<d>`: of one direction only if given (the
    dashboard's fabric view polls one pair's)."""

    since: Since = 0.0
    direction: Annotated[str | None, Field(max_length=64, description="only this direction's "
                                           "(s1->s2; in a fabric a pair's id)")] = None


class DecisionsQuery(Query):
    """`GET /decisions?since=<t>&limit=<n>&pair=<id>`: the latest `limit` decisions after
    `since`, of one pair (`GET /pairs`) if given."""

    since: Since = 0.0
    pair: Annotated[str | None, Field(max_length=64, description="only this pair's "
                                      "(an id of GET /pairs)")] = None
    limit: Annotated[int, Field(ge=1, le=MAX_DECISIONS,
                                description="at most this many, the latest")] = DEFAULT_DECISIONS

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, value: Any) -> int:
        text = str(value)
        if (
            not (text.isascii() and text.isdigit())
            or len(text) > MAX_ID_DIGITS
            or not 1 <= int(text) <= MAX_DECISIONS
        ):
            raise ValueError(f"'limit' must be an integer 1..{MAX_DECISIONS}, got {text!r}")
        return int(text)


def parse(model: type[M], data: Any, where: str = "") -> M:
    """`data` as `model`; FieldError names the first bad field (below `where`)."""
    return checked(model, data, where)
