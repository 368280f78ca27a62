"""The control loop: every control period, one scheduler step per ready switch and its
writes (telemetry -> estimators -> policy -> LM3 -> weights/active set -> table writes).

The loop runs on a fixed schedule (a step's own time does not stretch the period), keeps the
latency of each step that wrote something (from the step's start, reading the estimates, to
every switch's acknowledgement of its writes), reads the MPTCP pins' counters every
IDLE_CHECK_S before a step and saves what learning policies learned every LEARNED_SAVE_S
after one. A fabric's paths are checked for failed links every FAILURE_CHECK_S
(src/mpsched/controller/fabric/failures.py) on a thread of the loop's own, so that the inference
over every installed path of every pair does not hold back the steps. What a step does
is the host's (`LoopHost`, the controller); this module only keeps time, and where a writing
step's latency went (`Phases`: waiting for the controller's lock, until its writes were
submitted, until they were acknowledged). `every` runs the failure check and the telemetry
recorder on their own periods.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import NamedTuple, Protocol

from mpsched.controller.fabric.failures import FAILURE_CHECK_S
from mpsched.controller.model.errors import UnavailableError
from mpsched.controller.model.loop import LoopStats
from mpsched.controller.runtime.samples import Samples
from mpsched.stats import percentile

log = logging.getLogger(__name__)

LATENCIES_KEPT = 10_000
PHASES_KEPT = 1_000  # the latest writing steps' phases (a benchmark's window of them)
IDLE_CHECK_S = 1.0  # how often the control loop reads the subflow pins' counters
LEARNED_SAVE_S = 10.0  # how often the loop saves what learning policies learned, if it changed
CATCH_UP_S = 1.0  # a loop further behind than this skips the missed periods


class Phases(NamedTuple):
    """Where one writing step's latency went, in ms from the step's start: the host's lock
    acquired (`ControlLoop.lock_waited`), the writes submitted, every one acknowledged."""

    locked_ms: float
    submitted_ms: float
    acknowledged_ms: float


class LoopHost(Protocol):
    def control_period_ms(self) -> float:
        """The current control period (a parameter the operator may change)."""
        ...

    def step(self) -> dict[str, Future]:
        """Step the scheduler for every ready switch and submit the writes."""
        ...

    def await_step(self, futures: dict[str, Future]) -> None:
        """Wait for the writes; UnavailableError names the switches that failed."""
        ...

    def prepare_step(self) -> None:
        """After a step's writes, compute ahead what the next step would otherwise compute
        inside its latency."""
        ...

    def check_idle(self) -> None:
        """Read the subflow pins' counters and drop idle subflows."""
        ...

    def save_learned(self) -> None:
        """Save what the learning policies learned, if it changed."""
        ...

    def check_failures(self) -> None:
        """Infer a fabric's failed links from its paths' liveness and re-route around them
        (or back); nothing with two edges."""
        ...


class ControlLoop:
    def __init__(self, host: LoopHost, stop: threading.Event) -> None:
        self.host = host
        self.stop = stop
        self.latencies_ms = Samples(LATENCIES_KEPT)
        self.phases: deque[Phases] = deque(maxlen=PHASES_KEPT)
        self._locked_s = 0.0
        self.iterations = 0
        self.writes = 0
        self._next_idle_check = 0.0
        self._next_learned_save = time.monotonic() + LEARNED_SAVE_S
        self.thread = threading.Thread(target=self.run, name="control", daemon=True)
        self.failure_thread = every(FAILURE_CHECK_S, host.check_failures, stop, "failures")

    def start(self) -> None:
        self.thread.start()
        self.failure_thread.start()

    def run(self) -> None:
        next_at = time.monotonic()
        while True:
            # a fixed schedule: the period does not stretch by the step's own time
            next_at += self.host.control_period_ms() / 1000
            if self.stop.wait(max(0.0, next_at - time.monotonic())):
                return
            next_at = max(next_at, time.monotonic() - CATCH_UP_S)
            try:
                self.tick()
            except UnavailableError as error:
                log.warning("control loop: %s", error)
            except Exception:
                log.exception("control loop step failed")

    def tick(self) -> None:
        """One iteration: the idle check when due, a step and its writes (their latency
        from the step's start), learned save when due, what the next step reads prepared
        (`LoopHost.prepare_step`)."""
        if time.monotonic() >= self._next_idle_check:
            self._next_idle_check = time.monotonic() + IDLE_CHECK_S
            self.host.check_idle()
        t0 = time.perf_counter()
        self._locked_s = 0.0
        futures = self.host.step()
        if futures:
            submitted = time.perf_counter() - t0
            self.host.await_step(futures)
            latency_ms = (time.perf_counter() - t0) * 1000
            self.latencies_ms.append(latency_ms)
            self.phases.append(Phases(self._locked_s * 1000, submitted * 1000, latency_ms))
            self.writes += 1
        self.iterations += 1
        if time.monotonic() >= self._next_learned_save:
            self._next_learned_save = time.monotonic() + LEARNED_SAVE_S
            self.host.save_learned()
        self.host.prepare_step()

    def lock_waited(self, seconds: float) -> None:
        """The host's step waited `seconds` for its lock (in this tick's `Phases`)."""
        self._locked_s = seconds

    def stats(self) -> LoopStats:
        """Iterations, steps that wrote, and the latency percentiles of those (None before
        the first)."""
        lat = list(self.latencies_ms)
        return LoopStats(
            iterations=self.iterations,
            writes=self.writes,
            latency_ms_p50=round(percentile(lat, 50), 3) if lat else None,
            latency_ms_p99=round(percentile(lat, 99), 3) if lat else None,
            control_period_ms=self.host.control_period_ms(),
        )


def every(
    period: float, fn: Callable[[], None], stop: threading.Event, name: str
) -> threading.Thread:
    """A daemon thread (not started) that calls `fn` every `period` seconds until `stop`;
    a call that raises is logged, and the next comes on time."""

    def run() -> None:
        while not stop.wait(period):
            try:
                fn()
            except Exception:
                log.exception("%s failed", name)

    return threading.Thread(target=run, name=name, daemon=True)
