"""One validation layer for every input: files, command lines and REST bodies.

Inputs are declared as pydantic models (or pydantic dataclasses); this module turns their
`ValidationError` into one `InputError` that names the source (a file, "body"), the field and
what is wrong, the same way everywhere:

- field paths are dotted keys with list items in brackets, e.g. ``paths[1].schedule[0].at_s``,
  ``switches[0].pins[2].prefix``; "" is the document as a whole;
- a message says what the value must be and what it was, e.g.
  ``must be an integer 0..510, got 600``.

The constrained types below (`int_in`, `number`, `BoolValue`, `Text`, `one_of`) carry those
messages; `KeyCheck` gives a model the message ``unknown key (allowed: ...)``, and `fail`
raises an error located at a key from inside a validator (cross-field checks).
On the command line, `cli_error` prints ``file: field: message`` to stderr and returns the
exit status 2 (invalid input, as argparse's usage errors).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

from pydantic import BeforeValidator, TypeAdapter, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

T = TypeVar("T")
Loc = tuple[str | int, ...]
EXIT_INVALID = 2  # exit status of a command given an invalid input
# An error names a field and quotes the bad value: a file's key or value of a megabyte is
# shown cut, so that an error message stays a line.
MAX_FIELD_CHARS = 200
MAX_MESSAGE_CHARS = 600
# The largest magnitude a number of a file may have: where a float still holds every
# integer exactly (IEEE 754 double: 2^53); beyond it arithmetic on the value loses meaning.
MAX_MAGNITUDE = 2**53


def _capped(text: str, most: int) -> str:
    return text if len(text) <= most else f"{text[:most]}... ({len(text)} characters)"


def shown(value: Any, most: int = 80) -> str:
    """`repr(value)` for an error message, cut after `most` characters (a huge integer is
    shown by its digit count: repr of one of 5000 digits raises ValueError)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**most:
        try:
            digits = str(len(str(abs(value))))
        except ValueError:  # past Python's conversion limit (sys.get_int_max_str_digits)
            digits = "thousands of"
        return f"an integer of {digits} digits"
    return _capped(repr(value), most)


class InputError(ValueError):
    """Invalid input: `field` is the path of the bad field ("" = the whole input), `message`
    what is wrong with it and `source` where it came from (a file name, "body"; None: not
    known). Printed as ``source: field: message``."""

    def __init__(self, field: str, message: str, source: str | None = None) -> None:
        field, message = _capped(field, MAX_FIELD_CHARS), _capped(message, MAX_MESSAGE_CHARS)
        super().__init__(field, message, source)
        self.field = field
        self.message = message
        self.source = source

    def __str__(self) -> str:
        return ": ".join(p for p in (self.source, self.field, self.message) if p)

    def in_source(self, source: str | Path) -> InputError:
        """The same error (same class), naming where the input came from."""
        error = type(self).__new__(type(self))
        error.__dict__.update(self.__dict__)
        error.args = (self.field, self.message, str(source))
        error.source = str(source)
        return error


