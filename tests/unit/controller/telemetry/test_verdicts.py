"""telemetry/verdicts.py: when a silent path is dead, and by which probe interval each
sender's estimators judge its paths busy."""

from __future__ import annotations

import pytest

from mpsched.controller.telemetry.config import TelemetryConfig
from mpsched.controller.telemetry.verdicts import (
    REPORTS_PER_VERDICT,
    sender_settings,
    verdict_settings,
)
from mpsched.controller.telemetry.windows import EstimatorSettings


def test_a_path_may_go_silent_for_its_idle_pairs_probes_before_it_is_dead():
    est = EstimatorSettings()  # dead after 1 s
    slow = TelemetryConfig(idle_probe_interval_s=0.5)
    switches = {"leaf1": slow, "leaf2": slow}
    assert verdict_settings(est, slow, switches, regimes=True).dead_after_s == pytest.approx(
        REPORTS_PER_VERDICT * 0.5)
    assert verdict_settings(est, slow, switches, regimes=False).dead_after_s == 1.0
    default = TelemetryConfig()  # 4 x 200 ms is within the default 1 s
    assert verdict_settings(est, default, {"leaf1": default}, regimes=True).dead_after_s == 1.0


def test_each_sender_judges_busy_paths_by_its_interval_for_the_pair():
    capped = TelemetryConfig(probe_max_pps=100).for_targets(6)  # probes every 60 ms
    plain = TelemetryConfig()
    got = sender_settings(EstimatorSettings(), {"leaf1": plain, "leaf2": capped})
    assert got["leaf1", True].probe_interval_s == 0.01
    assert got["leaf1", False].probe_interval_s == 0.2
    assert got["leaf2", True].probe_interval_s == pytest.approx(0.06)
    assert got["leaf2", False].probe_interval_s == 0.2
