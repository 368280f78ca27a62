"""src/mpsched/controller/policies/availability.py: a path's availability is its capacity until it
is queued,
with a neutral prior for an unmeasured path (docs/control-loop.md, "Idle paths: demand is not
ability")."""

from __future__ import annotations

import pytest

from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.availability import (
    BUSY_QDELAY_MS,
    availability_mbps,
    loaded,
)


def test_availability_is_capacity_until_the_path_is_queued():
    idle = PathState(1, True, goodput_mbps=0.03, capacity_mbps=10.0, owd_ms=0.5, loss_rate=0.1)
    queued = PathState(2, True, goodput_mbps=3.0, capacity_mbps=10.0, owd_ms=BUSY_QDELAY_MS)
    assert availability_mbps([idle, queued]) == pytest.approx({1: 9.0, 2: 3.0})
    assert loaded(idle) is False and loaded(queued) is True
    assert loaded(PathState(3, True, goodput_mbps=8.5, capacity_mbps=10.0)) is True
    assert loaded(PathState(3, True, goodput_mbps=8.5)) is None


def test_availability_neutral_prior_for_an_unmeasured_path():
    paths = [
        PathState(1, True, capacity_mbps=10.0),
        PathState(2, True, capacity_mbps=6.0),
        PathState(3, True),  # nothing measured
        PathState(4, True, goodput_mbps=0.5, owd_ms=0.2),  # unloaded, capacity unknown
    ]
    assert availability_mbps(paths) == pytest.approx({1: 10.0, 2: 6.0, 3: 8.0, 4: 8.0})
    # nothing but goodputs: the goodput is all there is
    only_gp = [PathState(1, True, goodput_mbps=5.0), PathState(2, True)]
    assert availability_mbps(only_gp) == pytest.approx({1: 5.0, 2: 5.0})
    assert availability_mbps([PathState(1, True)]) == {1: None}