def field_path(loc: Loc) -> str:
    """``("paths", 1, "schedule", 0, "at_s")`` -> ``paths[1].schedule[0].at_s``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def fail(loc: str | Loc, message: str, value: Any = None) -> NoReturn:
    """Inside a validator: reject `value`, located at `loc` below the object being
    validated (a key, or a path such as ``("paths", 2, "id")``)."""
    where = (loc,) if isinstance(loc, str) else loc
    raise ValidationError.from_exception_data(
        "input",
        [InitErrorDetails(type=PydanticCustomError("input", message), loc=where, input=value)],
    )


# pydantic error types whose default text is replaced by the project's wording
_MESSAGES = {
    "missing": "missing",
    "missing_argument": "missing",
    "missing_keyword_only_argument": "missing",
    "unexpected_keyword_argument": "unknown key",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "dataclass_args_type": "must be an object",
    "dict_type": "must be an object",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "extra_forbidden": "unknown key",
}


def _message(error: Any) -> str:
    kind = error["type"]
    if kind in _MESSAGES:
        return _MESSAGES[kind]
    if kind in ("value_error", "assertion_error") and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])
    if kind == "input":
        return str(error["msg"])
    text = str(error["msg"])
    return f"{text[:1].lower()}{text[1:]}, got {error.get('input')!r}"


def input_errors(exc: ValidationError, source: str | Path | None = None,
                 prefix: Loc = ()) -> list[InputError]:
    """Every error of `exc`, each naming its field (below `prefix`) and `source`."""
    where = None if source is None else str(source)
    return [InputError(field_path(prefix + tuple(e["loc"])), _message(e), where)
            for e in exc.errors()]


def input_error(exc: ValidationError, source: str | Path | None = None,
                prefix: Loc = ()) -> InputError:
    """The first error of `exc` (the first bad field in declaration order)."""
    return input_errors(exc, source, prefix)[0]


def validate(kind: type[T], data: Any, *, error: type[InputError] = InputError,
             source: str | Path | None = None, context: dict | None = None) -> T:
    """`data` as `kind` (a model, a pydantic or plain dataclass, any type); raises `error`
    (an `InputError` class with its signature) naming the first bad field."""
    try:
        return _adapter(kind).validate_python(data, context=context)
    except ValidationError as exc:
        first = input_error(exc, source)
        raise error(first.field, first.message, first.source) from None


_ADAPTERS: dict[Any, TypeAdapter] = {}


def _adapter(kind: Any) -> TypeAdapter:
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


def dump(value: Any, kind: Any = None) -> Any:
    """`value` as JSON-ready data (the inverse of `validate`)."""
    return _adapter(kind or type(value)).dump_python(value, mode="json")


def read_document(path: str | Path, error: type[InputError] = InputError) -> Any:
    """The parsed content of a JSON (``*.json``) or YAML (anything else) file, read and
    parsed within bounds (`mpsched.safeload.read_document`: size, UTF-8, nesting, values,
    no aliases or duplicate keys); any refusal raises `error` naming the file."""
    from mpsched import safeload  # it builds on this module's InputError

    return safeload.read_document(path, error)


def load_file(kind: type[T], path: str | Path, *, error: type[InputError] = InputError,
              context: dict | None = None) -> T:
    """Read `path` (`read_document`) and validate it as `kind`; errors name the file, and
    nothing else escapes (`mpsched.safeload.guard`)."""
    from mpsched import safeload

    return safeload.load(path, lambda data: validate(kind, data, error=error, source=path,
                                                     context=context), error)


def cli_error(error: InputError, prog: str | None = None) -> int:
    """Print ``[prog: ]file: field: message`` to stderr; returns the exit status (2)."""
    print(f"{prog}: {error}" if prog else error, file=sys.stderr)
    return EXIT_INVALID


# ---- constrained values with the project's messages ----------------------------------------


def finite(value: Any) -> bool:
    """Whether a number (int or float) is finite: an int always is (math.isfinite raises
    OverflowError on one beyond a float's range, e.g. of 400 digits)."""
    return isinstance(value, int) or math.isfinite(value)


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


def check_int(value: Any, low: int, high: int) -> int:
    """`value` if an integer low..high (not a bool, not a float), else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"must be an integer {low}..{high}, got {shown(value)}")
    return value


def check_number(value: Any, low: float = -math.inf, high: float = math.inf) -> float:
    """`value` as a finite float in low..high and within +-MAX_MAGNITUDE (an int is
    accepted, a bool is not). An int is compared as it is (exactly, whatever its size)
    before it is made a float."""
    if not _is_number(value):
        raise ValueError(f"must be a number, got {shown(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {shown(value)}")
    if not low <= value <= high:
        raise ValueError(f"must be in {low:g}..{high:g}, got {shown(value)}")
    if not -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE:
        raise ValueError(f"must be within +-{MAX_MAGNITUDE:.6g}, got {shown(value)}")
    return float(value)


def int_in(low: int, high: int) -> BeforeValidator:
    """``Annotated[int, int_in(0, 510)]``: an integer low..high."""
    return BeforeValidator(lambda v: check_int(v, low, high))


def number(low: float = -math.inf, high: float = math.inf) -> BeforeValidator:
    """``Annotated[float, number(0, 100)]``: a finite number low..high, as float."""
    return BeforeValidator(lambda v: check_number(v, low, high))


def one_of(choices: tuple[str, ...]) -> BeforeValidator:
    """``Annotated[str, one_of(("a", "b"))]``: one of the given strings."""

    def check(value: Any) -> str:
        if not isinstance(value, str) or value not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    return BeforeValidator(check)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a non-empty string, got {value!r}")
    return value


BoolValue = Annotated[bool, BeforeValidator(_bool)]
Text = Annotated[str, BeforeValidator(_text)]


class KeyCheck:
    """Mixin of a model or pydantic dataclass: a key it does not declare is named with the
    ones it does (``unknown key (allowed: a, b)``), before any other check."""

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = sorted(getattr(cls, "__pydantic_fields__", None)
                             or {f.name for f in dataclasses.fields(cls)})  # type: ignore[arg-type]
            for key in data:
                if key not in allowed:
                    fail(str(key), f"unknown key (allowed: {', '.join(allowed)})", data[key])
        return data
