"""The quiet phase of `make bench-fabric` without a testbed (src/mpsched/bench/fabric_quiet.py)."""

from __future__ import annotations

import json
import math

from mpsched.bench import fabric_quiet as quiet
from mpsched.lab.cpu import CpuSample, CpuTimes


def test_busy_is_the_rest_of_the_idle_share_between_first_and_last_sample():
    samples = [CpuSample(0.0, CpuTimes(idle=0, total=0)),
               CpuSample(1.0, CpuTimes(idle=50, total=100)),
               CpuSample(2.0, CpuTimes(idle=150, total=200))]
    assert quiet.busy_of(samples) == 25.0
    assert math.isnan(quiet.busy_of(samples[:1]))


def test_the_line_sums_the_switches_shares():
    q = quiet.Quiet("ca", 30.0, {"bmv2:leaf1": 2.5, "bmv2:spine1": 1.5, "controller": 3.0})
    assert q.line() == "  quiet ca         busy  30.0 %  switches   4.0 %  controller  3.0 %"


def test_read_quiet_without_the_phase_is_nan(tmp_path):
    lines, value = quiet.read_quiet(tmp_path)
    assert lines == [] and math.isnan(value)


def test_read_quiet_gives_the_lines_and_the_difference(tmp_path):
    (tmp_path / "quiet").mkdir()
    (tmp_path / "quiet" / quiet.QUIET_FILE).write_text(json.dumps(
        {"lines": ["a", "b"], quiet.KEY: 4.5}))
    lines, value = quiet.read_quiet(tmp_path)
    assert lines[1:] == ["a", "b"] and value == 4.5
