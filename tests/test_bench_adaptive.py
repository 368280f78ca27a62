"""`make bench-adaptive`'s figures from earlier results (no runs)."""

from __future__ import annotations

import pytest

from mpsched.bench.adaptive import SCENARIOS, figures, main, regret, table_from_csv
from mpsched.lab.report import RunResult, write_run
from mpsched.proc.layout import REPO_ROOT


def test_regret_is_against_the_best_fixed_policy():
    assert regret({"ecmp": 0.5, "llhd": 0.8, "adaptive": 0.6}) == pytest.approx(
        (0.25, "llhd", 0.8))
    assert regret({"ecmp": 0.5, "adaptive": 0.6})[0] == pytest.approx(-0.2)


def test_figures_mean_over_the_scenarios_and_the_mixed_win():
    table = {s: {"ecmp": 0.5, "adaptive": 0.4} for s in SCENARIOS}
    table["mixed"] = {"ecmp": 0.5, "letflow": 0.6, "adaptive": 0.6}
    # regrets 0.2 (x4) and 0 -> mean 0.16; on mixed adaptive = the best: a win
    assert figures(table) == pytest.approx({"adaptive_regret": 0.16, "adaptive_wins_mixed": 1.0})
    del table["mixed"]["adaptive"]
    with pytest.raises(ValueError, match="mixed"):
        figures(table)


def test_docs_results_tables_are_read_and_mixed_is_missing(capsys):
    table = table_from_csv(REPO_ROOT / "docs" / "results", SCENARIOS)
    assert set(table) == {"llhd-1-manyflows", "cmt-la", "llhd-2", "lm3-failure"}
    assert table["llhd-1-manyflows"]["letflow"] == pytest.approx(0.932, abs=0.001)
    assert main(["--reuse", str(REPO_ROOT / "docs" / "results")]) == 2
    assert "no results for scenario(s) ['mixed']" in capsys.readouterr().err


def test_reuse_reads_run_results(tmp_path, capsys):
    for scenario in SCENARIOS:
        for k, (policy, frac) in enumerate([("ecmp", 0.5), ("ecmp", 0.7), ("adaptive", 0.66)]):
            r = RunResult(scenario, policy, k, k, 10.0, metrics={"goodput_frac": frac})
            write_run(tmp_path / scenario / policy / f"run{k}", r)
    assert main(["--reuse", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # best fixed: ecmp at 0.6; regret 1 - 0.66 / 0.6 = -0.1 everywhere
    assert "adaptive_regret=-0.100" in out and "adaptive_wins_mixed=1" in out
