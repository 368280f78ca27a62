"""P4Runtime messages by P4Info names: table entries, PacketOuts, digests, errors.

Pure translation between the names and values the project uses (`TableEntry`: a table, its
match fields, an action and its parameters by P4Info name; values as ints, MAC/IPv4 strings
or raw bytes) and the P4Runtime protobuf messages; no RPC here (client.py sends them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from mpsched.p4rt.p4info import P4Info, decode_uint, encode_ipv4, encode_mac, encode_uint

Value = int | str | bytes
# A match field's value: exact; (value, prefix_len) lpm, (value, mask) ternary, (low, high) range.
MatchValue = Value | tuple[Value, Value]


_UPDATE_DETAIL = re.compile(r"update (\d+): ([A-Z_]+)\b")


class P4RuntimeError(RuntimeError):
    """A P4Runtime RPC failed; `details` lists the per-update errors of a Write."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        self.details = details or []
        text = message if not self.details else f"{message}: {'; '.join(self.details)}"
        super().__init__(text)

    @property
    def not_found(self) -> bool:
        """An update failed because the entry does not exist (MODIFY, DELETE)."""
        return any("NOT_FOUND" in d for d in self.details)

    def failed_updates(self) -> dict[int, str] | None:
        """The failed updates of a Write by their index in the request: index -> canonical
        code name (as `status_details` writes them); None when a detail names no update, so
        that the caller cannot tell which failed."""
        out: dict[int, str] = {}
        for detail in self.details:
            m = _UPDATE_DETAIL.match(detail)
            if m is None:
                return None
            out[int(m.group(1))] = m.group(2)
        return out or None


def encode_value(value: Value, bitwidth: int) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        if value.count(":") == 5:
            return encode_mac(value)
        if value.count(".") == 3:
            return encode_ipv4(value)
        raise ValueError(f"cannot encode {value!r}")
    return encode_uint(int(value), bitwidth)


@dataclass
class TableEntry:
    """A table entry by P4Info names.

    match: field name -> value (exact), (value, prefix_len) (lpm),
    (value, mask) (ternary) or (low, high) (range); omit a field for a
    wildcard. is_default selects the table's default entry (match empty).
    """

    table: str
    match: Mapping[str, MatchValue] = field(default_factory=dict)
    action: str | None = None
    params: Mapping[str, Value] = field(default_factory=dict)
    priority: int = 0
    is_default: bool = False


@dataclass(frozen=True)
class CloneSession:
    """A clone session of the switch's packet replication engine (P4Runtime
    CloneSessionEntry): what is cloned to `session_id` leaves on `port` (one replica)."""

    session_id: int
    port: int


def clone_session_entity(session: CloneSession) -> p4runtime_pb2.Entity:
    """The Write entity of `session` (replica instance 1)."""
    entity = p4runtime_pb2.Entity()
    entry = entity.packet_replication_engine_entry.clone_session_entry
    entry.session_id = session.session_id
    entry.replicas.add(egress_port=session.port, instance=1)
    return entity


class CounterValue(NamedTuple):
    """A counter cell's packets and bytes (a tuple: a fabric's poll builds thousands)."""

    packets: int
    bytes: int


def status_details(error: grpc.RpcError) -> list[str]:
    details: list[str] = []
    for item in error.trailing_metadata() or ():
        if item.key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status()
        status.ParseFromString(item.value)
        for i, detail in enumerate(status.details):
            p4_error = p4runtime_pb2.Error()
            if detail.Unpack(p4_error) and p4_error.canonical_code != code_pb2.OK:
                name = code_pb2.Code.Name(p4_error.canonical_code)
                details.append(f"update {i}: {name} {p4_error.message}")
    return details


