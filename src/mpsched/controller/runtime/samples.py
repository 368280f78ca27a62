"""The latest N measurements of a figure (a step's latency, a pair's refresh time), kept in
memory allocated once.

The control loop keeps the latency of its last 10 000 writing steps for the REST statistics
and the benchmarks. In a `deque(maxlen=N)` of floats each sample is a float object and the
deque's blocks grow until it holds N: at two edges, a few writing steps a second, that takes
over half an hour, and a soak's memory slope reads the filling as growth (the two-edge soak,
docs/results/fabric-soak.md). Here the N doubles are one `array('d')` from the start: the
memory is the same from the first sample to the last, and nothing in it is an object the
collector walks.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator


class Samples:
    """A ring of at most `capacity` floats: `append`, `clear`, `len`, and iteration oldest
    first (as a `deque(maxlen=capacity)` of floats)."""

    __slots__ = ("_values", "_next", "_count")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self._values = array("d", bytes(8 * capacity))
        self._next = 0  # where the next sample goes
        self._count = 0

    @property
    def capacity(self) -> int:
        return len(self._values)

    def append(self, value: float) -> None:
        self._values[self._next] = value
        self._next = (self._next + 1) % len(self._values)
        self._count = min(self._count + 1, len(self._values))

    def clear(self) -> None:
        self._next = self._count = 0

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[float]:
        start = (self._next - self._count) % len(self._values)
        for i in range(self._count):
            yield self._values[(start + i) % len(self._values)]


__all__ = ["Samples"]
