"""bench/scale_measure.py: what bench-scale measures of a running controller (no BMv2)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from mpsched.bench.scale_measure import fill_histories
from mpsched.controller.telemetry.estimators import EstimatorSettings, PathEstimator


def test_histories_filled_to_the_recorders_steady_state():
    """fill_histories: each path holds its share of the budget, a period apart, newest last."""
    settings = EstimatorSettings(history=120, history_budget=40)
    ests = {(p, "a->b"): PathEstimator(p, settings) for p in (1, 2)}
    ests[(1, "a->b")].record(1000.0)  # one already recorded
    ctl = SimpleNamespace(intake=SimpleNamespace(estimators=ests, settings=settings),
                          settings=SimpleNamespace(telemetry_period=1.0), _lock=threading.Lock())
    assert fill_histories(ctl, 2) == (20, 40)
    times = [s["t"] for s in ests[(2, "a->b")].history]
    assert len(times) == 20 and times == sorted(times) and times[1] - times[0] == pytest.approx(1)
    times = [s["t"] for s in ests[(1, "a->b")].history]
    assert times[-2:] == [999.0, 1000.0] and times == sorted(times)


def test_histories_filled_to_the_share_of_every_path():
    """Two of four paths reported so far: each gets a quarter of the budget, not a half."""
    settings = EstimatorSettings(history=120, history_budget=40)
    ests = {(p, "a->b"): PathEstimator(p, settings) for p in (1, 2)}
    ctl = SimpleNamespace(intake=SimpleNamespace(estimators=ests, settings=settings),
                          settings=SimpleNamespace(telemetry_period=1.0), _lock=threading.Lock())
    assert fill_histories(ctl, 4) == (10, 20)
