"""The value checks of traffic classes (src/mpsched/controller/scheduling/classes.py): each takes a
JSON
value and the name of its field and returns the normalised value or raises `FieldError`
naming the field, with the project's messages (``must be an integer 0..63, got 64``).
`FrozenParams` holds a class's policy parameters immutably (classes are hashable)."""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from mpsched.controller.model.errors import FieldError
from mpsched.validation import finite

PROTOCOLS = {"icmp": 1, "tcp": 6, "udp": 17}

_NAME = re.compile(r"[A-Za-z0-9_.-]{1,32}")
_IPV4_PREFIX = re.compile(r"[0-9]{1,3}(\.[0-9]{1,3}){3}(/[0-9]{1,2})?")


class FrozenParams(Mapping[str, Any]):
    """An immutable, hashable mapping of JSON values (nested dicts frozen, lists as tuples)."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._items = {str(k): _freeze(v) for k, v in (items or {}).items()}

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(json.dumps(thaw(self), sort_keys=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return thaw(self) == thaw(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenParams({thaw(self)!r})"


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping) and not isinstance(value, FrozenParams):
        return FrozenParams(value)
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Plain JSON types (dict, list) again from frozen parameters."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


def check_int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(name, f"must be an integer {lo}..{hi}, got {value!r}")
    if not lo <= value <= hi:
        raise FieldError(name, f"must be an integer {lo}..{hi}, got {value}")
    return value


def check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise FieldError(name, f"must be true or false, got {value!r}")
    return value


def check_name(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise FieldError(name, "must be 1..32 characters of A-Z a-z 0-9 _ . -")
    return value


def check_prefix(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _IPV4_PREFIX.fullmatch(value):
        raise FieldError(name, "must be an IPv4 prefix 'a.b.c.d/len' or an address 'a.b.c.d'")
    try:
        return str(ipaddress.IPv4Network(value if "/" in value else value + "/32", strict=True))
    except ValueError as error:
        raise FieldError(name, f"not an IPv4 prefix (host bits must be zero): {error}") from None


def check_proto(value: Any, name: str) -> int:
    if isinstance(value, str):
        if value.lower() in PROTOCOLS:
            return PROTOCOLS[value.lower()]
        raise FieldError(name, f"must be an integer 0..255 or one of {sorted(PROTOCOLS)}")
    return check_int(value, name, 0, 255)


def check_port_range(value: Any, name: str) -> tuple[int, int]:
    if isinstance(value, list | tuple) and len(value) == 2:
        lo, hi = (check_int(v, name, 0, 65535) for v in value)
        if lo > hi:
            raise FieldError(name, f"range [{lo}, {hi}] is empty (lo > hi)")
        return lo, hi
    if isinstance(value, int) and not isinstance(value, bool):
        port = check_int(value, name, 0, 65535)
        return port, port
    raise FieldError(name, "must be a port 0..65535 or a range [lo, hi]")


def _json_value(value: Any, name: str) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError(name, "must be a finite number")
        return value
    if isinstance(value, list | tuple):
        return [_json_value(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        return check_params(value, name)
    raise FieldError(name, f"unsupported value of type {type(value).__name__}")


def check_params(value: Any, name: str) -> dict[str, Any]:
    """A JSON object of finite JSON values with non-empty string keys (a policy's params;
    which keys a policy knows is checked against the policy by the scheduler)."""
    if not isinstance(value, Mapping):
        raise FieldError(name, "must be a JSON object")
    out = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key:
            raise FieldError(name, "keys must be non-empty strings")
        out[key] = _json_value(item, f"{name}.{key}" if name else key)
    return out


def check_target(value: Any, name: str, lo: float, hi: float) -> float:
    """A QoS target's number lo..hi (an int is accepted, a bool is not), as float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FieldError(name, f"must be a number {lo:g}..{hi:g} or null")
    if not finite(value) or not lo <= value <= hi:
        raise FieldError(name, f"must be a number {lo:g}..{hi:g}, got {value!r}")
    return float(value)
