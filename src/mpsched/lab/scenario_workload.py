"""The workload part of a scenario file: one `Workload` per traffic source.

`Workload` is a dataclass whose field types carry their checks: a file's `workload[i]`
validates into it (pydantic), naming the bad key (src/mpsched/validation.py); built in code it
is not checked; which keys a source takes depends on its `kind`
(`WORKLOAD_KEYS`). Checks against the rest of the scenario (a `path` with cross traffic, a
`drain_s` inside the run) are the scenario's (src/mpsched/lab/scenario.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import model_validator

from mpsched.emu.segment import MAX_PATHS
from mpsched.traffic import flowsizes
from mpsched.validation import BoolValue, check_number, fail, int_in, number, one_of

WORKLOAD_KINDS = ("bulk", "files", "flows", "poisson", "vbr", "cross_bulk")
SIZE_DISTRIBUTIONS = tuple(flowsizes.DISTRIBUTIONS)  # the published flow-size CDFs
COMMON_KEYS = ("kind", "start_s", "stop_s")
WORKLOAD_KEYS = {
    "bulk": {"streams", "mptcp", "subflows"},
    "files": {"sizes_kb", "count", "concurrency", "interarrival_ms", "mptcp", "subflows"},
    "flows": {"flows", "size_kb", "mptcp", "subflows"},
    "poisson": {
        "sizes", "load_pct", "max_kb", "scale", "max_concurrent", "drain_s", "mptcp", "subflows",
    },
    "vbr": {"path", "load_pct", "pareto_shape", "mean_on_ms", "mean_off_ms", "tcp_pct"},
    "cross_bulk": {"path", "streams"},
}
# the keys a kind cannot do without
NEEDED_KEYS = {
    "files": ("sizes_kb", "count"),
    "flows": ("flows", "size_kb"),
    "poisson": ("sizes", "load_pct"),
    "vbr": ("path",),
    "cross_bulk": ("path",),
}
Count = Annotated[int, int_in(1, 1024)]
Bound = Annotated[int, int_in(0, 1024)]  # 0: unbounded
Positive = Annotated[float, number(0.001)]
SizeKb = Annotated[int, int_in(1, 10_000_000)]


@dataclass(frozen=True)
class Workload:
    """One traffic source. `kind`:

    bulk: long-lived TCP (or MPTCP) streams h1 -> h2 for the whole run.
    files: transfers of the given sizes h1 -> h2, Poisson arrivals; each completion gives
        one flow completion time, counted from the flow's arrival. `concurrency` (0: none)
        bounds the flows in progress: later arrivals wait for a slot, inside their FCT.
    poisson: open-loop Poisson arrivals h1 -> h2 offering `load_pct` % of the paths' summed
        capacity (`Scenario.offered_mbps`), sizes from the published `sizes` CDF
        (websearch: DCTCP, datamining: VL2; src/mpsched/traffic/flowsizes.py) scaled by `scale`
        and censored at `max_kb`; every flow starts at its arrival (`max_concurrent` > 0
        bounds the flows in progress, as `concurrency` does for files); no arrivals in the
        last `drain_s` seconds, so the last flows can finish.
    flows: many concurrent flows (closed loop: each of `flows` connections
        sends `size_kb`, finishes, and starts again) - for flowlet schedulers.
    vbr: cross traffic x<path> -> y<path> with Pareto on/off periods and the
        papers' packet-size mix, `tcp_pct` of packets over TCP, the rest UDP.
    cross_bulk: long-lived TCP cross traffic x<path> -> y<path>.
    """

    kind: Annotated[str, one_of(WORKLOAD_KINDS)]
    start_s: Annotated[float, number(0)] = 0.0
    stop_s: Annotated[float, number()] | None = None  # >= start_s; None: the run's end
    streams: Count = 1
    mptcp: BoolValue = False
    subflows: Count = 2
    sizes_kb: tuple[SizeKb, ...] = ()
    count: Count = 0
    concurrency: Bound = 0
    interarrival_ms: Positive = 100.0
    flows: Count = 0
    size_kb: SizeKb = 0
    path: Annotated[int, int_in(1, MAX_PATHS)] = 0  # 1..the scenario's paths; 0: none
    load_pct: Annotated[float, number(0.1, 100)] = 0.0
    pareto_shape: Annotated[float, number(1.01, 10)] = 1.5
    mean_on_ms: Positive = 500.0
    mean_off_ms: Positive = 500.0
    tcp_pct: Annotated[float, number(0, 100)] = 90.0
    sizes: Annotated[str, one_of(SIZE_DISTRIBUTIONS)] = "websearch"
    max_kb: Annotated[float, number(1, 10_000_000)] = 3000.0
    scale: Annotated[float, number(0.001, 1000)] = 1.0
    max_concurrent: Bound = 0
    drain_s: Annotated[float, number(0, 3600)] = 5.0

    @model_validator(mode="before")
    @classmethod
    def _keys_of_the_kind(cls, data: Any) -> Any:
        """A file's workload: the keys its kind takes, and those it needs."""
        if not isinstance(data, dict):
            return data
        kind = data.get("kind")
        if kind not in WORKLOAD_KINDS:
            fail("kind", f"must be one of {', '.join(WORKLOAD_KINDS)}, got {kind!r}", kind)
        check_keys(data, kind, WORKLOAD_KEYS[kind], NEEDED_KEYS.get(kind, ()))
        if isinstance(data.get("sizes_kb"), list) and not data["sizes_kb"]:
            fail("sizes_kb", "at least one size", data["sizes_kb"])
        return data

    @model_validator(mode="after")
    def _stop_after_start(self) -> Workload:
        check_stop(self.start_s, self.stop_s)
        return self


def check_keys(data: dict, kind: str, takes: set[str], needs: tuple[str, ...]) -> None:
    """A workload entry of `kind` has only the common keys and those its kind `takes`, and
    every key it `needs` (the error names the first key that is not)."""
    allowed = sorted({*COMMON_KEYS, *takes})
    for key in data:
        if key not in allowed:
            fail(key, f"unknown key (allowed: {', '.join(allowed)})", data[key])
    for key in needs:
        if key not in data:
            fail(key, f"missing (needed by kind {kind})")


def check_stop(start_s: float, stop_s: float | None) -> None:
    """A workload's stop_s, if given, is not before its start_s."""
    if stop_s is not None:
        try:
            check_number(stop_s, start_s)
        except ValueError as exc:
            fail("stop_s", str(exc), stop_s)
