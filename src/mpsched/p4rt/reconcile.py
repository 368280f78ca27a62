"""What a switch holds against what the controller wants: the difference, as P4Runtime updates.

A controller that (re)connects to a switch already running its program does not push the
program again (on BMv2 that wipes every table and register, interrupting traffic and resetting
flowlet, sequence and liveness state): it reads the table entries back and writes only the
difference (ONOS and Stratum reconcile the same way). Pure functions on P4Runtime messages.

Entries are compared in canonical form (P4Runtime spec §8.4: byte strings without leading
zero bytes, one byte for zero), because a server may answer a read with a shorter encoding
than the one written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from p4.v1 import p4runtime_pb2


def config_cookie(p4info: bytes, device_config: bytes) -> int:
    """A 64-bit cookie naming one program: its P4Info and its device config (BMv2 JSON)."""
    digest = hashlib.sha256(len(p4info).to_bytes(8, "big") + p4info + device_config).digest()
    return int.from_bytes(digest[:8], "big")


def canonical_bytes(value: bytes) -> bytes:
    """Without leading zero bytes; zero is one zero byte."""
    return value.lstrip(b"\x00") or b"\x00"


def canonical(entry: p4runtime_pb2.TableEntry) -> p4runtime_pb2.TableEntry:
    """A copy with canonical byte strings in the match and the action parameters, the match
    fields ordered by id, and no counter or meter data."""
    out = p4runtime_pb2.TableEntry()
    out.table_id = entry.table_id
    out.priority = entry.priority
    out.is_default_action = entry.is_default_action
    for m in sorted(entry.match, key=lambda m: m.field_id):
        fm = out.match.add()
        fm.CopyFrom(m)
        kind = m.WhichOneof("field_match_type")
        if kind == "exact":
            fm.exact.value = canonical_bytes(m.exact.value)
        elif kind == "lpm":
            fm.lpm.value = canonical_bytes(m.lpm.value)
        elif kind == "ternary":
            fm.ternary.value = canonical_bytes(m.ternary.value)
            fm.ternary.mask = canonical_bytes(m.ternary.mask)
        elif kind == "range":
            fm.range.low = canonical_bytes(m.range.low)
            fm.range.high = canonical_bytes(m.range.high)
    if entry.HasField("action"):
        out.action.CopyFrom(entry.action)
        if entry.action.HasField("action"):
            action = out.action.action
            params = sorted(entry.action.action.params, key=lambda p: p.param_id)
            del action.params[:]
            for p in params:
                action.params.add(param_id=p.param_id, value=canonical_bytes(p.value))
    return out


def entry_key(entry: p4runtime_pb2.TableEntry) -> bytes:
    """What identifies an entry in its table: the table, the priority and the match."""
    key = p4runtime_pb2.TableEntry()
    c = canonical(entry)
    key.table_id, key.priority, key.is_default_action = c.table_id, c.priority, c.is_default_action
    key.match.extend(c.match)
    return key.SerializeToString(deterministic=True)


def action_of(entry: p4runtime_pb2.TableEntry) -> bytes:
    return canonical(entry).action.SerializeToString(deterministic=True)


@dataclass
class Diff:
    """The updates that turn what a switch holds into what is wanted."""

    insert: list[p4runtime_pb2.TableEntry] = field(default_factory=list)
    modify: list[p4runtime_pb2.TableEntry] = field(default_factory=list)
    delete: list[p4runtime_pb2.TableEntry] = field(default_factory=list)
    unchanged: int = 0

    def updates(self) -> list[tuple[int, p4runtime_pb2.Entity]]:
        """INSERTs, then MODIFYs, then DELETEs: traffic always finds an entry for what is
        wanted, and extra entries go last."""
        out = []
        for kind, entries in (
            (p4runtime_pb2.Update.INSERT, self.insert),
            (p4runtime_pb2.Update.MODIFY, self.modify),
            (p4runtime_pb2.Update.DELETE, self.delete),
        ):
            for entry in entries:
                entity = p4runtime_pb2.Entity()
                entity.table_entry.CopyFrom(entry)
                if kind == p4runtime_pb2.Update.DELETE:
                    entity.table_entry.ClearField("action")
                out.append((kind, entity))
        return out

    def summary(self) -> str:
        return (
            f"{len(self.insert)} inserted, {len(self.modify)} modified, "
            f"{len(self.delete)} deleted, {self.unchanged} kept"
        )


def diff(
    desired: Iterable[p4runtime_pb2.TableEntry], actual: Iterable[p4runtime_pb2.TableEntry]
) -> Diff:
    """The difference between the entries a switch holds (`actual`, read back from the
    tables the controller owns) and the `desired` ones. Two desired entries with the same key
    raise ValueError (the controller would fight itself)."""
    want: dict[bytes, p4runtime_pb2.TableEntry] = {}
    for entry in desired:
        key = entry_key(entry)
        if key in want:
            raise ValueError(f"two desired entries with one key in table {entry.table_id}")
        want[key] = entry
    have = {entry_key(e): e for e in actual if not e.is_default_action}
    out = Diff()
    for key, entry in want.items():
        if key not in have:
            out.insert.append(entry)
        elif action_of(have[key]) != action_of(entry):
            out.modify.append(entry)
        else:
            out.unchanged += 1
    out.delete = [entry for key, entry in have.items() if key not in want]
    return out
