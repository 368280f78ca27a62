"""P4Info access by name: the single source of truth for P4 names and sizes.

Code refers to P4 entities by their P4Info name (fully qualified, e.g.
``MpIngress.routing.ipv4_route``, or the unique alias P4Info gives them).
Every lookup is checked against the P4Info, so a renamed table fails loudly at
start-up, not silently at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2


class P4InfoError(LookupError):
    """A name or field is not in the P4Info."""


def encode_uint(value: int, bitwidth: int) -> bytes:
    """Canonical P4Runtime bytestring of an unsigned value (no leading zeros)."""
    if value < 0 or value >= (1 << bitwidth):
        raise ValueError(f"value {value} does not fit in {bitwidth} bits")
    nbytes = max(1, (value.bit_length() + 7) // 8)
    return value.to_bytes(nbytes, "big")


def decode_uint(data: bytes) -> int:
    return int.from_bytes(data, "big")


def encode_mac(mac: str) -> bytes:
    parts = mac.split(":")
    if len(parts) != 6:
        raise ValueError(f"bad MAC address {mac!r}")
    return encode_uint(int("".join(parts), 16), 48)


def encode_ipv4(addr: str) -> bytes:
    parts = [int(p) for p in addr.split(".")]
    if len(parts) != 4 or any(not 0 <= p <= 255 for p in parts):
        raise ValueError(f"bad IPv4 address {addr!r}")
    return encode_uint(int.from_bytes(bytes(parts), "big"), 32)


@dataclass(frozen=True)
class ActionParam:
    name: str
    id: int
    bitwidth: int


@dataclass(frozen=True)
class MatchField:
    name: str
    id: int
    bitwidth: int
    match_type: int


class P4Info:
    """Name-based access to one P4Info message."""

    def __init__(self, message: p4info_pb2.P4Info) -> None:
        self.message = message
        self._by_kind: dict[str, dict[str, Any]] = {}
        for kind in (
            "tables", "actions", "counters", "direct_counters", "meters", "registers", "digests",
            "controller_packet_metadata",
        ):
            index: dict[str, Any] = {}
            for entity in getattr(message, kind):
                index[entity.preamble.name] = entity
                if entity.preamble.alias:
                    index.setdefault(entity.preamble.alias, entity)
            self._by_kind[kind] = index

    @classmethod
    def from_file(cls, path: str | Path) -> P4Info:
        message = p4info_pb2.P4Info()
        text_format.Parse(Path(path).read_text(), message)
        return cls(message)

    def _get(self, kind: str, name: str) -> Any:  # a p4info_pb2 message (untyped module)
        try:
            return self._by_kind[kind][name]
        except KeyError:
            raise P4InfoError(f"no {kind[:-1]} named {name!r} in the P4Info") from None

    def table(self, name: str) -> p4info_pb2.Table:
        return self._get("tables", name)

    def action(self, name: str) -> p4info_pb2.Action:
        return self._get("actions", name)

    def counter(self, name: str) -> p4info_pb2.Counter:
        return self._get("counters", name)

    def register(self, name: str) -> p4info_pb2.Register:
        return self._get("registers", name)

    def digest(self, name: str) -> p4info_pb2.Digest:
        return self._get("digests", name)

    def controller_header(self, name: str) -> p4info_pb2.ControllerPacketMetadata:
        return self._get("controller_packet_metadata", name)

    def packet_metadata(self, name: str) -> list[MatchField]:
        """Fields of a controller header ("packet_out", "packet_in"): name, id, bitwidth."""
        header = self._get("controller_packet_metadata", name)
        return [MatchField(m.name, m.id, m.bitwidth, 0) for m in header.metadata]

    def digest_id(self, name: str) -> int:
        return self.digest(name).preamble.id

    def digest_members(self, name: str) -> list[tuple[str, int]]:
        """(name, bitwidth) of each member of a struct digest, in declaration order."""
        spec = self.digest(name).type_spec
        if not spec.HasField("struct"):
            raise P4InfoError(f"digest {name!r} is not a struct")
        struct = spec.struct.name
        if struct not in self.message.type_info.structs:
            raise P4InfoError(f"no struct {struct!r} in the P4Info type_info")
        members = []
        for member in self.message.type_info.structs[struct].members:
            if not member.type_spec.HasField("bitstring"):
                raise P4InfoError(f"member {member.name!r} of {struct!r} is not a bit string")
            bits = member.type_spec.bitstring
            width = getattr(bits, bits.WhichOneof("type_spec")).bitwidth
            members.append((member.name, width))
        return members

    def serializable_enum(self, name: str) -> dict[str, int]:
        """Member name -> value of a serializable enum (``enum bit<W> name {...}``)."""
        enums = self.message.type_info.serializable_enums
        if name not in enums:
            raise P4InfoError(f"no serializable enum {name!r} in the P4Info type_info")
        return {m.name: decode_uint(m.value) for m in enums[name].members}

    def table_id(self, name: str) -> int:
        return self.table(name).preamble.id

    def action_id(self, name: str) -> int:
        return self.action(name).preamble.id

    def counter_id(self, name: str) -> int:
        return self.counter(name).preamble.id

    def table_size(self, name: str) -> int:
        return int(self.table(name).size)

    def counter_size(self, name: str) -> int:
        return int(self.counter(name).size)

    def match_fields(self, table: str) -> list[MatchField]:
        return [
            MatchField(f.name, f.id, f.bitwidth, f.match_type)
            for f in self.table(table).match_fields
        ]

    def match_field(self, table: str, name: str) -> MatchField:
        for field in self.match_fields(table):
            if field.name == name:
                return field
        raise P4InfoError(f"table {table!r} has no match field {name!r}")

    def action_params(self, action: str) -> list[ActionParam]:
        return [ActionParam(p.name, p.id, p.bitwidth) for p in self.action(action).params]

    def action_param(self, action: str, name: str) -> ActionParam:
        for param in self.action_params(action):
            if param.name == name:
                return param
        raise P4InfoError(f"action {action!r} has no parameter {name!r}")

    def table_actions(self, table: str) -> list[str]:
        ids = {ref.id for ref in self.table(table).action_refs}
        return [a.preamble.name for a in self.message.actions if a.preamble.id in ids]

    def name_of_action(self, action_id: int) -> str:
        for action in self.message.actions:
            if action.preamble.id == action_id:
                return action.preamble.name
        raise P4InfoError(f"no action with id {action_id}")


def annotated_codes(p4info: P4Info, counter: str, annotation: str) -> dict[str, int]:
    """Name (lower case) -> code of an indexed counter's structured annotation
    @<annotation>[NAME = code, ...] (e.g. the drop reasons, indices of the counter): every
    code indexes the counter (1..size - 1: index 0 is never counted), none twice."""
    entity = p4info.counter(counter)
    lists = [a.kv_pair_list for a in entity.preamble.structured_annotations
             if a.name == annotation]
    if len(lists) != 1 or not lists[0].kv_pairs:
        raise P4InfoError(f"counter {counter} lacks its @{annotation}[NAME = code, ...] "
                          "annotation")
    codes = {kv.key.lower(): kv.value.int64_value for kv in lists[0].kv_pairs}
    size = entity.size
    bad = sorted(name for name, code in codes.items() if not 0 < code < size)
    if bad or len(set(codes.values())) != len(codes):
        raise P4InfoError(f"{counter}: reason codes must be distinct and in "
                          f"1..{size - 1} (bad: {bad or 'duplicates'})")
    return codes
