"""src/mpsched/controller/policies/base.py: quantise, the jitter indicator and the rules every
policy keeps (parameters: test_params.py; the registry: test_registry.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.base import jitter_indicator, quantise
from tests.unit.controller.policies.helpers import NAMES


def test_quantise():
    # largest -> 255; 5/10 * 255 = 127.5 -> 128; 0.01/10 * 255 = 0.255 -> 0 -> raised to 1
    assert quantise({1: 10.0, 2: 5.0, 3: 0.01, 4: 0.0}) == {1: 255, 2: 128, 3: 1, 4: 0}
    assert quantise({1: 0.0, 2: 0.0}) == {1: 0, 2: 0}
    assert quantise({1: 3.0, 2: 1.0}, max_weight=100) == {1: 100, 2: 33}
    with pytest.raises(ValueError):
        quantise({1: -1.0})


def test_jitter_indicator():
    # [1, 2, 3, 6]: avg 3, range 5 -> (6 - 3) / 5 = 0.6
    assert jitter_indicator([1, 2, 3, 6]) == pytest.approx(0.6)
    # [4, 2, 0]: avg 2, range 4 -> (0 - 2) / 4 = -0.5
    assert jitter_indicator([4, 2, 0]) == pytest.approx(-0.5)
    assert jitter_indicator([2, 2, 2]) == 0.0  # range 0
    assert jitter_indicator([5]) == 0.0


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_policy_rules(name):
    # nothing measured: never crashes, dead paths get 0
    paths = [PathState(1, True), PathState(2, False), PathState(3, True)]
    decision = make_policy(name).decide(paths, 0.0)
    assert decision.weights[2] == 0
    assert any(decision.weights.values())
    assert all(w >= 0 for w in decision.weights.values())
    # no path alive: equal weights over all paths, not all zeros
    dead = [PathState(1, False, srtt_ms=10), PathState(2, False)]
    decision = make_policy(name).decide(dead, 0.0)
    assert decision.weights == {1: 1.0, 2: 1.0}
    assert "no path alive" in decision.reason
    assert isinstance(decision.mode, Mode)
