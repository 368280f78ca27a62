"""`make bench-dataplane`: the maximum-forwarding-rate sweep (pure logic, on model switches)
and, end to end and short, the three programs forwarding with the key line printed."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import require

pytestmark = pytest.mark.integration


def test_dataplane_bench_runs_every_program(artifacts):
    require("root", "simple_switch_grpc")
    from mpsched.bench.dataplane_programs import ipv4_artifacts, minimal_artifacts

    if not all(p.is_file() for p in (*minimal_artifacts(), *ipv4_artifacts())):
        pytest.skip("reference programs not compiled; run `make p4` (needs p4c)")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mpsched.bench.dataplane",
            "--seconds",
            "0.5",
            "--rounds",
            "1",
            "--step",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rates = [
        float(r) for r in re.findall(r"round 1 \w+\s+(\d+) pkt/s max forwarding rate", out.stdout)
    ]
    assert len(rates) == 3 and min(rates) > 500, out.stdout
    assert re.search(r"\ndataplane_pps_ratio=\d+\.\d{3}\n$", out.stdout), out.stdout


def test_cpu_plan_and_cpu_seconds():
    import os

    from mpsched.bench.dataplane_rig import cpu_plan, cpu_seconds

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


def model_switch(capacity: float, collapse: float = 1.0, sender_max: float = 1e9):
    """A switch that forwards up to `capacity` pkt/s and, past it, only `collapse` of it;
    behind a sender that sends at most `sender_max`."""
    from mpsched.bench.dataplane_sweep import Trial

    offered: list[float] = []

    def run(rate: float) -> Trial:
        offered.append(rate)
        sent = min(rate, sender_max)
        delivered = sent if sent <= capacity else capacity * collapse
        return Trial(rate, sent, delivered, min(1.0, delivered / capacity))

    return run, offered


def test_sweep_finds_capacity_within_a_fine_step():
    from mpsched.bench.dataplane_sweep import max_forwarding_rate

    run, offered = model_switch(30_000)
    result = max_forwarding_rate(run, 4000, step=1.25, fine=2)
    assert result.saturated
    # the best load is below capacity by less than one fine step (1.25 ** (1/3))
    assert 30_000 / 1.25 ** (1 / 3) <= result.best.delivered <= 30_000
    # coarse loads 4000 * 1.25**k, k = 0..11: the last two (37 253, 46 566) lose, so the
    # sweep stops there; then two fine loads above the best coarse one (29 802)
    assert offered[:12] == pytest.approx([4000 * 1.25**k for k in range(12)])
    assert offered[12:] == pytest.approx([4000 * 1.25 ** (9 + k / 3) for k in (1, 2)])


def test_sweep_takes_the_peak_when_the_switch_collapses_past_it():
    from mpsched.bench.dataplane_sweep import max_forwarding_rate

    run, _ = model_switch(25_000, collapse=0.6)
    result = max_forwarding_rate(run, 5000)
    assert result.saturated and 25_000 / 1.25 <= result.best.delivered <= 25_000
    assert result.best.loss <= 0.01


def test_sweep_that_never_loses_says_so():
    from mpsched.bench.dataplane_sweep import max_forwarding_rate

    run, offered = model_switch(1e9, sender_max=50_000)
    result = max_forwarding_rate(run, 10_000, step=2, fine=0)
    assert not result.saturated
    assert result.best.delivered == 50_000 and offered == [10_000, 20_000, 40_000, 80_000]


def test_sweep_rejects_bad_parameters():
    from mpsched.bench.dataplane_sweep import max_forwarding_rate

    run, _ = model_switch(1000)
    for kwargs in ({"start": 0}, {"start": 10, "step": 1.0}, {"start": 10, "fine": -1}):
        with pytest.raises(ValueError):
            max_forwarding_rate(run, **kwargs)


def test_trial_loss_and_cost():
    from mpsched.bench.dataplane_sweep import Trial

    t = Trial(offered=1000, sent=1000, delivered=900, cpu=0.5)
    assert t.loss == pytest.approx(0.1) and t.sender_kept_up
    assert t.cpu_us_per_packet == pytest.approx(0.5 / 900 * 1e6)
    assert not Trial(1000, 900, 900, 0.1).sender_kept_up
    assert Trial(0, 5, 5, 0.1).sender_kept_up and Trial(10, 0, 0, 0).loss == 0
