"""Time schedules for link parameters: steps, linear ramps and replayed traces.

A schedule is a list of events for one direction of one link. Pure logic:
`params_at(base, events, t)` says what the link looks like `t` seconds into a
run, and `change_times(events, horizon)` when it needs re-applying. Events are
applied in order of their start time (ties: in the order declared); a ramp
moves one field linearly from `start_value` at `start_s` to `end_value` at
`end_s`, in `interval_s` steps, and then holds it. A failure is a step that
sets `up` to False; a recovery one that sets it back to True.
`LinkScheduler` is the thin thread that drives a backend through a run.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from mpsched import safeload

from .params import GilbertElliott, LinkParams, ParamError

log = logging.getLogger(__name__)

NUMERIC_FIELDS = ("delay_ms", "jitter_ms", "loss", "rate_mbps")
SETTABLE_FIELDS = tuple(f.name for f in fields(LinkParams))


@dataclass(frozen=True)
class Step:
    """At `at_s`, set the given LinkParams fields."""

    at_s: float
    changes: Mapping[str, Any]

    @property
    def start_s(self) -> float:
        return self.at_s


@dataclass(frozen=True)
class Ramp:
    """Move `field` linearly from `start_value` to `end_value` over [start_s, end_s]."""

    field: str
    start_s: float
    end_s: float
    start_value: float
    end_value: float
    interval_s: float = 0.5

    def value_at(self, t: float) -> float:
        if t >= self.end_s or self.end_s == self.start_s:
            return self.end_value
        frac = (t - self.start_s) / (self.end_s - self.start_s)
        # quantise to the steps actually applied, so the value does not depend on wake-up jitter
        steps = math.floor(frac * (self.end_s - self.start_s) / self.interval_s + 1e-9)
        frac = min(1.0, steps * self.interval_s / (self.end_s - self.start_s))
        return self.start_value + frac * (self.end_value - self.start_value)


Event = Step | Ramp


def check_event(event: Event, where: str = "event") -> None:
    """Raise ParamError (field named with `where`) for an event that cannot apply."""
    if isinstance(event, Step):
        if not math.isfinite(event.at_s) or event.at_s < 0:
            raise ParamError(f"{where}.at_s", f"must be a time >= 0, got {event.at_s!r}")
        for name in event.changes:
            if name not in SETTABLE_FIELDS:
                raise ParamError(
                    f"{where}.{name}",
                    f"unknown link parameter (one of {', '.join(SETTABLE_FIELDS)})",
                )
    elif isinstance(event, Ramp):
        if event.field not in NUMERIC_FIELDS:
            raise ParamError(
                f"{where}.field",
                f"a ramp moves one of {', '.join(NUMERIC_FIELDS)}, got {event.field!r}",
            )
        if not (0 <= event.start_s <= event.end_s):
            raise ParamError(f"{where}.end_s", "a ramp needs 0 <= start_s <= end_s")
        if not event.interval_s > 0:
            raise ParamError(f"{where}.interval_s", "must be > 0")
    else:
        raise ParamError(where, f"not a schedule event: {event!r}")


def _ordered(events: Iterable[Event]) -> list[Event]:
    indexed = list(enumerate(events))
    indexed.sort(key=lambda item: (item[1].start_s, item[0]))
    return [e for _, e in indexed]


def params_at(base: LinkParams, events: Iterable[Event], t: float) -> LinkParams:
    """The parameters in force `t` seconds into the run."""
    values = {f.name: getattr(base, f.name) for f in fields(LinkParams)}
    for event in _ordered(events):
        if event.start_s > t:
            break
        if isinstance(event, Step):
            values.update(event.changes)
        else:
            values[event.field] = event.value_at(t)
    if isinstance(values.get("gilbert"), Mapping):
        values["gilbert"] = GilbertElliott(**values["gilbert"])
    return LinkParams(**values)


def change_times(events: Iterable[Event], horizon_s: float) -> list[float]:
    """Every time in [0, horizon_s] at which `params_at` may change, sorted, unique."""
    times: set[float] = {0.0}
    for event in events:
        if isinstance(event, Step):
            times.add(event.at_s)
        else:
            n = math.ceil((event.end_s - event.start_s) / event.interval_s - 1e-9)
            times.update(event.start_s + i * event.interval_s for i in range(n))
            times.add(event.end_s)
    return sorted(t for t in times if 0.0 <= t <= horizon_s)


def load_trace(
    path: Path, field_units: Mapping[str, Callable[[str], tuple[str, Any]]]
) -> list[Step]:
    """Steps from a CSV trace: a `time_s` column and one column per parameter.

    `field_units` maps a column name (e.g. `loss_pct`) to a converter returning
    the LinkParams field and value (e.g. ("loss", 0.02)); empty or missing cells keep
    the previous value. The file is read within `safeload.TRACE` (size, rows, field
    length); errors name the file, line and column.
    """
    try:
        rows = list(safeload.read_csv(path))
    except OSError as exc:
        raise ParamError(f"{path}", f"cannot read it: {exc.strerror or exc}") from None
    except safeload.RefusedError as exc:
        raise ParamError(f"{path}:{exc.line}" if exc.line else f"{path}", exc.message) from None
    columns = rows[0][1] if rows else []
    if "time_s" not in columns:
        raise ParamError(f"{path}", "trace needs a time_s column")
    for col in columns:
        if col != "time_s" and col not in field_units:
            raise ParamError(
                f"{path}:{col}",
                f"unknown trace column (known: time_s, {', '.join(field_units)})",
            )
    steps: list[Step] = []
    last = -1.0
    for lineno, cells in rows[1:]:
        if len(cells) > len(columns):
            raise ParamError(f"{path}:{lineno}", f"{len(cells)} fields, the header has "
                             f"{len(columns)}")
        row = dict(zip(columns, cells, strict=False))
        t = _trace_time(row.get("time_s", ""), f"{path}:{lineno}:time_s")
        if t < last:
            raise ParamError(f"{path}:{lineno}:time_s", "times must not decrease")
        last = t
        changes: dict[str, Any] = {}
        for col, cell in row.items():
            if col == "time_s" or cell.strip() == "":
                continue
            try:
                name, value = field_units[col](cell.strip())
            except (TypeError, ValueError) as exc:
                raise ParamError(f"{path}:{lineno}:{col}", str(exc)) from None
            changes[name] = value
        steps.append(Step(t, changes))
    return steps


def _trace_time(cell: str, where: str) -> float:
    """A trace's time: a finite number of seconds >= 0."""
    try:
        t = float(cell)
    except ValueError:
        raise ParamError(where, f"not a number: {cell!r}") from None
    if not math.isfinite(t) or t < 0:
        raise ParamError(where, f"must be a time >= 0 in seconds, got {cell!r}")
    return t


