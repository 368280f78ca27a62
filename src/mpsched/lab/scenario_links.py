"""The link part of a scenario file: link parameters, schedules, segments and paths.

Pydantic models of the keys of `paths[i]` (scenarios/README.md); each path validates into
the testbed's `PathSpec` (`PathFile.spec`). Units are in the key names (`_ms`, `_s`, `_pct`,
`_mbps`); loss and probabilities are percentages in files and fractions 0..1 in
`LinkParams`. A `trace` event's CSV is read relative to ``context["base_dir"]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)

from mpsched.emu.params import (
    MAX_DELAY_MS,
    MAX_RATE_MBPS,
    MIN_RATE_MBPS,
    GilbertElliott,
    LinkParams,
    ParamError,
)
from mpsched.emu.schedule import Event, Ramp, Step, check_event, load_trace
from mpsched.emu.segment import PathSpec, Segment
from mpsched.validation import (
    BoolValue,
    KeyCheck,
    Text,
    check_number,
    fail,
    input_error,
    int_in,
    number,
    one_of,
)

DIRECTIONS = ("both", "forward", "reverse")
RAMPED = ("delay_ms", "jitter_ms", "loss_pct", "rate_mbps")  # the keys a ramp can move
MAX_DURATION_S = 3600  # a scenario's longest run, and so the latest time of its schedules
# Schedule steps a file may make its links take, all schedules together: a trace's rows and a
# ramp's steps count one each (a ramp's are applied one by one, `change_times`). Bounds the
# time and memory of loading a file and of running its schedules.
MAX_SCHEDULE_STEPS = 50_000
Percent = Annotated[float, number(0, 100)]
Delay = Annotated[float, number(0, MAX_DELAY_MS)]
Rate = Annotated[float | None, WrapValidator(
    lambda v, handler: None if v is None else check_number(v, MIN_RATE_MBPS, MAX_RATE_MBPS))]
Seconds = Annotated[float, number(0, MAX_DURATION_S)]
Direction = Annotated[str, one_of(DIRECTIONS)]


class _Model(KeyCheck, BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GilbertFile(_Model):
    """`gilbert`: Gilbert-Elliott loss in percent (`GilbertElliott` in fractions)."""

    p_pct: Percent
    r_pct: Percent
    loss_good_pct: Percent = 0.0
    loss_bad_pct: Percent = 100.0

    def model(self) -> GilbertElliott:
        return GilbertElliott(
            self.p_pct / 100, self.r_pct / 100, self.loss_good_pct / 100, self.loss_bad_pct / 100
        )


class LinkKeys(_Model):
    """Link parameters: of a path or core segment, its `reverse` override, a step's `set`.
    Only the keys a file gives count (`changes`); the others keep `LinkParams`' defaults."""

    delay_ms: Delay = 0.0
    jitter_ms: Delay = 0.0
    loss_pct: Percent = 0.0
    rate_mbps: Rate = None
    queue_packets: Annotated[int, int_in(1, 100_000)] = 100
    up: BoolValue = True
    gilbert: GilbertFile | None = None

    def changes(self) -> dict[str, Any]:
        """The `LinkParams` fields the file sets, in `LinkParams`' units."""
        out: dict[str, Any] = {}
        for key in LinkKeys.model_fields:
            if key in self.model_fields_set:
                out.update([_to_params(key, getattr(self, key))])
        return out


def _to_params(key: str, value: Any) -> tuple[str, Any]:
    """A file key and its value -> the `LinkParams` field and value."""
    if key == "loss_pct":
        return "loss", value / 100
    if key == "gilbert":
        return "gilbert", None if value is None else value.model()
    return key, value


# ---- schedule events -------------------------------------------------------------------


@dataclass
class StepBudget:
    """The schedule steps a file has left (MAX_SCHEDULE_STEPS), shared by its events through
    the validation context ("steps"; without one, each event has the whole budget)."""

    left: int = MAX_SCHEDULE_STEPS


def step_context(context: dict | None) -> dict:
    """`context` with a fresh StepBudget unless it has one: a loader's, once per file."""
    context = dict(context or {})
    context.setdefault("steps", StepBudget())
    return context


