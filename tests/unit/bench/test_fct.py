"""`make bench-fct`'s figures from run results (mpsched/bench/fct.py), without a testbed."""

from __future__ import annotations

import math

import pytest

from mpsched.bench import fct as bench
from mpsched.lab.fct import fct_rows
from mpsched.lab.report import RunResult


def run(policy: str, seed: int, short: float, p99: float, goodput: float) -> RunResult:
    return RunResult("asymmetric", policy, seed, seed, 30.0, metrics={
        "fct_lt100k_mean_s": short, "fct_p99_s": p99, "goodput_mbps": goodput,
        "goodput_frac": goodput / 26, "offered_load_pct": 70.0})


RESULTS = [
    *(run("ecmp", s, 1.0, 20.0, 12.0) for s in (1, 2)),
    *(run("letflow", s, 0.4, 18.0, 15.0) for s in (1, 2)),
    run("ca", 1, 0.2, 10.0, 15.0), run("ca", 2, 0.3, 12.0, 16.5),
]


def test_figures_are_ratios_of_the_means():
    got = bench.figures(fct_rows(RESULTS), "ca")
    assert got["fct_short_ratio_vs_ecmp"] == pytest.approx(0.25)
    assert got["fct_short_ratio_vs_letflow"] == pytest.approx(0.625)
    assert got["fct_p99_ratio_vs_letflow"] == pytest.approx(11 / 18)
    assert got["goodput_ratio_vs_letflow"] == pytest.approx(1.05)


def test_a_missing_policy_gives_nan():
    got = bench.figures(fct_rows([r for r in RESULTS if r.policy != "letflow"]), "ca")
    assert math.isnan(got["fct_short_ratio_vs_letflow"])
    assert got["fct_short_ratio_vs_ecmp"] == pytest.approx(0.25)


def test_paired_table_names_each_baseline():
    text = bench.paired_table(RESULTS, "ca")
    assert "vs ecmp" in text and "vs letflow" in text
    assert "0.625" in text  # short FCT vs letflow: (0.5 + 0.75) / 2, 2 seeds
