"""Traffic classes: which packets a class matches and the scheduling policy applied to them.

Pure data and validation, no I/O. `Match`, `ClassPolicy` and `TrafficClass` are frozen
pydantic dataclasses: built from JSON (``*_from_dict``, the REST bodies of
src/mpsched/controller/northbound/bodies.py, the state file) they refuse unknown keys, wrong types
(a
bool is not an int) and out-of-range values with a `FieldError` naming the field by its
dotted/indexed path, e.g. ``classes[2].match.src_port``, with the messages of
`class_checks`; their JSON schema (served in the REST description) comes from the same
declarations.

Class 0 is the default class: it matches everything, has priority 0 (below every
other class) and must be present exactly once in a class list, with an empty match.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass

from mpsched.controller.model.errors import FieldError, adapter, checked, join_field
from mpsched.controller.policies.base import QosTarget
from mpsched.controller.scheduling.class_checks import (
    PROTOCOLS,
    FrozenParams,
    check_bool,
    check_int,
    check_name,
    check_params,
    check_port_range,
    check_prefix,
    check_proto,
    check_target,
    thaw,
)
from mpsched.validation import KeyCheck, fail

__all__ = ["PROTOCOLS", "FrozenParams", "thaw"]

# class ids 0..MAX_CLASSES-1, as p4src/include/defines.p4's MAX_CLASSES: the controller refuses
# a program that holds fewer per edge (Pipeline.max_classes, from the P4Info; core.py)
MAX_CLASSES = 64
DEFAULT_CLASS_ID = 0
MAX_PRIORITY = 1000
MIN_FLOWLET_GAP_US = 0  # 0: automatic (src/mpsched/controller/scheduling/placement.py auto_gap_us)
MAX_FLOWLET_GAP_US = 10_000_000
DEFAULT_FLOWLET_GAP_US = 0
POLICY_KEYS = ("name", "params", "lm3", "flowlet_gap_us")
MODEL = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

# qos_target fields: (low, high) of each; every field optional, null = no target on it
_TARGET_RANGES = {
    "min_goodput_frac": (0.0, 1.0),
    "max_delay_ms": (0.0, 1e6),
    "max_loss": (0.0, 1.0),
    "max_reorder": (0.0, 1.0),
}


def checks(
    check: Callable[[Any, str], Any], nullable: bool = False, plain: bool = False
) -> BeforeValidator | PlainValidator:
    """A pydantic validator running one of `class_checks` (null passes when `nullable`); a
    FieldError naming a field below this one is located there. `plain`: its result is the
    value (no validation by the annotated type after it)."""

    def run(value: Any) -> Any:
        if nullable and value is None:
            return None
        try:
            return check(value, "")
        except FieldError as error:
            if error.field:
                fail(error.field, error.message, value)
            raise ValueError(error.message) from None

    return PlainValidator(run) if plain else BeforeValidator(run)


def doc(text: str) -> Any:
    """A field's description in the JSON schema (the REST description)."""
    return Field(description=text)


_PORT_DOC = "a port, or an inclusive range [lo, hi] (answers always give the range)"
_POLICY_NAME_DOC = (
    "the policy (GET /params lists them under `policies`; an unknown name is refused, field "
    "`policy.name`). In a class list a class without a policy gets ecmp; the default class "
    "starts with the controller's `--policy`"
)


def _ints(lo: int, hi: int) -> Callable[[Any, str], int]:
    return lambda value, name: check_int(value, name, lo, hi)


_PORTS = {"nullable": True, "oneOf": [
    {"type": "integer", "minimum": 0, "maximum": 65535},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 65535},
     "minItems": 2, "maxItems": 2, "description": "inclusive range [lo, hi]"},
]}
_PREFIX = {"type": "string", "nullable": True, "example": "10.0.1.0/24",
           "description": "IPv4 prefix a.b.c.d/len or address a.b.c.d"}
Prefix = Annotated[str | None, checks(check_prefix, True), WithJsonSchema(_PREFIX)]
Ports = Annotated[tuple[int, int] | None, checks(check_port_range, True), WithJsonSchema(_PORTS)]
Dscp = Annotated[int | None, checks(_ints(0, 63), True), WithJsonSchema(
    {"type": "integer", "minimum": 0, "maximum": 63, "nullable": True})]
Proto = Annotated[int | None, checks(check_proto, True), WithJsonSchema(
    {"nullable": True, "oneOf": [{"type": "integer", "minimum": 0, "maximum": 255},
                                 {"type": "string", "enum": sorted(PROTOCOLS)}]})]