def _steps(event: Event) -> int:
    if isinstance(event, Step):
        return 1
    return math.ceil((event.end_s - event.start_s) / event.interval_s) + 1


class _Event(_Model):
    direction: Direction = "both"
    _events: list[Event] = PrivateAttr(default_factory=list)

    def events(self) -> list[Event]:
        """The `Step`s and `Ramp`s this file event stands for."""
        return self._events

    def _build(self, events: list[Event], info: ValidationInfo) -> None:
        for event in events:
            try:
                check_event(event, "event")
            except ParamError as exc:
                fail(tuple(exc.field.split(".")[1:]), exc.message)
        budget = (info.context or {}).get("steps") or StepBudget()
        budget.left -= sum(_steps(event) for event in events)
        if budget.left < 0:
            fail((), f"more than {MAX_SCHEDULE_STEPS} schedule steps in the file (a trace's "
                 "rows and a ramp's steps count one each)")
        self._events = events


class StepEvent(_Event):
    at_s: Seconds
    set: LinkKeys

    @model_validator(mode="after")
    def _step(self, info: ValidationInfo) -> StepEvent:
        self._build([Step(self.at_s, self.set.changes())], info)
        return self


class RampEvent(_Event):
    ramp: Annotated[str, one_of(RAMPED)]
    from_s: Seconds
    to_s: Seconds  # >= from_s
    start: Annotated[float, number()]  # a number, also for rate_mbps (no null here)
    end: Annotated[float, number()]
    interval_s: Annotated[float, number(0.01, MAX_DURATION_S)] = 0.5

    @model_validator(mode="after")
    def _ramp(self, info: ValidationInfo) -> RampEvent:
        try:
            check_number(self.to_s, self.from_s)
        except ValueError as exc:
            fail("to_s", str(exc), self.to_s)
        values = []
        for key in ("start", "end"):
            try:
                link = LinkKeys.model_validate({self.ramp: getattr(self, key)})
            except ValidationError as exc:
                fail(key, input_error(exc).message, getattr(self, key))
            values.append(link.changes())
        name = next(iter(values[0]))
        ramp = Ramp(name, self.from_s, self.to_s, values[0][name], values[1][name],
                    self.interval_s)
        self._build([ramp], info)
        return self


class DownEvent(_Event):
    down_s: Seconds
    up_s: Seconds | None = None  # >= down_s

    @model_validator(mode="after")
    def _down(self, info: ValidationInfo) -> DownEvent:
        events: list[Event] = [Step(self.down_s, {"up": False})]
        if self.up_s is not None:
            try:
                events.append(Step(check_number(self.up_s, self.down_s), {"up": True}))
            except ValueError as exc:
                fail("up_s", str(exc), self.up_s)
        self._build(events, info)
        return self


class TraceEvent(_Event):
    trace: Text

    @model_validator(mode="after")
    def _trace(self, info: ValidationInfo) -> TraceEvent:
        base_dir = (info.context or {}).get("base_dir") or Path.cwd()
        path = Path(base_dir) / self.trace
        if not path.is_file():
            fail("trace", f"no such file: {path}", self.trace)
        try:
            steps = load_trace(path, trace_converters())
        except ParamError as exc:
            fail("trace", str(exc), self.trace)
        self._build(list(steps), info)
        return self


def absolute_traces(data: Any, base_dir: Path) -> Any:
    """`data` (a section of a scenario, as written) with every schedule event's relative
    `trace` made absolute from `base_dir` (the scenario file's directory), so that the
    section means the same wherever it is copied (a fabric's network description)."""
    if isinstance(data, list):
        return [absolute_traces(item, base_dir) for item in data]
    if not isinstance(data, dict):
        return data
    out = {key: absolute_traces(value, base_dir) for key, value in data.items()}
    trace = out.get("trace")
    if isinstance(trace, str) and not Path(trace).is_absolute():
        out["trace"] = str((base_dir / trace).resolve())
    return out


EVENT_KINDS: dict[str, type[_Event]] = {
    "at_s": StepEvent, "ramp": RampEvent, "down_s": DownEvent, "trace": TraceEvent,
}


