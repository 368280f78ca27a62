"""src/mpsched/controller/model/loop.py: the loop's statistics as GET /decisions shows them."""

from __future__ import annotations

import pydantic
import pytest

from mpsched.controller.model.loop import LoopStats


def test_the_governor_fields_are_optional():
    stats = LoopStats(iterations=3, writes=1, latency_ms_p50=1.5, latency_ms_p99=None,
                      control_period_ms=100)
    assert stats.model_dump() == {
        "iterations": 3, "writes": 1, "latency_ms_p50": 1.5, "latency_ms_p99": None,
        "control_period_ms": 100, "step_budget_pct_now": None, "cpu_pct": None,
    }
    assert isinstance(stats.control_period_ms, int)  # an int stays an int


def test_a_missing_count_is_named():
    with pytest.raises(pydantic.ValidationError, match="writes"):
        LoopStats(iterations=3, latency_ms_p50=None, latency_ms_p99=None,  # type: ignore[call-arg]
                  control_period_ms=100)