@dataclass(frozen=True, config=MODEL)
class Match(KeyCheck):
    """Which packets a class takes. Every field is optional; absent or null = any. Prefixes
    are IPv4 `a.b.c.d/len` with the host bits zero (`a.b.c.d` = /32). Answers list only
    the fields that are set."""

    dscp: Dscp = None
    src: Annotated[Prefix, doc("source prefix, answered as a.b.c.d/len")] = None
    dst: Annotated[Prefix, doc("destination prefix, answered as a.b.c.d/len")] = None
    proto: Annotated[Proto, doc("IP protocol number, or tcp/udp/icmp (answered as the number)")] = (
        None
    )
    src_port: Annotated[Ports, doc(_PORT_DOC)] = None  # inclusive range
    dst_port: Annotated[Ports, doc(_PORT_DOC)] = None

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


Name = Annotated[str, checks(check_name),
                 WithJsonSchema({"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,32}$"})]
Params = Annotated[
    Mapping[str, Any],
    checks(lambda value, name: FrozenParams(check_params(value, name)), plain=True),
    PlainSerializer(thaw),
    WithJsonSchema({"type": "object", "additionalProperties": True}),
    doc("this class's overrides of the policy's parameters, `{<param>: value}`; those left out "
        "take the global defaults (`GET /params`, `policies.<name>`)"),
]
FlowletGap = Annotated[
    int, checks(_ints(MIN_FLOWLET_GAP_US, MAX_FLOWLET_GAP_US)),
    doc("a flow's idle gap (µs) after which its next packet starts a new flowlet (modes "
        "flowlet, vq and ca); 0 = automatic: the spread of the alive weighted paths' one-way "
        "delays (else half the spread of their srtt) + 500 µs, rounded up to 1000 µs"),
    WithJsonSchema({"type": "integer", "minimum": MIN_FLOWLET_GAP_US,
                    "maximum": MAX_FLOWLET_GAP_US}),
]
Bool = Annotated[bool, checks(check_bool), WithJsonSchema({"type": "boolean"})]


@dataclass(frozen=True, config=MODEL)
class ClassPolicy(KeyCheck):
    """A class's scheduling policy. `name` and `params` are checked against the policies by
    the scheduler (unknown name or parameter, type, range); here they only need the right
    types."""

    name: Annotated[Name, doc(_POLICY_NAME_DOC)] = "ecmp"
    params: Params = dataclasses.field(default_factory=FrozenParams)
    lm3: Annotated[Bool, doc("LM3 path activation on top of the policy (`params.lm3`)")] = False
    flowlet_gap_us: FlowletGap = DEFAULT_FLOWLET_GAP_US

    def updated(self, changes: Mapping[str, Any]) -> ClassPolicy:
        """This policy with the keys present in `changes` (as from `policy_changes`) replaced."""
        return dataclasses.replace(self, **{k: changes[k] for k in POLICY_KEYS if k in changes})


_TARGET_SCHEMA = {
    "type": "object", "nullable": True, "additionalProperties": False,
    "description": "what the `adaptive` policy scores each choice by (per dwell over the "
                   "class's paths); every field optional, null = no target on it; null or {} = "
                   "no target (the policy's default `target_*` apply)",
    "properties": {key: {"type": "number", "minimum": lo, "maximum": hi, "nullable": True}
                   for key, (lo, hi) in _TARGET_RANGES.items()},
}
Target = Annotated[QosTarget | None, checks(lambda value, name: qos_target_from_dict(value, name),
                                            True), WithJsonSchema(_TARGET_SCHEMA)]
ClassId = Annotated[int, checks(_ints(0, MAX_CLASSES - 1)),
                    WithJsonSchema({"type": "integer", "minimum": 0, "maximum": MAX_CLASSES - 1})]
Priority = Annotated[int, WithJsonSchema({
    "type": "integer", "minimum": 0, "maximum": MAX_PRIORITY,
    "description": "higher wins among overlapping matches; 0 only for the default class 0"})]


@dataclass(frozen=True, config=MODEL)
class TrafficClass(KeyCheck):
    """A traffic class; higher `priority` wins among overlapping matches. The default
    class (id 0) always has priority 0."""

    id: Annotated[ClassId, doc("0 is the default class")]
    name: Name
    priority: Priority = 1
    match: Match = dataclasses.field(default_factory=Match)
    policy: ClassPolicy = dataclasses.field(default_factory=ClassPolicy)
    qos_target: Target = None  # what the `adaptive` policy scores its choices by

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, value: Any, info: ValidationInfo) -> int:
        """0 for the default class (checked below), 1..MAX_PRIORITY for the others."""
        low = 0 if _is_default(info.data.get("id")) else 1
        try:
            return check_int(value, "", low, MAX_PRIORITY)
        except FieldError as error:
            raise ValueError(error.message) from None

    @model_validator(mode="before")
    @classmethod
    def _default_class_priority(cls, data: Any) -> Any:
        """From JSON, the default class's priority may only be given as 0."""
        if isinstance(data, dict) and _is_default(data.get("id")) and "priority" in data:
            given = data["priority"]
            if isinstance(given, bool) or given != 0:
                fail("priority", "the default class 0 has priority 0", given)
        return data

    def __post_init__(self) -> None:
        if self.id == DEFAULT_CLASS_ID:
            if self.priority not in (0, 1):  # 1: the default of a class built in code
                fail("priority", "the default class 0 has priority 0", self.priority)
            object.__setattr__(self, "priority", 0)


