"""Traffic classes: which packets a class matches and the scheduling policy applied to them.

Pure data and validation, no I/O. Every ``*_from_dict`` rejects unknown keys, wrong
types (a bool is not an int) and out-of-range values with a `FieldError` naming the
field by its dotted/indexed path, e.g. ``classes[2].match.src_port``.

Class 0 is the default class: it matches everything, has priority 0 (below every
other class) and must be present exactly once in a class list, with an empty match.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mpsched.controller.errors import FieldError
from mpsched.controller.policies.base import QosTarget

MAX_CLASSES = 64
DEFAULT_CLASS_ID = 0
MAX_PRIORITY = 1000
MIN_FLOWLET_GAP_US = 0  # 0: automatic (controller/scheduling/scheduler.py auto_gap_us)
MAX_FLOWLET_GAP_US = 10_000_000
DEFAULT_FLOWLET_GAP_US = 0
PROTOCOLS = {"icmp": 1, "tcp": 6, "udp": 17}
POLICY_KEYS = ("name", "params", "lm3", "flowlet_gap_us")

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


@dataclass(frozen=True)
class Match:
    """Packet match; None is a wildcard. Prefixes are normalised to ``a.b.c.d/len``."""

    dscp: int | None = None
    src: str | None = None
    dst: str | None = None
    proto: int | None = None
    src_port: tuple[int, int] | None = None  # inclusive range
    dst_port: tuple[int, int] | None = None

    def is_empty(self) -> bool:
        return self == Match()

    def covers_flow(self, src: str, dst: str, proto: int, sport: int, dport: int) -> bool:
        """Whether every packet of this flow matches (False if the match needs a DSCP,
        which a flow's 5-tuple does not tell)."""
        if self.dscp is not None:
            return False
        for prefix, addr in ((self.src, src), (self.dst, dst)):
            if prefix is not None and ipaddress.IPv4Address(addr) not in ipaddress.IPv4Network(
                prefix
            ):
                return False
        if self.proto is not None and self.proto != proto:
            return False
        for ports, port in ((self.src_port, sport), (self.dst_port, dport)):
            if ports is not None and not ports[0] <= port <= ports[1]:
                return False
        return True


@dataclass(frozen=True)
class ClassPolicy:
    """The policy of a class. `name` and `params` are checked against the policies by the
    core; here they only need the right types."""

    name: str = "ecmp"
    params: Mapping[str, Any] = field(default_factory=FrozenParams)
    lm3: bool = False
    flowlet_gap_us: int = DEFAULT_FLOWLET_GAP_US

    def __post_init__(self) -> None:
        if not isinstance(self.params, FrozenParams):
            object.__setattr__(self, "params", FrozenParams(self.params))

    def updated(self, changes: Mapping[str, Any]) -> ClassPolicy:
        """This policy with the keys present in `changes` (as from `policy_changes`) replaced."""
        return replace(self, **{k: changes[k] for k in POLICY_KEYS if k in changes})


@dataclass(frozen=True)
class TrafficClass:
    """A traffic class; higher `priority` wins among overlapping matches. The default
    class (id 0) always has priority 0."""

    id: int
    name: str
    priority: int = 1
    match: Match = field(default_factory=Match)
    policy: ClassPolicy = field(default_factory=ClassPolicy)
    qos_target: QosTarget | None = None  # what the `adaptive` policy scores its choices by

    def __post_init__(self) -> None:
        if self.id == DEFAULT_CLASS_ID:
            object.__setattr__(self, "priority", 0)


# -- validation helpers ------------------------------------------------------


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _object(data: Any, where: str, keys: tuple[str, ...]) -> dict:
    if not isinstance(data, dict):
        raise FieldError(where or "body", "must be a JSON object")
    for key in data:
        if key not in keys:
            raise FieldError(_join(where, str(key)), f"unknown field; expected one of {list(keys)}")
    return data


def _int(value: Any, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(name, f"must be an integer {lo}..{hi}")
    if not lo <= value <= hi:
        raise FieldError(name, f"must be an integer {lo}..{hi}, got {value}")
    return value


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise FieldError(name, "must be true or false")
    return value


def _name(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise FieldError(name, "must be 1..32 characters of A-Z a-z 0-9 _ . -")
    return value


def _prefix(value: Any, name: str) -> str:
    if not isinstance(value, str) or not _IPV4_PREFIX.fullmatch(value):
        raise FieldError(name, "must be an IPv4 prefix 'a.b.c.d/len' or an address 'a.b.c.d'")
    try:
        return str(ipaddress.IPv4Network(value if "/" in value else value + "/32", strict=True))
    except ValueError as error:
        raise FieldError(name, f"not an IPv4 prefix (host bits must be zero): {error}") from None


def _proto(value: Any, name: str) -> int:
    if isinstance(value, str):
        if value.lower() in PROTOCOLS:
            return PROTOCOLS[value.lower()]
        raise FieldError(name, f"must be an integer 0..255 or one of {sorted(PROTOCOLS)}")
    return _int(value, name, 0, 255)


def _port_range(value: Any, name: str) -> tuple[int, int]:
    if isinstance(value, list) and len(value) == 2:
        lo, hi = (_int(v, name, 0, 65535) for v in value)
        if lo > hi:
            raise FieldError(name, f"range [{lo}, {hi}] is empty (lo > hi)")
        return lo, hi
    if isinstance(value, int) and not isinstance(value, bool):
        port = _int(value, name, 0, 65535)
        return port, port
    raise FieldError(name, "must be a port 0..65535 or a range [lo, hi]")


def _json_value(value: Any, name: str) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError(name, "must be a finite number")
        return value
    if isinstance(value, list):
        return [_json_value(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return _params(value, name)
    raise FieldError(name, f"unsupported value of type {type(value).__name__}")


def _params(value: Any, name: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise FieldError(name, "must be a JSON object")
    out = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key:
            raise FieldError(name, "keys must be non-empty strings")
        out[key] = _json_value(thaw(item), f"{name}.{key}")
    return out


# -- dict <-> dataclass --------------------------------------------------------


_POLICY_CHECKS = {
    "name": _name,
    "params": _params,
    "lm3": _bool,
    "flowlet_gap_us": lambda v, n: _int(v, n, MIN_FLOWLET_GAP_US, MAX_FLOWLET_GAP_US),
}


def policy_changes(data: Any, where: str = "policy") -> dict[str, Any]:
    """A partial policy (any subset of its keys), checked for types and ranges; params as a
    plain dict. For ``PUT /classes/{id}/policy``: missing keys keep their current value."""
    data = _object(data, where, POLICY_KEYS)
    return {key: _POLICY_CHECKS[key](data[key], _join(where, key)) for key in POLICY_KEYS
            if key in data}


def policy_from_dict(data: Any, where: str = "") -> ClassPolicy:
    """A complete policy; missing keys take the defaults of `ClassPolicy`."""
    return ClassPolicy(**policy_changes(data, where))


def policy_to_dict(policy: ClassPolicy) -> dict[str, Any]:
    return {
        "name": policy.name,
        "params": thaw(policy.params),
        "lm3": policy.lm3,
        "flowlet_gap_us": policy.flowlet_gap_us,
    }


_MATCH_CHECKS = {
    "dscp": lambda v, n: _int(v, n, 0, 63),
    "src": _prefix,
    "dst": _prefix,
    "proto": _proto,
    "src_port": _port_range,
    "dst_port": _port_range,
}


def match_from_dict(data: Any, where: str = "") -> Match:
    """A match; absent or null fields are wildcards."""
    data = _object(data, where, tuple(_MATCH_CHECKS))
    return Match(**{
        key: check(data[key], _join(where, key))
        for key, check in _MATCH_CHECKS.items()
        if data.get(key) is not None
    })


def match_to_dict(match: Match) -> dict[str, Any]:
    """Only the fields that are set; port ranges as ``[lo, hi]``."""
    out: dict[str, Any] = {}
    for key in _MATCH_CHECKS:
        value = getattr(match, key)
        if value is not None:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


_CLASS_KEYS = ("id", "name", "priority", "match", "policy", "qos_target")

# qos_target fields: (low, high) of each; every field optional, null = no target on it
_TARGET_RANGES = {
    "min_goodput_frac": (0.0, 1.0),
    "max_delay_ms": (0.0, 1e6),
    "max_loss": (0.0, 1.0),
    "max_reorder": (0.0, 1.0),
}


def qos_target_from_dict(data: Any, where: str = "qos_target") -> QosTarget | None:
    """A class's QoS target (None for null or an empty object); FieldError names the field,
    e.g. ``classes[1].qos_target.max_loss``."""
    if data is None:
        return None
    data = _object(data, where, tuple(_TARGET_RANGES))
    values: dict[str, float | None] = {}
    for key, (lo, hi) in _TARGET_RANGES.items():
        value = data.get(key)
        if value is None:
            values[key] = None
            continue
        name = _join(where, key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldError(name, f"must be a number {lo:g}..{hi:g} or null")
        if not math.isfinite(value) or not lo <= value <= hi:
            raise FieldError(name, f"must be a number {lo:g}..{hi:g}, got {value!r}")
        values[key] = float(value)
    target = QosTarget(**values)
    return None if target.is_empty() else target


def qos_target_to_dict(target: QosTarget | None) -> dict[str, float | None] | None:
    if target is None:
        return None
    return {key: getattr(target, key) for key in _TARGET_RANGES}


def class_from_dict(data: Any, where: str = "") -> TrafficClass:
    data = _object(data, where, _CLASS_KEYS)
    for key in ("id", "name"):
        if key not in data:
            raise FieldError(_join(where, key), "missing")
    class_id = _int(data["id"], _join(where, "id"), 0, MAX_CLASSES - 1)
    name = _name(data["name"], _join(where, "name"))
    if class_id == DEFAULT_CLASS_ID:
        given = data.get("priority", 0)
        if isinstance(given, bool) or not isinstance(given, int) or given != 0:
            raise FieldError(_join(where, "priority"), "the default class 0 has priority 0")
        priority = 0
    else:
        priority = _int(data.get("priority", 1), _join(where, "priority"), 1, MAX_PRIORITY)
    return TrafficClass(
        id=class_id,
        name=name,
        priority=priority,
        match=match_from_dict(data.get("match", {}), _join(where, "match")),
        policy=policy_from_dict(data.get("policy", {}), _join(where, "policy")),
        qos_target=qos_target_from_dict(data.get("qos_target"), _join(where, "qos_target")),
    )


def class_to_dict(c: TrafficClass) -> dict[str, Any]:
    return {
        "id": c.id,
        "name": c.name,
        "priority": c.priority,
        "match": match_to_dict(c.match),
        "policy": policy_to_dict(c.policy),
        "qos_target": qos_target_to_dict(c.qos_target),
    }


def classes_from_list(data: Any) -> list[TrafficClass]:
    """A complete class table (in the given order): unique ids and names, the default
    class exactly once with an empty match, at most `MAX_CLASSES` classes."""
    if not isinstance(data, list):
        raise FieldError("classes", "must be a JSON array of classes")
    if len(data) > MAX_CLASSES:
        raise FieldError("classes", f"at most {MAX_CLASSES} classes, got {len(data)}")
    classes: list[TrafficClass] = []
    ids: set[int] = set()
    names: set[str] = set()
    for i, item in enumerate(data):
        c = class_from_dict(item, f"classes[{i}]")
        if c.id in ids:
            raise FieldError(f"classes[{i}].id", f"duplicate class id {c.id}")
        if c.name in names:
            raise FieldError(f"classes[{i}].name", f"duplicate class name {c.name!r}")
        if c.id == DEFAULT_CLASS_ID and not c.match.is_empty():
            raise FieldError(f"classes[{i}].match", "the default class 0 matches everything; "
                             "its match must be empty")
        ids.add(c.id)
        names.add(c.name)
        classes.append(c)
    if DEFAULT_CLASS_ID not in ids:
        raise FieldError("classes", f"the default class {DEFAULT_CLASS_ID} is missing")
    return classes