def set_field_match(
    fm: p4runtime_pb2.FieldMatch, kind: str, value: MatchValue, bitwidth: int, where: str
) -> None:
    """Fill the FieldMatch `fm` of match kind `kind` (a P4Info MatchType name) from `value`."""
    if kind == "EXACT":
        if isinstance(value, tuple):
            raise ValueError(f"EXACT field {where} takes one value, got {value!r}")
        fm.exact.value = encode_value(value, bitwidth)
        return
    if kind not in ("LPM", "TERNARY", "RANGE"):
        raise ValueError(f"match kind {kind} of {where} not supported")
    if not isinstance(value, tuple):
        raise ValueError(f"{kind} field {where} takes a pair, got {value!r}")
    first, second = value
    if kind == "LPM":  # (value, prefix_len)
        fm.lpm.value = encode_value(first, bitwidth)
        fm.lpm.prefix_len = second
    elif kind == "TERNARY":  # (value, mask)
        fm.ternary.value = encode_value(first, bitwidth)
        fm.ternary.mask = encode_value(second, bitwidth)
    else:  # RANGE: (low, high)
        fm.range.low = encode_value(first, bitwidth)
        fm.range.high = encode_value(second, bitwidth)



def table_entry_message(info: P4Info, entry: TableEntry) -> p4runtime_pb2.TableEntry:
    """The P4Runtime message of `entry` (names resolved through `info`)."""
    message = p4runtime_pb2.TableEntry()
    message.table_id = info.table_id(entry.table)
    if entry.priority:
        message.priority = entry.priority
    if entry.is_default:
        message.is_default_action = True
    for name, value in entry.match.items():
        mf = info.match_field(entry.table, name)
        fm = message.match.add()
        fm.field_id = mf.id
        kind = p4info_pb2.MatchField.MatchType.Name(mf.match_type)
        set_field_match(fm, kind, value, mf.bitwidth, f"{entry.table}.{name}")
    if entry.action is not None:
        action = message.action.action
        action.action_id = info.action_id(entry.action)
        given = set(entry.params)
        for param in info.action_params(entry.action):
            if param.name not in entry.params:
                raise ValueError(f"action {entry.action} needs parameter {param.name!r}")
            given.discard(param.name)
            p = action.params.add()
            p.param_id = param.id
            p.value = encode_value(entry.params[param.name], param.bitwidth)
        if given:
            raise ValueError(f"action {entry.action} has no parameter(s) {sorted(given)}")
    return message

# -- writes ----------------------------------------------------------


def packet_out_message(
    info: P4Info, payload: bytes, metadata: dict[str, int]
) -> p4runtime_pb2.StreamMessageRequest:
    """A PacketOut stream message; metadata by the names of the P4Info's
    packet_out controller header (every field required)."""
    request = p4runtime_pb2.StreamMessageRequest()
    request.packet.payload = payload
    given = set(metadata)
    for field_ in info.packet_metadata("packet_out"):
        if field_.name not in metadata:
            raise ValueError(f"packet_out needs metadata {field_.name!r}")
        given.discard(field_.name)
        m = request.packet.metadata.add()
        m.metadata_id = field_.id
        m.value = encode_value(metadata[field_.name], field_.bitwidth)
    if given:
        raise ValueError(f"packet_out has no metadata {sorted(given)}")
    return request


def decode_digest(
    info: P4Info, digest: str, digest_list: p4runtime_pb2.DigestList
) -> list[dict[str, int]]:
    """The struct members of each entry of a DigestList, by name (from the P4Info)."""
    names = [name for name, _ in info.digest_members(digest)]
    if digest_list.digest_id != info.digest_id(digest):
        raise P4RuntimeError(f"digest id {digest_list.digest_id} is not {digest}")
    out = []
    for data in digest_list.data:
        members = data.struct.members
        if len(members) != len(names):
            raise P4RuntimeError(f"{digest}: {len(members)} members, expected {len(names)}")
        out.append(
            {name: decode_uint(m.bitstring) for name, m in zip(names, members, strict=True)}
        )
    return out

# -- reads -----------------------------------------------------------


def param_value(entry: p4runtime_pb2.TableEntry, param_id: int) -> int:
    """The value of one action parameter of a read-back table entry."""
    for param in entry.action.action.params:
        if param.param_id == param_id:
            return decode_uint(param.value)
    raise KeyError(param_id)
