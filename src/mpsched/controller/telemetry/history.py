"""A path's recorded estimates, packed (GET /paths/{id}/telemetry, GET /telemetry, the
dashboard's series).

The controller records every path's estimates once per telemetry period (`PathEstimator.record`)
and keeps the last few per path. As dicts of Python numbers a snapshot takes about 740 bytes;
a fabric of 64 leaves and 4 spines has 16 128 paths, so 120 snapshots each would hold 1.4 GB.
Here a snapshot is the bytes of its `FIELDS` as doubles (153 bytes, no Python object per
number and nothing the cyclic garbage collector tracks; None as NaN, a flag as 0/1, a count as
its float, exact below 2^53), turned back into the dict when read; and the intake divides a
budget of snapshots over the paths (`history_keep`), so a large fabric keeps a shorter history
per path instead of more memory.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

# A snapshot's fields in their order, with how each reads back: "f" a float, "i" a count,
# "b" a flag (each may be None). PathEstimator.snapshot gives exactly these
# (tests/unit/controller/telemetry/test_history.py).
FIELDS: tuple[tuple[str, str], ...] = (
    ("t", "f"),
    ("srtt_ms", "f"),
    ("rttvar_ms", "f"),
    ("rtt_min_ms", "f"),
    ("rtt_max_ms", "f"),
    ("loss", "f"),
    ("goodput_mbps", "f"),
    ("capacity_mbps", "f"),
    ("owd_ms", "f"),
    ("reordered", "i"),
    ("flow_ooo", "i"),
    ("retrans", "i"),
    ("inflight_bytes", "i"),
    ("alive", "b"),
    ("freshness_s", "f"),
)
NAMES = tuple(name for name, _ in FIELDS)
_ROW = struct.Struct(f"<{len(FIELDS)}d")
# Fewest snapshots a path keeps whatever the budget: the dashboard's rates need a few seconds.
MIN_KEEP = 10


def history_keep(paths: int, per_path: int, budget: int) -> int:
    """Snapshots each of `paths` keeps: `per_path`, fewer when the paths together would hold
    more than `budget`, never fewer than MIN_KEEP (nor more than `per_path`)."""
    if paths <= 0:
        return per_path
    return min(per_path, max(MIN_KEEP, budget // paths))


def _pack(snap: Mapping[str, Any]) -> bytes:
    return _ROW.pack(*[math.nan if snap[name] is None else float(snap[name]) for name in NAMES])


def _unpack(row: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (name, kind), v in zip(FIELDS, _ROW.unpack(row), strict=True):
        if math.isnan(v):
            out[name] = None
        elif kind == "i":
            out[name] = int(v)
        elif kind == "b":
            out[name] = v != 0.0
        else:
            out[name] = v
    return out


def _time(row: bytes) -> float:
    return float(_ROW_T.unpack_from(row)[0])


_ROW_T = struct.Struct("<d")  # "t" comes first


class History:
    """The snapshots of one path, oldest first; iterating yields them as dicts."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: deque[bytes] = deque()

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (_unpack(row) for row in self._rows)

    def append(self, snap: Mapping[str, Any], keep: int) -> None:
        """Add the newest snapshot; drop the oldest beyond `keep`. KeyError for a snapshot
        without one of FIELDS."""
        self._rows.append(_pack(snap))
        while len(self._rows) > keep:
            self._rows.popleft()

    def prepend(self, older: Iterable[Mapping[str, Any]]) -> None:
        """Add snapshots older than every one held, given oldest first (a history dated back,
        as the UI benches do)."""
        self._rows.extendleft(reversed([_pack(s) for s in older]))

    def since(self, t: float) -> list[dict[str, Any]]:
        """The snapshots taken after time `t`, oldest first."""
        return [_unpack(row) for row in self._rows if _time(row) > t]
