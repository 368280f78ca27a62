"""src/mpsched/lab/fctwindow.py: the FCT of the flows that arrived in a window of each run."""

from __future__ import annotations

import json
import math

import pytest

from mpsched.lab.fctwindow import load_windowed, parse_window, window_metrics, window_records
from mpsched.lab.report import RunResult, write_run

STARTED = 1_000.0


def plan(*transfers: dict) -> dict:
    return {"role": "plan", "started": STARTED, "ended": STARTED + 60, "transfers": list(transfers)}


def test_a_window_is_two_seconds_in_order():
    assert parse_window("20:40") == (20.0, 40.0)
    for bad in ("20", "40:20", "a:b", "-1:3", "1:2:3"):
        with pytest.raises(ValueError, match="--window"):
            parse_window(bad)


def test_only_the_transfers_that_arrived_in_the_window_count_as_the_run_counts_them():
    reports = [
        plan({"arrival": STARTED + 5, "size": 10_000, "fct_s": 0.1},  # before
             {"arrival": STARTED + 20, "size": 20_000, "fct_s": 0.5},  # at the start: in
             {"arrival": STARTED + 30, "size": 30_000, "error": "refused"},  # failed
             {"arrival": STARTED + 39, "size": 2_000_000},  # still running at the end
             {"arrival": STARTED + 40, "size": 40_000, "fct_s": 0.2}),  # at the end: out
        {"role": "bulk", "started": STARTED, "transfers": [{"arrival": STARTED + 25}]},
    ]
    assert list(window_records(reports, 20, 40)) == [
        (20_000, 0.5, False), (30_000, None, False), (2_000_000, 21.0, True)]


def test_the_windowed_figures_leave_the_whole_runs_out():
    m = window_metrics([(20_000, 0.5, False), (60_000, 1.5, False), (30_000, None, False),
                        (2_000_000, 21.0, True)])
    assert m["fct_lt100k_mean_s"] == pytest.approx(1.0)
    assert m["completed_frac_lt100k"] == pytest.approx(2 / 3)
    assert m["fct_gt1m_mean_s"] == 21.0 and m["completed_frac_gt1m"] == 0.0
    assert m["completed_frac"] == 0.5 and m["transfers"] == 2
    assert math.isnan(m["fct_100k_1m_mean_s"])  # no flow of that size in the window
    assert all(math.isnan(m[k]) for k in ("goodput_mbps", "slowdown_mean"))


def test_a_compare_directory_is_windowed_run_by_run(tmp_path):
    run_dir = tmp_path / "fabric-failure" / "ecmp" / "run0"
    run_dir.mkdir(parents=True)
    run = RunResult("fabric-failure", "ecmp", 0, 1, 60.0,
                    metrics={"fct_lt100k_mean_s": 9.0, "goodput_mbps": 5.0, "rtt_p50_ms": 3.0})
    write_run(run_dir, run)
    (run_dir / "send0_h1_1.json").write_text(json.dumps(
        plan({"arrival": STARTED + 25, "size": 10_000, "fct_s": 0.3})))
    (run_dir / "send0_h1_1.flows.json").write_text(json.dumps({"host": "h1_1", "flows": "[]"}))
    (got,) = load_windowed(tmp_path, 20, 40)
    assert got.metrics["fct_lt100k_mean_s"] == 0.3 and got.metrics["rtt_p50_ms"] == 3.0
    assert math.isnan(got.metrics["goodput_mbps"])
    with pytest.raises(ValueError, match="runs.csv"):
        load_windowed(tmp_path / "runs.csv", 20, 40)


def test_a_runs_timeline_is_its_short_flows_mean_fct_per_arrival_bin():
    from mpsched.lab.fctwindow import run_timeline

    report = plan({"arrival": STARTED + 1, "size": 10_000, "fct_s": 0.2},
                  {"arrival": STARTED + 4, "size": 20_000, "fct_s": 0.4},
                  {"arrival": STARTED + 6, "size": 2_000_000, "fct_s": 9.0},  # not short
                  {"arrival": STARTED + 7, "size": 30_000, "error": "refused"},  # no FCT
                  {"arrival": STARTED + 12, "size": 30_000, "fct_s": 1.0})
    assert run_timeline([report], 5.0) == {0: pytest.approx(0.3), 2: 1.0}


def test_timelines_average_each_bin_over_the_runs(tmp_path):
    from mpsched.lab.fctwindow import runs_with_dirs, timelines

    for k, fct in enumerate((0.2, 0.4)):
        d = tmp_path / "fab" / "ecmp" / f"run{k}"
        d.mkdir(parents=True)
        write_run(d, RunResult("fab", "ecmp", k, k + 1, 60.0))
        (d / "send0_h1_1.json").write_text(json.dumps(
            plan({"arrival": STARTED + 21, "size": 10_000, "fct_s": fct})))
    ((key, points),) = timelines(runs_with_dirs(tmp_path), 10.0).items()
    assert key == ("fab", "ecmp")
    ((t, mean, ci),) = points
    assert (t, mean) == (25.0, pytest.approx(0.3)) and ci > 0


def test_fcttable_draws_the_timeline_only_into_a_plot_directory(tmp_path, capsys):
    from mpsched.lab import fcttable

    assert fcttable.main([str(tmp_path), "--timeline", "5"]) == 2
    assert "--plot" in capsys.readouterr().err
