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