def _event(data: Any, info: ValidationInfo) -> _Event:
    """An event's kind is the key it has (at_s, ramp, down_s or trace)."""
    if not isinstance(data, dict):
        raise ValueError("must be an object")
    direction = data.get("direction", "both")
    if direction not in DIRECTIONS:
        fail("direction", f"must be one of {', '.join(DIRECTIONS)}, got {direction!r}", direction)
    for key, kind in EVENT_KINDS.items():
        if key in data:
            return kind.model_validate(data, context=info.context)
    raise ValueError("an event has one of at_s, ramp, down_s or trace")


ScheduleEvent = Annotated[_Event, WrapValidator(lambda v, _h, info: _event(v, info))]


def trace_converters() -> dict[str, Callable[[str], tuple[str, Any]]]:
    """A CSV trace's columns (link keys but gilbert) -> parsers of a cell."""

    def conv(key: str) -> Callable[[str], tuple[str, Any]]:
        def parse(cell: str) -> tuple[str, Any]:
            value: Any
            if key == "up":
                if cell.lower() not in ("0", "1", "true", "false"):
                    raise ValueError(f"up must be 0/1/true/false, got {cell!r}")
                value = cell.lower() in ("1", "true")
            else:
                value = int(cell) if key == "queue_packets" else float(cell)
            try:
                link = LinkKeys.model_validate({key: value})
            except ValidationError as exc:
                raise ValueError(input_error(exc).message) from None
            return _to_params(key, getattr(link, key))

        return parse

    return {k: conv(k) for k in LinkKeys.model_fields if k != "gilbert"}


# ---- segments and paths ----------------------------------------------------------------


class SegmentFile(LinkKeys):
    """A path's access segment or its `core`: link keys both ways, a `reverse` override and
    a `schedule`."""

    rate_mbps: Rate
    reverse: LinkKeys | None = None
    schedule: list[ScheduleEvent] = []
    _segment: Segment = PrivateAttr()

    @field_validator("schedule", mode="before")
    @classmethod
    def _schedule_list(cls, value: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError("must be a list")
        return value

    def segment(self) -> Segment:
        return self._segment

    @model_validator(mode="after")
    def _build_segment(self) -> SegmentFile:
        forward = LinkKeys.changes(self)
        reverse = {**forward, **(self.reverse.changes() if self.reverse else {})}
        fwd, rev = _params(forward, ()), _params(reverse, ("reverse",))
        events = [(e.direction, ev) for e in self.schedule for ev in e.events()]
        for j, item in enumerate(self.schedule):
            for event in item.events():
                moves_loss = (isinstance(event, Step) and "loss" in event.changes) or (
                    isinstance(event, Ramp) and event.field == "loss"
                )
                if moves_loss and fwd.gilbert is not None:
                    fail(("schedule", j), "changes loss_pct on a link with gilbert loss "
                         "(the gilbert model decides)")
                if isinstance(event, Step):
                    for d, base in (("forward", fwd), ("reverse", rev)):
                        if item.direction in ("both", d):
                            _params({**_as_dict(base), **event.changes}, ("schedule", j))
        self._segment = Segment(
            forward=fwd,
            reverse=rev,
            forward_events=tuple(e for d, e in events if d in ("both", "forward")),
            reverse_events=tuple(e for d, e in events if d in ("both", "reverse")),
        )
        return self


class PathFile(SegmentFile):
    """`paths[i]`: the access segment, optional `core` segment, `cross_traffic` hosts."""

    cross_traffic: BoolValue = False
    core: SegmentFile | None = None

    def spec(self) -> PathSpec:
        seg = self.segment()
        return PathSpec(
            forward=seg.forward,
            reverse=seg.reverse,
            forward_events=seg.forward_events,
            reverse_events=seg.reverse_events,
            cross_traffic=self.cross_traffic,
            core=self.core.segment() if self.core else None,
        )


def _params(values: dict[str, Any], loc: tuple[str | int, ...]) -> LinkParams:
    try:
        return LinkParams(**values)
    except ParamError as exc:
        fail((*loc, exc.field), exc.message)


def _as_dict(params: LinkParams) -> dict[str, Any]:
    return {k: getattr(params, k) for k in LinkParams.__dataclass_fields__}
