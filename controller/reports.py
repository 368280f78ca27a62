"""From decoded digests to typed reports (pure).

`P4RuntimeClient.decode_digest_list` gives each digest message as a dict of
its struct members by name (names from the P4Info). `PathReport`'s data fields
are named exactly like the members of the P4 struct `path_report_t`, so no
name is copied by hand; `check_members` verifies at start-up that the program
still carries all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import fields

from .telemetry import PathReport

CONTEXT_FIELDS = ("switch", "received_at")
DIGEST_FIELDS = tuple(f.name for f in fields(PathReport) if f.name not in CONTEXT_FIELDS)


class DigestFormatError(ValueError):
    """The program's digest lacks a member a PathReport needs."""


def check_members(members: Iterable[str]) -> None:
    missing = sorted(set(DIGEST_FIELDS) - set(members))
    if missing:
        raise DigestFormatError(f"path report digest lacks {', '.join(missing)}")


def path_report(values: Mapping[str, int], switch: str, received_at: float) -> PathReport:
    """A PathReport from one decoded digest message (extra members are ignored)."""
    try:
        data = {name: int(values[name]) for name in DIGEST_FIELDS}
    except KeyError as exc:
        raise DigestFormatError(f"path report digest lacks {exc.args[0]}") from None
    return PathReport(switch=switch, received_at=received_at, **data)
