"""src/mpsched/controller/model/paths.py: a path's state, its BDP, and nothing measured until
the estimators say so."""

from __future__ import annotations

import dataclasses

import pytest

from mpsched.controller.model.paths import PathCounters, PathState


def test_bdp():
    # 10 Mbit/s * 20 ms = 1.25e6 B/s * 0.02 s = 25000 bytes
    assert PathState(1, True, srtt_ms=20, capacity_mbps=10).bdp_bytes() == pytest.approx(25000)
    assert PathState(1, True, srtt_ms=20).bdp_bytes() is None
    assert PathState(1, True, capacity_mbps=10).bdp_bytes() is None


def test_a_new_path_has_no_measurements():
    state = PathState(3, False)
    measured = {f.name for f in dataclasses.fields(PathState)} - {"path_id", "alive"}
    assert all(getattr(state, name) in (None, ()) for name in measured)


def test_states_are_values():
    counters = PathCounters(t_s=1.5, packets=10, bytes=15000, lost=1, flow_ooo=0)
    a = PathState(1, True, srtt_ms=20.0, counters=counters)
    assert a == PathState(1, True, srtt_ms=20.0, counters=counters)
    assert hash(a) == hash(PathState(1, True, srtt_ms=20.0, counters=counters))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.alive = False  # type: ignore[misc]
