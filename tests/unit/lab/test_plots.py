"""PNG plots of run results: the averaged series, the files written, load sweeps."""

from __future__ import annotations

import math

import pytest

from mpsched.lab.plots import (
    load_family,
    mean_series,
    plot_paired,
    plot_timeline,
    write_load_plots,
    write_plots,
)
from mpsched.lab.report import RunResult
from tests.unit.lab.sample_runs import load_sweep, sample_results


def test_mean_series_over_runs():
    runs = [
        RunResult("s", "p", 0, 0, 2.0, series={"total": [(0.0, 10.0), (2.0, 10.0)]}),
        RunResult("s", "p", 1, 0, 2.0, series={"total": [(0.0, 20.0), (1.0, 20.0)]}),
    ]
    t, mean, ci = mean_series(runs, "total", points=3)
    assert t == [0.0, 1.0, 2.0]
    assert mean == [15.0, 15.0, 10.0]  # the second run ends at t = 1
    assert ci[0] == pytest.approx(12.706205 * 5.0) and math.isnan(ci[2])
    assert mean_series(runs, "path9") == ([], [], [])


def test_write_plots(tmp_path):
    written = write_plots(tmp_path, sample_results())
    assert sorted(p.name for p in written) == [
        "fct_llhd1.png",
        "reorder_cdf_llhd1.png",
        "rtt_cdf_llhd1.png",
        "throughput_llhd1_hash.png",
        "throughput_llhd1_llhd.png",
    ]
    for p in written:
        data = p.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5000, p
    assert sorted(tmp_path.iterdir()) == sorted(written)


def test_write_plots_without_data_writes_nothing(tmp_path):
    results = [RunResult("s", "p", 0, 0, 1.0, metrics={"goodput_mbps": 1.0})]
    assert write_plots(tmp_path / "plots", results) == []
    assert not (tmp_path / "plots").exists()


def test_fct_load_plots_per_bucket_with_two_loads_or_more(tmp_path):
    assert load_family("asym-load70") == "asym" and load_family("asym-load7.5") == "asym"
    assert load_family("llhd-1") == "llhd-1"
    written = write_load_plots(tmp_path, load_sweep())
    assert [p.name for p in written] == ["fct_load_asym_lt100k.png"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    one_load = [r for r in load_sweep() if r.metrics["offered_load_pct"] == 30]
    assert write_load_plots(tmp_path / "none", one_load) == []


def test_paired_plot_leaves_the_reference_and_non_finite_ratios_out(tmp_path):
    ratios = {"ca": ((0.6, 0.1), 5), "letflow": ((1.0, 0.0), 5), "rr": ((math.nan, math.nan), 0)}
    out = plot_paired(tmp_path / "p.png", ratios, "letflow", "t")
    assert out is not None and out.read_bytes().startswith(b"\x89PNG")
    assert plot_paired(tmp_path / "q.png", {"letflow": ((1.0, 0.0), 5)}, "letflow", "t") is None
    assert not (tmp_path / "q.png").exists()


def test_a_timeline_needs_two_bins_and_shades_the_window(tmp_path):
    points = {"ecmp": [(2.5, 0.3, 0.1), (7.5, 0.9, math.nan)], "ca": [(2.5, 0.2, 0.1)]}
    out = plot_timeline(tmp_path / "t.png", points, "t", shade=(5.0, 10.0))
    assert out is not None and out.read_bytes().startswith(b"\x89PNG")
    assert plot_timeline(tmp_path / "u.png", {"ca": [(2.5, 0.2, 0.1)]}, "t") is None
    assert not (tmp_path / "u.png").exists()
