"""Decoding the data plane's digests into typed reports (pure; names from the P4Info).

A P4Runtime `DigestList` carries one `P4Data` per digest message; for a struct
digest each is a `P4StructLike` whose members are bitstrings in the order of
the struct's members in the P4Info (`type_info.structs`). The member names are
taken from there, never copied by hand, and mapped onto `PathReport` fields.
"""

from __future__ import annotations

from collections.abc import Sequence

from p4.v1 import p4data_pb2

from .telemetry import PathReport

# PathReport fields that come from the digest, by digest member name (names are the P4
# struct's; the two time stamps get units in Python).
REPORT_FIELDS = {
    "path_id": "path_id",
    "seq": "seq",
    "tx_ts": "tx_ts_us",
    "rx_ts": "rx_ts_us",
    "rx_packets": "rx_packets",
    "rx_bytes": "rx_bytes",
    "lost": "lost",
    "reordered": "reordered",
}


class DigestFormatError(ValueError):
    """A digest whose shape does not match the P4Info's struct."""


def struct_values(data: p4data_pb2.P4Data, members: Sequence[str]) -> dict[str, int]:
    """The members of one struct-like digest message as unsigned integers."""
    if data.WhichOneof("data") != "struct":
        raise DigestFormatError(f"expected a struct, got {data.WhichOneof('data')}")
    items = data.struct.members
    if len(items) != len(members):
        raise DigestFormatError(f"{len(items)} members, the P4Info has {len(members)}")
    out = {}
    for name, item in zip(members, items, strict=True):
        if item.WhichOneof("data") != "bitstring":
            raise DigestFormatError(f"member {name} is not a bitstring")
        out[name] = int.from_bytes(item.bitstring, "big")
    return out


def check_members(members: Sequence[str]) -> None:
    """The digest must carry every field a PathReport needs (checked at start-up)."""
    missing = sorted(set(REPORT_FIELDS) - set(members))
    if missing:
        raise DigestFormatError(f"path report digest lacks {', '.join(missing)}")


def path_report(
    data: p4data_pb2.P4Data, members: Sequence[str], switch: str, received_at: float
) -> PathReport:
    values = struct_values(data, members)
    kwargs = {REPORT_FIELDS[name]: values[name] for name in REPORT_FIELDS}
    return PathReport(switch=switch, received_at=received_at, **kwargs)