class LinkScheduler(threading.Thread):
    """Applies a schedule to one direction of a link in real time.

    `apply(params)` is called at start with the parameters at t=0 and then at
    every change time whose parameters differ from the last applied ones.
    """

    def __init__(
        self,
        name: str,
        base: LinkParams,
        events: list[Event],
        apply: Callable[[LinkParams], None],
        horizon_s: float,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        super().__init__(name=f"sched-{name}", daemon=True)
        self.base = base
        self.events = events
        self.apply = apply
        self.horizon_s = horizon_s
        self.on_error = on_error
        self._stop_event = threading.Event()
        self.t0 = time.monotonic()
        self.applied: list[tuple[float, LinkParams]] = []

    def start_at(self, t0: float) -> None:
        self.t0 = t0
        self.start()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        last: LinkParams | None = None
        try:
            for t in change_times(self.events, self.horizon_s):
                wait = self.t0 + t - time.monotonic()
                if wait > 0 and self._stop_event.wait(wait):
                    return
                if self._stop_event.is_set():
                    return
                params = params_at(self.base, self.events, t)
                if params != last:
                    self.apply(params)
                    self.applied.append((t, params))
                    if last is not None:
                        log.info("%s t=%.1fs: %s", self.name, t, params)
                    last = params
        except Exception as exc:  # reported to the owner, which aborts the run
            log.error("%s: %s", self.name, exc)
            if self.on_error:
                self.on_error(exc)
