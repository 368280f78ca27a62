"""Which Python objects grow: counts by type and the containers whose length grows.

A growing structure of the controller (a log, a history, a per-flow table, a queue) shows as
a type whose count rises (its entries, when they are objects the collector tracks) or as one
container whose length rises (its entries ints, floats, strings or bytes, which the collector
does not track, so that no type count moves). `ObjectWatch.sample` does both over
gc.get_objects(): the type counts against the first sample's, and the lengths of the largest
containers (lists, dicts, sets, deques) against their lengths when first seen, each named by
where it is held (`Class.attribute`, a dict's key). src/mpsched/controller/runtime/memtrace.py logs
them.
"""

from __future__ import annotations

import gc
import heapq
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

CONTAINERS = (list, dict, set, deque)
WATCHED = 64  # the largest containers of each sample kept under watch


def type_counts(objects: list[Any] | None = None) -> Counter[str]:
    """The objects the garbage collector tracks, counted by type name."""
    return Counter(type(o).__qualname__ for o in (gc.get_objects() if objects is None
                                                  else objects))


def type_growth_lines(base: Counter[str], now: Counter[str], top: int) -> list[str]:
    """The `top` types whose count grew most from `base` to `now`."""
    grown = sorted(((now[t] - base[t], t) for t in now if now[t] > base[t]),
                   key=lambda g: (-g[0], g[1]))[:top]
    return [f"memtrace type {t} +{d} ({now[t]})" for d, t in grown]


def holder(obj: Any) -> str:
    """Where `obj` is held: `Class.attribute`, `dict[key]` or the referrer's type."""
    for ref in gc.get_referrers(obj):
        if isinstance(ref, dict):
            key = next((k for k, v in ref.items() if v is obj), None)
            if key is None:
                continue
            owner = next((o for o in gc.get_referrers(ref)
                          if getattr(o, "__dict__", None) is ref), None)
            return f"{type(owner).__qualname__}.{key}" if owner is not None else f"dict[{key!r}]"
        attrs = getattr(ref, "__dict__", None)
        if isinstance(attrs, dict):
            key = next((k for k, v in attrs.items() if v is obj), None)
            if key is not None:
                return f"{type(ref).__qualname__}.{key}"
    return "?"


@dataclass
class ObjectWatch:
    """The type counts of the first sample and the containers under watch (module
    docstring)."""

    base_types: Counter[str] | None = None
    first_len: dict[int, int] = field(default_factory=dict)  # id -> length when first seen

    def sample(self, top: int) -> list[str]:
        """`memtrace gc_objects=N`, then the `top` types and the `top` containers that grew
        most since first seen."""
        objects = gc.get_objects()
        counts = type_counts(objects)
        lines = [f"memtrace gc_objects={counts.total()}"]
        if self.base_types is None:
            self.base_types = counts
        else:
            lines += type_growth_lines(self.base_types, counts, top)
        # the largest without a tuple per container: the walk itself should not churn the heap
        largest = heapq.nlargest(WATCHED, (o for o in objects if isinstance(o, CONTAINERS)),
                                 key=len)
        by_id = {id(o): (len(o), o) for o in largest}
        by_id |= {i: (len(o), o) for o in objects if (i := id(o)) in self.first_len}
        grown = sorted(((n - self.first_len[i], i) for i, (n, _) in by_id.items()
                        if i in self.first_len and n > self.first_len[i]), reverse=True)[:top]
        for diff, i in grown:
            n, obj = by_id[i]
            lines.append(f"memtrace container {type(obj).__qualname__} {holder(obj)} "
                         f"len={n} +{diff}")
        self.first_len = {i: self.first_len.get(i, n) for i, (n, _) in by_id.items()}
        del objects, largest, by_id
        return lines
