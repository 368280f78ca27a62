"""`make bench-sched`'s figures from a runs.csv (no runs)."""

from __future__ import annotations

import math

import pytest

from mpsched.bench.sched import figures, read_runs
from mpsched.lab.report import RunResult, write_csv


def test_read_runs_and_figures(tmp_path):
    rows = [("ecmp", 0.6, 5.0, 10.0), ("ecmp", 0.7, 7.0, 30.0), ("rr", 0.5, 6.0, 1000.0),
            ("letflow", 0.9, 4.0, 50.0), ("letflow", 0.95, 4.0, float("nan"))]
    results = [RunResult("s", p, k, k, 20.0, metrics={"goodput_frac": g, "fct_mean_s": f,
                                                      "ooo_packets": o})
               for k, (p, g, f, o) in enumerate(rows)]
    runs_csv, _ = write_csv(tmp_path, results)
    runs = read_runs(runs_csv)
    assert runs["letflow"]["ooo_packets"] == [50.0]  # the NaN cell left out
    assert "run" not in runs["ecmp"] and runs["ecmp"]["goodput_frac"] == [0.6, 0.7]
    best, values = figures(runs)
    assert best == "letflow"
    assert values == pytest.approx({"goodput_frac_best": 0.925,
                                    "fct_ratio_best_vs_ecmp": 4.0 / 6.0,
                                    "ooo_ratio_best_vs_rr": 0.05})
    assert not any(math.isnan(v) for v in values.values())
