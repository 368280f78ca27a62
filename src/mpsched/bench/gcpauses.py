"""The garbage collector's passes over a stretch of a benchmark (`gc.callbacks`): how many per
generation and how long they stopped the process (every thread: a pass holds the GIL)."""

from __future__ import annotations

import gc
import time
from types import TracebackType
from typing import Any


class GcPauses:
    """Used as a context manager: records every collection's duration by generation."""

    def __init__(self) -> None:
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._t0: float | None = None

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        elif self._t0 is not None:
            self.pauses.setdefault(info["generation"], []).append(time.perf_counter() - self._t0)
            self._t0 = None

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        gc.callbacks.remove(self._callback)

    def line(self) -> str:
        """One line: full collections (count, longest, summed) and the young ones."""
        full, young = self.pauses.get(2, []), self.pauses.get(0, []) + self.pauses.get(1, [])
        text = f"gc: {len(full)} full collections"
        if full:
            text += f" (longest {max(full) * 1000:.0f} ms, {sum(full) * 1000:.0f} ms in all)"
        text += f", {len(young)} young ones"
        if young:
            text += f" (longest {max(young) * 1000:.1f} ms)"
        return text + f"; {gc.get_freeze_count()} objects frozen"
