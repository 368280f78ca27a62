"""`make bench-dataplane` end to end, short: both programs forward, the key line is printed."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from .conftest import require

pytestmark = pytest.mark.integration


def test_dataplane_bench_runs_both_programs(artifacts):
    require("root", "simple_switch_grpc")
    from mpsched.bench.dataplane import minimal_artifacts

    if not all(p.is_file() for p in minimal_artifacts()):
        pytest.skip("minimal program not compiled; run `make p4` (needs p4c)")
    out = subprocess.run(
        [sys.executable, "-m", "mpsched.bench.dataplane", "--seconds", "1", "--rounds", "1"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rates = [float(r) for r in re.findall(r"round 1 \w+\s+(\d+) pkt/s", out.stdout)]
    assert len(rates) == 2 and min(rates) > 500, out.stdout
    assert re.search(r"\ndataplane_pps_ratio=\d+\.\d{3}\n$", out.stdout), out.stdout


def test_cpu_plan_and_cpu_seconds():
    import os

    from mpsched.bench.dataplane import cpu_plan, cpu_seconds

    assert cpu_plan(False) is None
    plan = cpu_plan(True)
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        assert plan is None
    else:
        assert plan == (allowed[0], allowed[-1]) and plan[0] != plan[1]
    t0 = cpu_seconds(os.getpid())
    sum(i * i for i in range(300_000))
    assert cpu_seconds(os.getpid()) >= t0 >= 0
