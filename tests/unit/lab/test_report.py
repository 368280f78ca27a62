"""Result writers: JSON round trip, CSV, exact Markdown tables, PNG plots."""

from __future__ import annotations

import csv
import json
import math

import pytest

from mpsched.lab.fct import fct_rows, fct_table, load_results
from mpsched.lab.report import (
    METRICS,
    RunResult,
    comparison_table,
    format_mean_ci,
    load_family,
    load_runs,
    mean_series,
    metric_names,
    read_run,
    summary_table,
    write_csv,
    write_load_plots,
    write_plots,
    write_run,
)


def _results() -> list[RunResult]:
    return [
        RunResult(
            "llhd1", "hash", 0, 1, 20.0,
            metrics={"goodput_mbps": 9.0, "jain": 0.9, "rtt_p50_ms": 20.0},
            series={"path1": [(0.5, 6.0), (1.5, 7.0)], "path2": [(0.5, 3.0), (1.5, 2.0)],
                    "total": [(0.5, 9.0), (1.5, 9.0)]},
            fct=[(1000, 0.1), (10000, 0.5), (1000, 0.3)],
            rtt_ms=[10.0, 12.0, 11.0],
            reorder_extents=[1, 2],
        ),
        RunResult(
            "llhd1", "hash", 1, 2, 20.0,
            metrics={"goodput_mbps": 11.0, "jain": math.nan, "rtt_p50_ms": 22.0},
            series={"total": [(0.5, 10.0), (1.5, 12.0)]},
        ),
        RunResult(
            "llhd1", "llhd", 0, 1, 20.0,
            metrics={"custom": 3.0, "goodput_mbps": 12.0, "jain": 0.95, "rtt_p50_ms": 15.0},
            series={"total": [(0.5, 12.0), (1.5, 12.0)]},
            fct=[(1000, 0.05)],
            rtt_ms=[8.0, 9.0],
        ),
        RunResult("lm3", "hash", 0, 1, 60.0, metrics={"goodput_mbps": 5.0}),
    ]  # fmt: skip


def test_round_trip_dict_and_json(tmp_path):
    results = _results()
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
        RunResult.from_dict({**_results()[3].to_dict(), "schema": 99})


def test_file_names_are_safe(tmp_path):
    r = RunResult("a/b c", "w:1", 7, 0, 1.0)
    assert write_run(tmp_path, r).name == "a_b_c__w_1__run007.json"


def test_write_csv(tmp_path):
    runs_csv, series_csv = write_csv(tmp_path, _results())
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
    assert metric_names(_results()) == ["goodput_mbps", "jain", "rtt_p50_ms", "custom"]
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


def test_summary_table_exact():
    # hash goodput: mean 10, s = sqrt(2), h = t(1) * s / sqrt(2) = 12.706205
    assert summary_table(_results()) == (
        "| scenario | policy | runs | goodput_mbps | jain | rtt_p50_ms | custom |\n"
        "|---|---|---:|---:|---:|---:|---:|\n"
        "| llhd1 | hash | 2 | 10.0 ± 12.7 | 0.900 (n=1) | 21.0 ± 12.7 | \u2013 |\n"
        "| llhd1 | llhd | 1 | 12.0 | 0.950 | 15.0 | 3.00 |\n"
        "| lm3 | hash | 1 | 5.00 | \u2013 | \u2013 | \u2013 |\n"
        "\n"
        "CPU load not recorded for 4 of 4 run(s).\n"  # results without the cpu_bound field
    )


def test_comparison_table_exact():
    assert comparison_table(_results()) == (
        "### llhd1\n"
        "\n"
        "runs per policy: hash: 2, llhd: 1\n"
        "\n"
        "| metric | hash | llhd |\n"
        "|---|---:|---:|\n"
        "| goodput_mbps ↑ | 10.0 ± 12.7 | **12.0** |\n"
        "| jain ↑ | 0.900 (n=1) | **0.950** |\n"
        "| rtt_p50_ms ↓ | 21.0 ± 12.7 | **15.0** |\n"
        "| custom | \u2013 | 3.00 |\n"
        "\n"
        "### lm3\n"
        "\n"
        "runs per policy: hash: 1\n"
        "\n"
        "| metric | hash |\n"
        "|---|---:|\n"
        "| goodput_mbps ↑ | 5.00 |\n"
        "\n"
        "↑ higher is better, ↓ lower is better; **bold**: best mean. Cells: mean ± 95 % CI.\n"
        "CPU load not recorded for 4 of 4 run(s).\n"
    )
    assert comparison_table([]) == ""


def test_comparison_marks_ties():
    a = RunResult("s", "a", 0, 0, 1.0, metrics={"retrans": 2.0})
    b = RunResult("s", "b", 0, 0, 1.0, metrics={"retrans": 2.0})
    assert "| retrans ↓ | **2.00** | **2.00** |" in comparison_table([a, b])


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
    written = write_plots(tmp_path, _results())
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


# -- FCT per size bucket, load sweeps ---------------------------------------------------------


def _sweep() -> list[RunResult]:
    out = []
    for policy, base in (("ecmp", 1.0), ("letflow", 0.5)):
        for load in (30, 70):
            for run in (0, 1):
                fct = base * load / 30 + 0.1 * run
                out.append(RunResult(
                    f"asym-load{load}", policy, run, run + 1, 30.0, cpu_bound=run == 1,
                    metrics={"offered_load_pct": load, "goodput_mbps": load / 5 + run,
                             "fct_lt100k_mean_s": fct, "fct_lt100k_p99_s": 3 * fct,
                             "slowdown_lt100k_mean": 10 * fct, "flows_lt100k": 40.0},
                ))  # fmt: skip
    return out


def test_bucket_metrics_are_ranked_and_ordered():
    directions = {m.name: m.higher_is_better for m in METRICS}
    for b in ("lt100k", "100k_1m", "gt1m"):
        assert directions[f"fct_{b}_mean_s"] is False and directions[f"slowdown_{b}_p99"] is False
        assert directions[f"completed_frac_{b}"] is True and directions[f"flows_{b}"] is None
    assert directions["offered_load_pct"] is None and directions["slowdown_mean"] is False
    names = metric_names(_sweep())
    assert names.index("goodput_mbps") < names.index("fct_lt100k_mean_s") < names.index(
        "offered_load_pct")


def test_fct_load_plots_per_bucket_with_two_loads_or_more(tmp_path):
    assert load_family("asym-load70") == "asym" and load_family("asym-load7.5") == "asym"
    assert load_family("llhd-1") == "llhd-1"
    written = write_load_plots(tmp_path, _sweep())
    assert [p.name for p in written] == ["fct_load_asym_lt100k.png"]
    assert written[0].read_bytes().startswith(b"\x89PNG")
    one_load = [r for r in _sweep() if r.metrics["offered_load_pct"] == 30]
    assert write_load_plots(tmp_path / "none", one_load) == []


def test_fct_rows_sum_up_buckets_and_goodput():
    rows = fct_rows(_sweep())
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
    for r in _sweep():
        write_run(tmp_path / r.scenario / r.policy / f"run{r.run}", r)
    got = load_results(tmp_path)
    assert len(got) == 8 and {r.scenario for r in got} == {"asym-load30", "asym-load70"}
    assert [r.policy for r in fct_rows(got)].count("ecmp") == 2
