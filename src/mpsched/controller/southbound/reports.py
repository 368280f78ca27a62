"""From decoded digests to typed reports (pure).

`P4RuntimeClient.decode_digest_list` gives each digest message as a dict of
its struct members by name (names from the P4Info). The data fields of
`PathReport` and `RttReport` are named exactly like the members of the P4
structs `path_report_t` and `rtt_report_t`, so no name is copied by hand;
`check_members` / `check_rtt_members` verify at start-up that the program
still carries all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields

from mpsched.controller.model.reports import PathReport, RttReport

CONTEXT_FIELDS = ("switch", "received_at")
# path_report_t's member naming the edge the reported path comes from (the tag's src_edge,
# p4src/include/headers.p4): a report is about a path from a peer edge of the switch or about
# nothing the controller knows (reports_from).
SRC_EDGE_MEMBER = "src_edge"
# rtt_report_t's member naming the edge the measured traffic went to, once the program has
# it (the RTT monitor per (peer edge, path)); without it an RTT report is its one peer's.


def _data_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.name not in CONTEXT_FIELDS)


DIGEST_FIELDS = _data_fields(PathReport)
RTT_DIGEST_FIELDS = _data_fields(RttReport)


class DigestFormatError(ValueError):
    """The program's digest lacks a member a report needs."""


def _check(members: Iterable[str], needed: tuple[str, ...], what: str) -> None:
    missing = sorted(set(needed) - set(members))
    if missing:
        raise DigestFormatError(f"{what} digest lacks {', '.join(missing)}")


def _values(values: Mapping[str, int], needed: tuple[str, ...], what: str) -> dict[str, int]:
    try:
        return {name: int(values[name]) for name in needed}
    except KeyError as exc:
        raise DigestFormatError(f"{what} digest lacks {exc.args[0]}") from None


def check_members(members: Iterable[str]) -> None:
    _check(members, (*DIGEST_FIELDS, SRC_EDGE_MEMBER), "path report")


def reports_from(values: Mapping[str, int], edge: int) -> bool:
    """Is a decoded path report about a path from edge `edge`? (A path id names a path of
    one pair of edges only, docs/fabric.md.)"""
    return int(values.get(SRC_EDGE_MEMBER, -1)) == edge


def check_rtt_members(members: Iterable[str]) -> None:
    _check(members, RTT_DIGEST_FIELDS, "RTT report")


def path_report(values: Mapping[str, int], switch: str, received_at: float) -> PathReport:
    """A PathReport from one decoded digest message (extra members are ignored)."""
    data = _values(values, DIGEST_FIELDS, "path report")
    return PathReport(switch=switch, received_at=received_at, **data)


def rtt_report(values: Mapping[str, int], switch: str, received_at: float) -> RttReport:
    """An RttReport from one decoded rtt_report_t message (extra members are ignored)."""
    data = _values(values, RTT_DIGEST_FIELDS, "RTT report")
    return RttReport(switch=switch, received_at=received_at, **data)
