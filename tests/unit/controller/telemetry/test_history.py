"""src/mpsched/controller/telemetry/history.py: a path's snapshots packed and read back, trimmed to
a
share of the budget, and the intake's recorder dividing that budget over the paths."""

from __future__ import annotations

import gc
import sys

import pytest

from mpsched.controller.telemetry.estimators import EstimatorSettings, PathEstimator
from mpsched.controller.telemetry.history import MIN_KEEP, NAMES, History, history_keep
from tests.unit.controller.telemetry.helpers import report


def snap(t, **over):
    base = {name: None for name in NAMES}
    return {**base, "t": t, **over}


def test_snapshots_read_back_as_recorded():
    e = PathEstimator(1)
    e.add_report(report(1.0, 0, 0))
    e.add_report(report(2.0, 10, 125_000, reordered=3))
    taken = e.record(2.5)
    assert tuple(taken) == NAMES  # the snapshot's fields are the packed ones, in order
    (back,) = list(e.history)
    assert back == taken
    assert back["alive"] is True and back["reordered"] == 3 and back["srtt_ms"] is None
    assert isinstance(back["reordered"], int) and isinstance(back["goodput_mbps"], float)


def test_none_flags_counts_and_floats_keep_their_kind():
    h = History()
    h.append(snap(1.0, alive=False, inflight_bytes=2**40, loss=0.25, retrans=0), keep=5)
    (back,) = list(h)
    assert back["alive"] is False and back["inflight_bytes"] == 2**40 and back["retrans"] == 0
    assert back["loss"] == 0.25 and back["owd_ms"] is None


def test_trimmed_to_keep_and_read_since():
    h = History()
    for t in range(6):
        h.append(snap(float(t)), keep=4)
    assert [s["t"] for s in h] == [2.0, 3.0, 4.0, 5.0]
    assert [s["t"] for s in h.since(3.0)] == [4.0, 5.0]
    h.prepend([snap(0.5), snap(1.5)])
    assert [s["t"] for s in h][:3] == [0.5, 1.5, 2.0]
    with pytest.raises(KeyError):
        h.append({"t": 9.0}, keep=4)


def test_packed_far_smaller_than_the_dict_and_not_tracked_by_the_collector():
    h = History()
    h.append(snap(1.0, srtt_ms=12.3, goodput_mbps=2.1, alive=True), keep=1)
    assert sys.getsizeof(h._rows[0]) <= 160 and not gc.is_tracked(h._rows[0])


def test_budget_divided_over_the_paths():
    assert history_keep(24, 120, 500_000) == 120  # a small fabric keeps the whole history
    assert history_keep(16_128, 120, 500_000) == 31  # 64 leaves, 4 spines
    assert history_keep(10**7, 120, 500_000) == MIN_KEEP
    assert history_keep(0, 120, 500_000) == 120


def test_recording_keeps_the_share():
    settings = EstimatorSettings(history=120, history_budget=30)
    ests = [PathEstimator(p, settings) for p in (1, 2, 3)]
    keep = history_keep(len(ests), settings.history, settings.history_budget)
    for k in range(15):
        for e in ests:
            e.record(float(k), keep)
    assert keep == MIN_KEEP and all(len(e.history) == MIN_KEEP for e in ests)


def test_a_large_fabric_records_its_paths_in_turn():
    """With more paths than history_per_period, each period records that many, the next
    period the next ones, wrapping: every path once per ceil(5 / 2) = 3 periods here."""
    from mpsched.controller.telemetry.intake import TelemetryIntake

    intake = TelemetryIntake.__new__(TelemetryIntake)  # only the recorder's state
    intake.settings = EstimatorSettings(history=120, history_budget=1000, history_per_period=2)
    intake.estimators = {(p, "a->b"): PathEstimator(p, intake.settings) for p in range(1, 6)}
    intake._record_next = 0
    turns = []
    for _ in range(4):
        due, keep = intake.due_records()
        turns.append([e.path_id for e in due])
        assert keep == 120
    assert turns == [[1, 2], [3, 4], [5, 1], [2, 3]]
    intake.settings = EstimatorSettings(history_per_period=5)
    assert [e.path_id for e in intake.due_records()[0]] == [1, 2, 3, 4, 5]
