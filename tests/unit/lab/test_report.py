"""Run results: JSON round trip, CSV, metric declarations, the mean ± CI format; FCT rows."""

from __future__ import annotations

import csv
import json
import math

import pytest

from mpsched.lab.fct import fct_rows, fct_table, load_results
from mpsched.lab.report import (
    METRICS,
    RunResult,
    format_mean_ci,
    load_runs,
    metric_names,
    read_run,
    write_csv,
    write_run,
)
from tests.unit.lab.sample_runs import load_sweep, sample_results


def test_round_trip_dict_and_json(tmp_path):
    results = sample_results()
    r = results[0]
    assert RunResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    path = write_run(tmp_path, results[1])
    assert path.name == "llhd1__hash__run001.json"
    text = path.read_text()
    assert "NaN" not in text and '"jain": null' in text
    back = read_run(path)
    assert math.isnan(back.metrics["jain"]) and back.metrics["goodput_mbps"] == 11.0
    for res in results:
        write_run(tmp_path, res)
    loaded = load_runs(tmp_path)
    assert [(x.scenario, x.policy, x.run) for x in loaded] == [
        ("llhd1", "hash", 0), ("llhd1", "hash", 1), ("llhd1", "llhd", 0), ("lm3", "hash", 0)
    ]  # fmt: skip
    assert loaded[0] == results[0] and loaded[2] == results[2]


def test_from_dict_rejects_malformed():
    with pytest.raises(ValueError, match="malformed"):
        RunResult.from_dict({"scenario": "x"})
    with pytest.raises(ValueError, match="schema"):
        RunResult.from_dict({**sample_results()[3].to_dict(), "schema": 99})


def test_file_names_are_safe(tmp_path):
    r = RunResult("a/b c", "w:1", 7, 0, 1.0)
    assert write_run(tmp_path, r).name == "a_b_c__w_1__run007.json"


def test_write_csv(tmp_path):
    runs_csv, series_csv = write_csv(tmp_path, sample_results())
    rows = list(csv.reader(runs_csv.open()))
    assert rows == [
        ["scenario", "policy", "run", "seed", "duration_s", "cpu_bound",
         "goodput_mbps", "jain", "rtt_p50_ms", "custom"],
        ["llhd1", "hash", "0", "1", "20.0", "", "9.0", "0.9", "20.0", ""],
        ["llhd1", "hash", "1", "2", "20.0", "", "11.0", "", "22.0", ""],
        ["llhd1", "llhd", "0", "1", "20.0", "", "12.0", "0.95", "15.0", "3.0"],
        ["lm3", "hash", "0", "1", "60.0", "", "5.0", "", "", ""],
    ]  # fmt: skip
    series = list(csv.reader(series_csv.open()))
    assert series[0] == ["scenario", "policy", "run", "series", "t_s", "value"]
    assert series[1:4] == [
        ["llhd1", "hash", "0", "path1", "0.5", "6.0"],
        ["llhd1", "hash", "0", "path1", "1.5", "7.0"],
        ["llhd1", "hash", "0", "path2", "0.5", "3.0"],
    ]
    assert len(series) == 1 + 6 + 2 + 2


def test_metric_order_and_directions():
    assert metric_names(sample_results()) == ["goodput_mbps", "jain", "rtt_p50_ms", "custom"]
    directions = {m.name: m.higher_is_better for m in METRICS}
    assert directions["goodput_mbps"] and directions["jain"] and directions["goodput_frac"]
    for lower in ("fct_mean_s", "rtt_p50_ms", "ooo_packets", "reorder_degree", "retrans"):
        assert directions[lower] is False


def test_format_mean_ci():
    assert format_mean_ci(10.0, 12.706205) == "10.0 ± 12.7"
    assert format_mean_ci(9.56, 0.1234) == "9.56 ± 0.12"
    assert format_mean_ci(0.9, math.nan) == "0.900"
    assert format_mean_ci(1234.5, 10.0) == "1234 ± 10"
    assert format_mean_ci(0.0, 0.0) == "0.00 ± 0.00"
    assert format_mean_ci(2.5e7, 1e6) == "2.5e+07 ± 1e+06"


# -- FCT per size bucket, load sweeps ---------------------------------------------------------


def test_bucket_metrics_are_ranked_and_ordered():
    directions = {m.name: m.higher_is_better for m in METRICS}
    for b in ("lt100k", "100k_1m", "gt1m"):
        assert directions[f"fct_{b}_mean_s"] is False and directions[f"slowdown_{b}_p99"] is False
        assert directions[f"completed_frac_{b}"] is True and directions[f"flows_{b}"] is None
    assert directions["offered_load_pct"] is None and directions["slowdown_mean"] is False
    names = metric_names(load_sweep())
    assert names.index("goodput_mbps") < names.index("fct_lt100k_mean_s") < names.index(
        "offered_load_pct")


def test_fct_rows_sum_up_buckets_and_goodput():
    rows = fct_rows(load_sweep())
    assert [(r.scenario, r.policy, r.load_pct) for r in rows] == [
        ("asym-load30", "ecmp", 30), ("asym-load70", "ecmp", 70),
        ("asym-load30", "letflow", 30), ("asym-load70", "letflow", 70),
    ]  # fmt: skip
    row = rows[0]
    assert (row.runs, row.cpu_bound) == (2, 1)
    assert row.goodput_mbps[0] == pytest.approx(6.5)
    mean, ci = row.buckets["lt100k"]["fct_mean_s"]
    assert mean == pytest.approx(1.05) and ci == pytest.approx(12.706205 * 0.05)
    assert set(row.buckets) == {"lt100k"}
    assert json.loads(json.dumps(row.to_dict()))["buckets"]["lt100k"]["flows"] == [40.0, 0.0]
    assert math.isnan(row.fct_p99_s[0])  # no run has the overall metric
    table = fct_table(rows)
    assert table.splitlines()[2].startswith("| asym-load30 | ecmp | 30 | 2 (1\u2020) | 6.5 ± 6.4")


def test_fct_results_are_read_back_from_the_runners_tree(tmp_path):
    for r in load_sweep():
        write_run(tmp_path / r.scenario / r.policy / f"run{r.run}", r)
    got = load_results(tmp_path)
    assert len(got) == 8 and {r.scenario for r in got} == {"asym-load30", "asym-load70"}
    assert [r.policy for r in fct_rows(got)].count("ecmp") == 2
