"""The opt-in memory diagnostic (src/mpsched/controller/runtime/memtrace.py)."""

from __future__ import annotations

import logging
import re
import time
import tracemalloc

import pytest

from mpsched.controller.runtime import memtrace


@pytest.fixture
def traced():
    was = tracemalloc.is_tracing()
    tracemalloc.start()
    yield
    if not was:
        tracemalloc.stop()


def test_off_unless_the_environment_asks():
    assert memtrace.start_from_env({}) is None
    assert memtrace.start_from_env({memtrace.ENV_PERIOD: ""}) is None


@pytest.mark.parametrize("value", ["0", "-5", "often"])
def test_a_bad_period_is_named_and_nothing_runs(value, caplog):
    with caplog.at_level(logging.WARNING, logger=memtrace.log.name):
        assert memtrace.start_from_env({memtrace.ENV_PERIOD: value}) is None
    assert memtrace.ENV_PERIOD in caplog.text


def test_the_sample_line_has_rss_traced_and_threads(traced):
    line = memtrace.sample_line()
    figures = dict(re.findall(r"(\w+)=(-?\d+)", line))
    assert int(figures["rss_kb"]) > 0
    assert int(figures["threads"]) >= 1
    assert "traced_kb" in figures
    if memtrace.malloc_figures() is not None:  # glibc
        assert int(figures["malloc_used_kb"]) > 0
        assert int(figures["malloc_arenas"]) >= 1
    assert int(figures["py_blocks"]) > 0
    assert int(figures["smaps_file_kb"]) > 0  # at least the interpreter's own pages


def test_without_tracemalloc_the_line_has_obmalloc_figures():
    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc already on in this process")
    figures = dict(re.findall(r"(\w+)=(-?\d+)", memtrace.sample_line()))
    assert int(figures["py_arenas"]) >= 1  # CPython's obmalloc (sys._debugmallocstats)
    assert int(figures["py_used_kb"]) > 0


def test_obmalloc_figures_read_debugmallocstats_in_kb():
    text = ("# arenas allocated total           =                   12\n"
            "# arenas allocated current         =                    9\n"
            "# bytes in allocated blocks        =            3,513,376\n")
    assert memtrace.obmalloc_figures(text) == {
        "py_arenas": 9, "py_arenas_total": 12, "py_used_kb": 3431}


def test_growth_names_the_site_that_grew(traced):
    base = tracemalloc.take_snapshot()
    kept = [bytearray(64 * 1024) for _ in range(4)]  # this line grows by 256 kB
    lines = memtrace.growth_lines(base, tracemalloc.take_snapshot(), 3)
    assert kept
    assert lines and "test_memtrace.py" in lines[0] and "+256 kB" in lines[0]


def test_a_started_trace_logs_samples_until_stopped(caplog):
    was = tracemalloc.is_tracing()
    with caplog.at_level(logging.INFO, logger=memtrace.log.name):
        # no walk of the objects: in a big test process it takes a good part of a second
        trace = memtrace.start_from_env({memtrace.ENV_PERIOD: "0.01", memtrace.ENV_TYPES: "0"})
        assert trace is not None
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and sum(
                    "memtrace rss_kb=" in r.message for r in caplog.records) < 2:
                trace.stopping.wait(0.05)
        finally:
            trace.stop()
            trace.thread.join(5)
            if not was:
                tracemalloc.stop()
    assert not trace.thread.is_alive()
    assert sum("memtrace rss_kb=" in r.message for r in caplog.records) >= 2


def test_top_zero_samples_without_tracemalloc():
    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc already on in this process")
    trace = memtrace.MemTrace(60.0, top=0)
    trace.start()
    trace.stop()
    trace.thread.join(5)
    assert not tracemalloc.is_tracing()
    line = memtrace.sample_line()
    assert "rss_kb=" in line and "traced_kb" not in line
