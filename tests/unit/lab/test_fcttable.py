"""The docs/results FCT tables from results on disk (src/mpsched/lab/fcttable.py) and runs.csv read
back (report.read_csv)."""

from __future__ import annotations

import math

import pytest

from mpsched.lab import fcttable, report
from mpsched.lab.report import RunResult
from mpsched.proc.layout import REPO_ROOT


def run(policy, seed, short, p99=10.0, goodput=10.0, bound=False):
    r = RunResult("sc", policy, seed - 1, seed, 30.0, metrics={
        "fct_lt100k_mean_s": short, "fct_p99_s": p99, "goodput_mbps": goodput,
        "slowdown_mean": short * 10, "completed_frac": 1.0})
    r.cpu_bound = bound
    return r


RUNS = [run("letflow", 1, 0.4), run("letflow", 2, 0.5), run("letflow", 3, 0.6),
        run("ca", 1, 0.2), run("ca", 2, 0.3), run("ca", 3, 0.3, bound=True)]


def test_runs_csv_round_trip(tmp_path):
    report.write_csv(tmp_path, RUNS)
    back = report.read_csv(tmp_path / "runs.csv")
    assert [(r.policy, r.seed, r.cpu_bound) for r in back] == [
        (r.policy, r.seed, r.cpu_bound) for r in RUNS]
    assert back[3].metrics["fct_lt100k_mean_s"] == 0.2
    assert "jain" not in back[0].metrics  # an empty cell is no metric


@pytest.mark.parametrize(
    ("text", "message"),
    [("a,b\n1,2\n", "no column"),
     ("scenario,policy,run,seed,duration_s,cpu_bound\nsc,ca,x,1,30,false\n", ":2: malformed 'run'"),
     ("scenario,policy,run,seed,duration_s,cpu_bound\nsc,ca,0,1,30,maybe\n", "'cpu_bound'")],
    ids=["not-runs-csv", "bad-run", "bad-mark"],
)
def test_read_csv_names_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "runs.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        report.read_csv(path)


def test_tables_sorted_and_paired_by_hand():
    text = fcttable.bucket_table(RUNS)
    lines = text.splitlines()
    assert lines[2].startswith("| ca † | 3 |") and lines[3].startswith("| letflow | 3 |")
    paired = fcttable.paired_table(RUNS, "letflow")
    # ratios 0.5, 0.6, 0.5: mean 0.533, s = 0.0577, t(0.975, 2) = 4.303 -> ± 0.143
    row = next(line for line in paired.splitlines() if line.startswith("| ca (3)"))
    assert row.split(" | ")[1] == "0.53 ± 0.14"
    assert fcttable.paired_table(RUNS, "ecmp") == ""


def test_main_pools_sources_and_leaves_cpu_bound_out(tmp_path, capsys):
    report.write_csv(tmp_path, RUNS[:4])
    extra = tmp_path / "more"
    for r in RUNS[4:]:
        report.write_run(extra / r.policy / f"run{r.run}", r)
    assert fcttable.main([str(tmp_path / "runs.csv"), str(extra), "--no-cpu-bound"]) == 0
    out = capsys.readouterr().out
    assert "| ca | 2 |" in out and "CPU-bound runs (left out): sc/ca/seed 3" in out


def test_main_refuses_a_missing_source(capsys):
    assert fcttable.main(["/nonexistent/runs.csv"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_published_rows_read_back():
    runs = report.read_csv(REPO_ROOT / "docs" / "results" / "congestion-grey-loss-runs.csv")
    assert {r.policy for r in runs} >= {"ca", "letflow"}
    assert all(math.isfinite(r.metrics["goodput_mbps"]) for r in runs)


def test_a_runs_csv_from_before_the_cpu_mark_reads_as_unknown(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("scenario,policy,run,seed,duration_s,goodput_frac\nsc,ca,0,1,30,0.9\n")
    (r,) = report.read_csv(path)
    assert r.cpu_bound is None and r.metrics == {"goodput_frac": 0.9}


def test_main_draws_the_paired_ratios(tmp_path, capsys):
    report.write_csv(tmp_path, RUNS)
    plots = tmp_path / "plots"
    assert fcttable.main([str(tmp_path / "runs.csv"), "--paired", "letflow", "--paired", "ecmp",
                          "--plot", str(plots)]) == 0
    assert "plot: " + str(plots / "paired_sc_letflow.png") in capsys.readouterr().out
    # no ecmp run: nothing to pair with, no empty plot; one load: no FCT-against-load plot
    assert [p.name for p in plots.iterdir()] == ["paired_sc_letflow.png"]
    assert (plots / "paired_sc_letflow.png").read_bytes().startswith(b"\x89PNG")
