"""Errors shared by the controller's pure modules and its REST layer."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from mpsched.validation import InputError, input_error

T = TypeVar("T")


class FieldError(InputError):
    """Invalid input; `field` names the offending field (dotted path, e.g. ``targets.max_loss``,
    list items in brackets, e.g. ``classes[2].match.dscp``). The one invalid-input error of
    mpsched.validation, raised by the controller's hand-written validators."""


class NotFoundError(LookupError):
    """No such path, class or connection (REST: 404)."""


class UnavailableError(RuntimeError):
    """A switch did not acknowledge a change (REST: 503)."""


class NotHereError(RuntimeError):
    """A write that would mean something else on this network than it says, e.g. a path id's
    weight on a fabric, where path 1 is a different route for every pair (REST: 409; the
    message names what to use instead)."""


class NotPrimaryError(RuntimeError):
    """This controller is a backup: another one is primary on a switch, and writes go there."""


def join_field(where: str, field: str) -> str:
    """``classes[2]`` + ``match.dscp`` -> ``classes[2].match.dscp``; ``[0]`` appends as is."""
    if not where or not field:
        return where or field
    return where + field if field.startswith("[") else f"{where}.{field}"


_ADAPTERS: dict[Any, TypeAdapter] = {}


def adapter(kind: Any) -> TypeAdapter:
    """One TypeAdapter per model or type (building one compiles its validator)."""
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


def checked(kind: type[T], data: Any, where: str = "") -> T:
    """`data` validated as `kind` (a pydantic model or dataclass); the first error raises
    FieldError naming its field below `where` (the document as a whole: `where` or "body")."""
    try:
        result: T = adapter(kind).validate_python(data)
        return result
    except ValidationError as exc:
        first = input_error(exc)
        message = first.message
        if message == "missing":  # name the key, as the hand-written checks did
            message = f"missing field {str(exc.errors()[0]['loc'][-1])!r}"
        raise FieldError(join_field(where, first.field) or "body", message) from None
