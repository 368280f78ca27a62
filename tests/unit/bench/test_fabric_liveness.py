"""An edge's liveness replayed from what it received (src/mpsched/bench/fabric_liveness.py)."""

from __future__ import annotations

import pytest

from mpsched.bench import fabric_liveness as fl
from mpsched.testing.tagcap import TagFrame


def fb(t: float, src: int, dst: int, carrier: int, fb_path: int, age_s: float = 0.0
       ) -> TagFrame:
    return TagFrame(t, (src, dst, carrier), False, fb_path, age_s)


# edge 1 hears from edge 4 about its path 1 towards 4 every 20 ms until 1.0, then at 1.2
FRAMES = [fb(0.02 * i, 4, 1, 1, 1) for i in range(51)] + [
    fb(1.2, 4, 1, 1, 1, age_s=0.004),
    fb(0.5, 4, 1, 1, 2, age_s=0.3),   # about path 2: delivered at 0.2
    fb(0.7, 4, 1, 1, 0),              # no feedback in it
]


def test_last_seen_is_the_latest_delivery_vouched_for():
    s = fl.signs(FRAMES)
    assert s.last_seen((1, 4, 1), 0.5) == pytest.approx(0.5)
    assert s.last_seen((1, 4, 1), 1.25) == pytest.approx(1.196)
    assert s.last_seen((1, 4, 2), 0.49) is None
    assert s.last_seen((1, 4, 2), 0.6) == pytest.approx(0.2)
    assert s.alive((1, 4, 1), 1.04, 0.05) and not s.alive((1, 4, 1), 1.06, 0.05)


def test_an_older_sign_does_not_move_last_seen_back():
    s = fl.signs([fb(1.0, 4, 1, 1, 1), fb(1.1, 4, 1, 2, 1, age_s=0.5)])
    assert s.last_seen((1, 4, 1), 1.2) == pytest.approx(1.0)


def test_dead_spans_between_the_signs():
    s = fl.signs(FRAMES)
    assert fl.dead_spans(s, (1, 4, 1), 0.05, 0.0, 2.0) == [
        (pytest.approx(1.05), pytest.approx(1.2)), (pytest.approx(1.246), 2.0)]
    assert fl.dead_spans(s, (1, 4, 2), 0.05, 0.0, 1.0) == [(0.0, 1.0)]


def test_states_at_the_late_frames():
    s = fl.signs(FRAMES)
    got = fl.states_at(s, [(100.0, (1, 4, 2))], down_t=1.0, paths=2, dead_after_s=0.05)
    assert got == [(100.0, (1, 4, 2), {1: False, 2: False})]
