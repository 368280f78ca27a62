"""Policy parameters: each policy's `Params` declaration and the pydantic model made from it.

A policy declares `Params` as a frozen dataclass whose fields carry defaults and `metadata`
with "doc" and optional "min", "max" and "choices" (src/mpsched/controller/policies/base.py). From
that
declaration `params_model` makes a pydantic model, the one place both the validation of
REST/state input (`params_from_dict`) and the schema served in ``GET /params``
(`params_schema`) come from; the messages are the project's (``must be >= 0.0, got -1``,
``unknown parameter (known: [...])``). A Params class may add cross-field or format checks in
`__post_init__` (raising FieldError with the bare field name; `params_from_dict` prefixes it).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model
from pydantic import model_validator as _model_validator

from mpsched.controller.model.errors import FieldError
from mpsched.validation import MAX_MAGNITUDE, fail, finite, input_error, shown


def _allowed_types(hint: Any) -> tuple[tuple[type, ...], bool]:
    """(accepted base types, None allowed) for a field's annotation."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        base = tuple(a for a in args if a is not type(None))
        return base, type(None) in args
    return (hint,), False


def _check_kind(name: str, value: Any, kind: type) -> Any:
    if kind is bool:
        if not isinstance(value, bool):
            raise FieldError(name, f"must be a boolean, got {value!r}")
    elif kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldError(name, f"must be an integer, got {value!r}")
        if abs(value) > MAX_MAGNITUDE:
            raise FieldError(name, f"must be within +-{MAX_MAGNITUDE}, got {shown(value)}")
    elif kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldError(name, f"must be a number, got {value!r}")
        if not finite(value):
            raise FieldError(name, f"must be finite, got {value!r}")
        if abs(value) > MAX_MAGNITUDE:
            raise FieldError(name, f"must be within +-{MAX_MAGNITUDE}, got {shown(value)}")
        value = float(value)
    elif kind is str and not isinstance(value, str):
        raise FieldError(name, f"must be a string, got {value!r}")
    return value


def _check_value(name: str, value: Any, hint: Any, meta: Mapping[str, Any]) -> Any:
    """The value converted to its field's type, or FieldError(name, ...)."""
    allowed, nullable = _allowed_types(hint)
    if value is None:
        if nullable:
            return None
        raise FieldError(name, "must not be null")
    value = _check_kind(name, value, allowed[0])
    if "min" in meta and value < meta["min"]:
        raise FieldError(name, f"must be >= {meta['min']}, got {value!r}")
    if "max" in meta and value > meta["max"]:
        raise FieldError(name, f"must be <= {meta['max']}, got {value!r}")
    if "choices" in meta and value not in meta["choices"]:
        raise FieldError(name, f"must be one of {list(meta['choices'])}, got {value!r}")
    return value


def _doc(f: dataclasses.Field) -> str:
    doc: str = f.metadata.get("doc", "")
    if "choices" in f.metadata:
        doc = f"{doc} (one of: {', '.join(map(str, f.metadata['choices']))})"
    return doc


def _field(f: dataclasses.Field, hint: Any) -> tuple[Any, Any]:
    """(annotation, FieldInfo) of the model field for one Params field."""
    meta = f.metadata
    allowed, nullable = _allowed_types(hint)
    bounds = {k: meta[k] for k in ("min", "max") if k in meta}
    kind: Any = Annotated[allowed[0], Field(ge=bounds.get("min"), le=bounds.get("max"))]
    if "choices" in meta:
        kind = typing.Literal[tuple(meta["choices"])]
    annotation = kind | None if nullable else kind

    def check(value: Any) -> Any:
        try:
            return _check_value("", value, hint, meta)
        except FieldError as error:
            raise ValueError(error.message) from None

    if f.default_factory is not dataclasses.MISSING:
        info = Field(default_factory=f.default_factory, description=_doc(f))
    else:  # a Params field always has a default: a partial update leaves the others as they are
        info = Field(default=f.default, description=_doc(f))
    return Annotated[annotation, BeforeValidator(check)], info


@functools.cache
def params_model(cls_params: type) -> type[BaseModel]:
    """The pydantic model of a Params dataclass: its fields, types, defaults, bounds,
    choices and docs; unknown keys are refused naming the key and the known ones."""
    hints = typing.get_type_hints(cls_params)
    fields = {f.name: _field(f, hints[f.name]) for f in dataclasses.fields(cls_params)}
    known = sorted(fields)

    def known_keys(data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key not in fields:
                    fail(str(key), f"unknown parameter (known: {known})", data[key])
        return data

    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        cls_params.__name__,
        __config__=ConfigDict(extra="forbid", frozen=True),
        __doc__=cls_params.__doc__,
        __validators__={"_known": _model_validator(mode="before")(staticmethod(known_keys))},
        **fields,
    )
    return model


def params_from_dict(
    cls_params: type, data: Mapping[str, Any] | None, base: Any = None, prefix: str = ""
) -> Any:
    """A new `cls_params` from the partial mapping `data` over `base` (default: the defaults).

    Unknown key, wrong type, out of range or a failed `__post_init__` check raise
    FieldError naming ``prefix + field``.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise FieldError(prefix.rstrip(".") or "params", "must be an object")
    if base is None:
        base = cls_params()
    try:
        checked = params_model(cls_params).model_validate(dict(data))
    except ValidationError as exc:
        first = input_error(exc)
        raise FieldError(prefix + first.field, first.message) from None
    values = {**params_to_dict(base), **{k: getattr(checked, k) for k in checked.model_fields_set}}
    try:
        return cls_params(**values)
    except FieldError as exc:
        raise FieldError(prefix + exc.field, exc.message) from None


def params_to_dict(p: Any) -> dict[str, Any]:
    """Field name -> value."""
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}


def _bound(prop: Mapping[str, Any], key: str) -> Any:
    """`minimum`/`maximum` of a property, nullable ones (anyOf [..., null]) included."""
    for branch in (prop, *prop.get("anyOf", ())):
        if key in branch:
            return branch[key]
    return None


def params_schema(cls_params: type) -> dict[str, dict[str, Any]]:
    """Field name -> {default, min, max, doc} (min/max None when unbounded), from the
    model's JSON schema (``GET /params`` serves it; the dashboard renders it)."""
    props = params_model(cls_params).model_json_schema()["properties"]
    return {
        name: {
            "default": prop.get("default"),
            "min": _bound(prop, "minimum"),
            "max": _bound(prop, "maximum"),
            "doc": prop.get("description", ""),
        }
        for name, prop in props.items()
    }