def _is_default(value: Any) -> bool:
    return not isinstance(value, bool) and value == DEFAULT_CLASS_ID


# -- dict <-> dataclass --------------------------------------------------------


class PolicyChanges(KeyCheck, BaseModel):
    """`PUT /classes/{id}/policy`: any subset of the policy's keys; the keys given replace the
    class's, the others keep their value. Errors name the field as `policy.<key>`."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    name: Name = "ecmp"
    params: Params = Field(default_factory=FrozenParams)
    lm3: Bool = False
    flowlet_gap_us: FlowletGap = DEFAULT_FLOWLET_GAP_US


def policy_changes(data: Any, where: str = "policy") -> dict[str, Any]:
    """A partial policy (any subset of its keys), checked for types and ranges; params as a
    plain dict. For ``PUT /classes/{id}/policy``: missing keys keep their current value."""
    changes = checked(PolicyChanges, data, where)
    out = {key: getattr(changes, key) for key in POLICY_KEYS if key in changes.model_fields_set}
    if "params" in out:
        out["params"] = thaw(out["params"])
    return out


def policy_from_dict(data: Any, where: str = "") -> ClassPolicy:
    """A complete policy; missing keys take the defaults of `ClassPolicy`."""
    return checked(ClassPolicy, data, where)


def policy_to_dict(policy: ClassPolicy) -> dict[str, Any]:
    out: dict[str, Any] = dump(policy)
    return out


def match_from_dict(data: Any, where: str = "") -> Match:
    """A match; absent or null fields are wildcards."""
    return checked(Match, data, where)


def match_to_dict(match: Match) -> dict[str, Any]:
    """Only the fields that are set; port ranges as ``[lo, hi]``."""
    return {k: v for k, v in dump(match).items() if v is not None}


def qos_target_from_dict(data: Any, where: str = "qos_target") -> QosTarget | None:
    """A class's QoS target (None for null or an empty object); FieldError names the field,
    e.g. ``classes[1].qos_target.max_loss``."""
    if data is None or isinstance(data, QosTarget):
        return None if data is None or data.is_empty() else data
    if not isinstance(data, dict):
        raise FieldError(where, "must be a JSON object")
    for key in data:
        if key not in _TARGET_RANGES:
            raise FieldError(join_field(where, str(key)),
                             f"unknown field; expected one of {list(_TARGET_RANGES)}")
    values = {
        key: None if data.get(key) is None
        else check_target(data[key], join_field(where, key), lo, hi)
        for key, (lo, hi) in _TARGET_RANGES.items()
    }
    target = QosTarget(**values)
    return None if target.is_empty() else target


def qos_target_to_dict(target: QosTarget | None) -> dict[str, float | None] | None:
    if target is None:
        return None
    return {key: getattr(target, key) for key in _TARGET_RANGES}


def class_from_dict(data: Any, where: str = "") -> TrafficClass:
    return checked(TrafficClass, data, where)


def class_to_dict(c: TrafficClass) -> dict[str, Any]:
    out: dict[str, Any] = dump(c)
    out["match"] = match_to_dict(c.match)
    out["qos_target"] = qos_target_to_dict(c.qos_target)
    return out


def classes_from_list(data: Any) -> list[TrafficClass]:
    """A complete class table (in the given order): unique ids and names, the default
    class exactly once with an empty match, at most `MAX_CLASSES` classes."""
    if not isinstance(data, list):
        raise FieldError("classes", "must be a JSON array of classes")
    if len(data) > MAX_CLASSES:
        raise FieldError("classes", f"at most {MAX_CLASSES} classes, got {len(data)}")
    classes = [class_from_dict(item, f"classes[{i}]") for i, item in enumerate(data)]
    check_table(classes)
    return classes


def check_table(classes: list[TrafficClass]) -> None:
    """Unique ids and names, the default class exactly once, with an empty match."""
    ids: set[int] = set()
    names: set[str] = set()
    for i, c in enumerate(classes):
        if c.id in ids:
            raise FieldError(f"classes[{i}].id", f"duplicate class id {c.id}")
        if c.name in names:
            raise FieldError(f"classes[{i}].name", f"duplicate class name {c.name!r}")
        if c.id == DEFAULT_CLASS_ID and not c.match.is_empty():
            raise FieldError(f"classes[{i}].match", "the default class 0 matches everything; "
                             "its match must be empty")
        ids.add(c.id)
        names.add(c.name)
    if DEFAULT_CLASS_ID not in ids:
        raise FieldError("classes", f"the default class {DEFAULT_CLASS_ID} is missing")


def dump(value: Any) -> Any:
    """A class, match or policy as plain JSON types (serialised from its declaration)."""
    return adapter(type(value)).dump_python(value, mode="json")
