"""loop.py: one iteration's bookkeeping (latencies of steps that wrote, idle checks and
learned saves when due), the failure checks on their own thread, and the statistics REST
shows."""

from __future__ import annotations

import math
import threading
from concurrent.futures import Future

import pytest

from mpsched.controller.model.errors import UnavailableError
from mpsched.controller.scheduling.loop import ControlLoop, every
from mpsched.stats import percentile


class Host:
    def __init__(self, writes: bool = True, fail: bool = False) -> None:
        self.writes = writes
        self.fail = fail
        self.calls: list[str] = []

    def control_period_ms(self) -> float:
        return 10.0

    def step(self) -> dict[str, Future]:
        self.calls.append("step")
        done: Future = Future()
        done.set_result(None)
        return {"s1": done} if self.writes else {}

    def await_step(self, futures: dict[str, Future]) -> None:
        self.calls.append("await")
        if self.fail:
            raise UnavailableError("s1: timed out")

    def check_idle(self) -> None:
        self.calls.append("idle")

    def prepare_step(self) -> None:
        self.calls.append("prepare")

    def save_learned(self) -> None:
        self.calls.append("learned")

    def check_failures(self) -> None:
        self.calls.append("failures")


def test_a_step_that_wrote_counts_its_latency():
    host = Host()
    loop = ControlLoop(host, threading.Event())
    loop.tick()
    loop.tick()
    assert (loop.iterations, loop.writes, len(loop.latencies_ms)) == (2, 2, 2)
    # idle check once a second; the failure check is not the loop thread's
    assert host.calls == ["idle", "step", "await", "prepare", "step", "await", "prepare"]


def test_the_latency_counts_from_the_step_not_the_idle_check():
    """A slow idle check before the step delays it but is not part of its latency (the
    estimates are read when the step starts)."""
    import time

    class SlowIdle(Host):
        def check_idle(self) -> None:
            time.sleep(0.2)

    loop = ControlLoop(SlowIdle(), threading.Event())
    loop.tick()
    (latency,) = loop.latencies_ms
    assert latency < 100


def test_a_writing_steps_phases_split_its_latency():
    """Each writing step keeps where its latency went: the lock wait the host reported,
    until its writes were submitted, until they were acknowledged (in that order, the last
    its latency)."""
    import time

    class Slow(Host):
        loop: ControlLoop
        wait: float | None = 0.03

        def step(self) -> dict[str, Future]:
            if self.wait is not None:
                self.loop.lock_waited(self.wait)
            time.sleep(0.05)
            return super().step()

        def await_step(self, futures: dict[str, Future]) -> None:
            time.sleep(0.05)

    host = Slow()
    loop = host.loop = ControlLoop(host, threading.Event())
    loop.tick()
    (phases,) = loop.phases
    assert phases.locked_ms == pytest.approx(30)
    (latency,) = loop.latencies_ms
    assert 50 <= phases.submitted_ms < phases.acknowledged_ms == latency
    assert phases.acknowledged_ms - phases.submitted_ms >= 50
    # a later step whose host reports no wait counts none
    host.wait = None
    loop.tick()
    assert [p.locked_ms for p in loop.phases] == [pytest.approx(30), 0.0]


def test_failures_are_checked_on_their_own_thread_and_outlive_an_error():
    """The failure check runs every FAILURE_CHECK_S on a thread of its own (named
    "failures"), which goes on after a check that raised."""
    calls: list[str] = []
    again = threading.Event()

    class Failing(Host):
        def check_failures(self) -> None:
            calls.append(threading.current_thread().name)
            if len(calls) == 1:
                raise RuntimeError("inference broke")
            again.set()

    stop = threading.Event()
    loop = ControlLoop(Failing(), stop)
    loop.start()
    try:
        assert again.wait(5), calls
    finally:
        stop.set()
        loop.thread.join(timeout=2)
        loop.failure_thread.join(timeout=2)
    assert calls[:2] == ["failures", "failures"]
    assert not loop.failure_thread.is_alive()


def test_a_step_without_writes_counts_no_latency():
    loop = ControlLoop(Host(writes=False), threading.Event())
    loop.tick()
    assert (loop.iterations, loop.writes, list(loop.latencies_ms)) == (1, 0, [])


def test_a_failed_step_counts_nothing_and_raises():
    loop = ControlLoop(Host(fail=True), threading.Event())
    with pytest.raises(UnavailableError):
        loop.tick()
    assert (loop.iterations, loop.writes) == (0, 0)


def test_learned_state_is_saved_when_due():
    host = Host(writes=False)
    loop = ControlLoop(host, threading.Event())
    loop._next_learned_save = 0.0
    loop.tick()
    loop.tick()
    assert host.calls.count("learned") == 1


def test_stats_have_no_percentiles_before_the_first_write():
    stats = ControlLoop(Host(), threading.Event()).stats()
    assert (stats.latency_ms_p50, stats.latency_ms_p99) == (None, None)
    assert stats.control_period_ms == 10.0 and stats.iterations == 0


def test_stats_percentiles_are_hyndman_fan_7():
    loop = ControlLoop(Host(), threading.Event())
    for latency in (1.0, 2.0, 3.0, 10.0):
        loop.latencies_ms.append(latency)
    stats = loop.stats()
    assert stats.latency_ms_p50 == 2.5
    assert stats.latency_ms_p99 == round(percentile([1, 2, 3, 10], 99), 3) == 9.79
    assert not math.isnan(stats.latency_ms_p99)


def test_the_loop_thread_stops_with_its_event():
    stop = threading.Event()
    loop = ControlLoop(Host(), stop)
    loop.start()
    stop.set()
    loop.thread.join(timeout=2)
    loop.failure_thread.join(timeout=2)
    assert not loop.thread.is_alive() and not loop.failure_thread.is_alive()


def test_every_calls_until_stopped():
    stop, called = threading.Event(), threading.Event()
    thread = every(0.001, called.set, stop, "t")
    thread.start()
    assert called.wait(2)
    stop.set()
    thread.join(timeout=2)
    assert not thread.is_alive() and thread.name == "t"
