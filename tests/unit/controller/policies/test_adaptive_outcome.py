"""src/mpsched/controller/policies/adaptive_outcome.py: a dwell's measured outcome (loss weighed by
bytes,
delay by delivery) and its score against the QoS target."""

from __future__ import annotations

import pytest

from mpsched.controller.policies.adaptive_outcome import (
    Measured,
    PathTally,
    score,
    summarise,
)
from mpsched.controller.policies.base import QosTarget


def test_summarise_weighs_loss_by_bytes_and_delay_by_delivery():
    tallies = {
        1: PathTally(packets=1000, bytes=1_000_000, lost=0, ooo=10, owd_sum=20.0, owd_n=10),
        2: PathTally(packets=100, bytes=5_000, lost=20, ooo=0, owd_sum=300.0, owd_n=10),
    }
    m = summarise(tallies, seconds=2.0, capacity_mbps=10.0)
    assert m.goodput_mbps == pytest.approx(8 * 1_005_000 / 2 / 1e6)  # 4.02
    assert m.goodput_frac == pytest.approx(0.402)
    # lost bytes: 20 packets * 50 bytes = 1000 -> 1000 / (1_005_000 + 1000)
    assert m.loss == pytest.approx(1000 / 1_006_000)
    assert m.reorder == pytest.approx(10 / 1100)
    # delay: (2 ms * 1e6 + 30 ms * 5e3) / 1.005e6
    assert m.delay_ms == pytest.approx((2 * 1_000_000 + 30 * 5_000) / 1_005_000)


def test_score_graded_and_met():
    m = Measured(2.0, 8.0, 0.8, 30.0, 0.02, 0.0)
    target = QosTarget(min_goodput_frac=0.9, max_delay_ms=20.0, max_loss=0.01, max_reorder=0.01)
    u, met, terms = score(m, target, graded=True)
    assert terms == pytest.approx(
        {"goodput_frac": 0.8 / 0.9, "delay_ms": 20 / 30, "loss": 0.5, "reorder": 1.0}
    )
    assert u == pytest.approx(0.8 / 0.9 * 2 / 3 * 0.5) and met is False
    assert score(m, target, graded=False)[0] == 0.0
    easy = QosTarget(min_goodput_frac=0.5, max_loss=0.05)
    assert score(m, easy, graded=False)[:2] == (1.0, True)
    # an unmeasured metric does not count
    assert score(Measured(2.0, 8.0, None, None, None, None), target, True)[0] == 1.0
