"""Header layouts read from the compiled program's BMv2 JSON (`make p4`: build/p4/main.json).

The sizes and field offsets of the P4 headers (p4src/include/headers.p4) reach Python from
here, never as copies written by hand: a header that changes in P4 changes here at the next
`make p4`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mpsched.p4rt.pipeline import HEADER_PATH_TAG
from mpsched.proc.layout import p4_artifacts


class Bmv2JsonError(ValueError):
    """The BMv2 JSON is missing, unreadable or lacks the header asked for."""


@dataclass(frozen=True)
class HeaderLayout:
    """A fixed-size header's fields in wire order, each (name, bits)."""

    name: str
    fields: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:
        """The header's bytes."""
        return sum(bits for _, bits in self.fields) // 8

    def bit_offset(self, field: str) -> int:
        """Bits before `field` in the header."""
        offset = 0
        for name, bits in self.fields:
            if name == field:
                return offset
            offset += bits
        raise Bmv2JsonError(f"{self.name} has no field {field!r}")

    def offset(self, field: str) -> int:
        """The byte offset of `field`, which must start on a byte boundary."""
        bits = self.bit_offset(field)
        if bits % 8:
            raise Bmv2JsonError(f"{self.name}.{field} does not start on a byte boundary")
        return bits // 8

    def pack(self, values: Mapping[str, int]) -> bytes:
        """The header's bytes with `values` by field name (others 0)."""
        unknown = set(values) - {name for name, _ in self.fields}
        if unknown:
            raise Bmv2JsonError(f"{self.name} has no field {sorted(unknown)[0]!r}")
        word = 0
        for name, bits in self.fields:
            word = (word << bits) | (values.get(name, 0) & ((1 << bits) - 1))
        return word.to_bytes(self.size, "big")

    def unpack(self, data: bytes) -> dict[str, int]:
        """The fields of the header at the start of `data` (at least `size` bytes)."""
        if len(data) < self.size:
            raise Bmv2JsonError(f"{len(data)} bytes hold no {self.name} ({self.size} bytes)")
        word = int.from_bytes(data[: self.size], "big")
        out: dict[str, int] = {}
        shift = self.size * 8
        for name, bits in self.fields:
            shift -= bits
            out[name] = (word >> shift) & ((1 << bits) - 1)
        return out


def header_layout(bmv2_json: Path, name: str) -> HeaderLayout:
    """The layout of header type `name` in a BMv2 JSON file."""
    try:
        doc = json.loads(bmv2_json.read_text())
    except (OSError, ValueError) as exc:
        raise Bmv2JsonError(f"{bmv2_json}: {exc} (run `make p4`)") from exc
    for ht in doc.get("header_types", []):
        if ht.get("name") == name:
            fields = tuple((str(f[0]), f[1]) for f in ht["fields"])
            if any(not isinstance(bits, int) for _, bits in fields):
                raise Bmv2JsonError(f"{name} has a variable-size field")
            if sum(bits for _, bits in fields) % 8:
                raise Bmv2JsonError(f"{name} is not a whole number of bytes")
            return HeaderLayout(name, fields)
    raise Bmv2JsonError(f"{bmv2_json} has no header type {name!r}")


@functools.cache
def path_tag(bmv2_json: Path | None = None) -> HeaderLayout:
    """The path tag's layout (path_tag_t) in `bmv2_json`, by default the compiled program's
    (build/p4, src/mpsched/proc/layout.py)."""
    return header_layout(bmv2_json or p4_artifacts().bmv2_json, HEADER_PATH_TAG)
