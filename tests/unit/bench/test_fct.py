"""`make bench-fct`'s figures from run results (src/mpsched/bench/fct.py), without a testbed."""

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


# -- which runs the figures come from (fake run files, no testbed) ----------------------------


def fake_run_fct(short: float, calls: list):
    """A stand-in for run_fct: writes `runs` runs per policy into `out` (the runner's layout,
    OUT/<scenario>/<policy>/), every ca run with mean short FCT `short`."""
    from mpsched.lab.report import write_run

    def run_fct(scenarios, policies, runs, loads, duration, out):
        calls.append(out)
        for policy in policies:
            d = out / "asymmetric" / policy
            d.mkdir(parents=True, exist_ok=True)
            for k in range(1, runs + 1):
                value = short if policy == "ca" else 1.0
                write_run(d, run(policy, k, value, 10.0, 12.0))
    return run_fct


def key_lines(text: str) -> dict[str, float]:
    return {k: float(v) for k, _, v in (line.partition("=") for line in text.splitlines()
                                        if "=" in line and "|" not in line)}


def test_each_invocation_reports_only_its_own_runs(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(bench, "build_dir", lambda: tmp_path)
    calls: list = []
    monkeypatch.setattr(bench, "run_fct", fake_run_fct(0.2, calls))
    assert bench.main(["--runs", "3"]) == 0
    first = capsys.readouterr().out
    monkeypatch.setattr(bench, "run_fct", fake_run_fct(0.5, calls))
    assert bench.main(["--runs", "2"]) == 0
    second = capsys.readouterr().out
    assert calls[0] != calls[1] and calls[0].parent == calls[1].parent
    assert key_lines(first)["fct_short_ratio_vs_ecmp"] == pytest.approx(0.2)
    assert key_lines(second)["fct_short_ratio_vs_ecmp"] == pytest.approx(0.5)
    assert "| asymmetric | ca | 70 | 2 |" in second  # 2 runs, not the first call's 3 + 2


def test_an_out_holding_runs_is_refused(monkeypatch, tmp_path, capsys):
    calls: list = []
    monkeypatch.setattr(bench, "run_fct", fake_run_fct(0.2, calls))
    out = tmp_path / "mine"
    assert bench.main(["--runs", "1", "--out", str(out)]) == 0
    assert bench.main(["--runs", "2", "--out", str(out)]) == 2
    assert len(calls) == 1
    assert f"{out} already holds runs" in capsys.readouterr().err


def test_reuse_reads_the_named_directory_and_runs_nothing(monkeypatch, tmp_path, capsys):
    calls: list = []
    fake_run_fct(0.25, calls)(None, ["ecmp", "letflow", "ca"], 2, None, None, tmp_path)
    monkeypatch.setattr(bench, "run_fct", lambda *a: pytest.fail("--reuse must run nothing"))
    assert bench.main(["--reuse", str(tmp_path)]) == 0
    assert key_lines(capsys.readouterr().out)["fct_short_ratio_vs_ecmp"] == pytest.approx(0.25)


def test_runs_of_several_scenarios_are_refused(monkeypatch, tmp_path, capsys):
    from mpsched.lab.report import write_run

    for scenario in ("asymmetric", "asymmetric-40"):
        for policy in ("ecmp", "letflow", "ca"):
            r = run(policy, 1, 0.5, 10.0, 12.0)
            r.scenario = scenario
            (tmp_path / scenario / policy).mkdir(parents=True)
            write_run(tmp_path / scenario / policy, r)
    assert bench.main(["--reuse", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "several scenarios (asymmetric, asymmetric-40)" in err
    with pytest.raises(bench.BenchError, match="no runs of ecmp, letflow, ca"):
        bench.select_results([], ["ecmp", "letflow", "ca"])


@pytest.mark.parametrize("module", ["fct", "fabric", "fabric_mptcp", "fabric_failover"])
@pytest.mark.parametrize("argv", [["--runs", "0"], ["--reuse", "r", "--out", "o"]])
def test_the_run_benches_refuse_bad_out_options_before_running(module, argv, capsys):
    """`--runs` below 1, or `--out` beside `--reuse`, is a usage error (exit 2) naming the
    option, in every bench sharing `add_out_options`, before anything runs."""
    import importlib

    main = importlib.import_module(f"mpsched.bench.{module}").main
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert argv[0] in capsys.readouterr().err
