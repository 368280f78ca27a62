"""`make bench-adaptive`'s figures from earlier results (no runs)."""

from __future__ import annotations

import pytest

from mpsched.bench.adaptive import (
    SCENARIOS,
    figures,
    main,
    markdown,
    paired_lower_bounds,
    plan,
    records_from_csv,
    regret,
    table_from_csv,
    to_extend,
)
from mpsched.lab.report import RunResult, write_run
from mpsched.proc.layout import REPO_ROOT


def test_regret_is_against_the_best_fixed_policy():
    assert regret({"ecmp": 0.5, "llhd": 0.8, "adaptive": 0.6}) == pytest.approx(
        (0.25, "llhd", 0.8))
    assert regret({"ecmp": 0.5, "adaptive": 0.6})[0] == pytest.approx(-0.2)


def test_figures_mean_over_the_scenarios_and_the_mixed_win():
    table = {s: {"ecmp": 0.5, "adaptive": 0.4} for s in SCENARIOS}
    table["mixed"] = {"ecmp": 0.5, "letflow": 0.6, "adaptive": 0.6}
    # regrets 0.2 (x4) and 0 -> mean 0.16; equal to the best on mixed is no win
    assert figures(table) == pytest.approx({"adaptive_regret": 0.16, "adaptive_wins_mixed": 0.0})
    del table["mixed"]["adaptive"]
    with pytest.raises(ValueError, match="mixed"):
        figures(table)


def mixed(adaptive, fixed):
    """Records of mixed: adaptive's and one fixed policy's goodput fraction per seed."""
    return [("mixed", "adaptive", k, a) for k, a in enumerate(adaptive)] + [
        ("mixed", "letflow", k, f) for k, f in enumerate(fixed)]


def test_paired_lower_bound_by_hand():
    # ratios 1.2, 1.1, 1.3: mean 1.2, s = 0.1, t(0.975, 2) = 4.303 -> 1.2 - 4.303 * 0.1 / sqrt 3
    bounds = paired_lower_bounds(mixed([0.6, 0.55, 0.65], [0.5, 0.5, 0.5]), "mixed")
    assert bounds == pytest.approx({"letflow": 1.2 - 4.303 * 0.1 / 3 ** 0.5}, abs=1e-3)


@pytest.mark.parametrize(
    ("adaptive", "fixed", "wins"),
    [([0.6, 0.61, 0.62], [0.5, 0.5, 0.51], 1.0),   # ahead on every seed, tight: a win
     ([0.6, 0.45, 0.7], [0.5, 0.5, 0.5], 0.0),     # ahead on average, interval includes 1
     ([0.6], [0.5], 0.0)],                         # one seed: no interval, no win
    ids=["beyond", "overlap", "one-seed"],
)
def test_the_mixed_win_is_beyond_the_paired_interval(adaptive, fixed, wins):
    table = {s: {"ecmp": 0.5, "adaptive": 0.5} for s in SCENARIOS}
    got = figures(table, records=mixed(adaptive, fixed))
    assert got["adaptive_wins_mixed"] == wins


def test_docs_results_tables_are_read(capsys):
    table = table_from_csv(REPO_ROOT / "docs" / "results", SCENARIOS)
    assert set(table) == set(SCENARIOS)
    assert table["llhd-1-manyflows"]["letflow"] == pytest.approx(0.929, abs=0.001)
    assert main(["--reuse", str(REPO_ROOT / "docs" / "results")]) == 0
    out = capsys.readouterr().out
    regrets = [regret(table[s])[0] for s in SCENARIOS]
    assert f"adaptive_regret={sum(regrets) / len(regrets):.3f}" in out
    assert "adaptive_wins_mixed=" in out


def test_reuse_reads_run_results(tmp_path, capsys):
    runs = [("ecmp", 0, 0.5), ("ecmp", 1, 0.7), ("adaptive", 0, 0.65), ("adaptive", 1, 0.67)]
    for scenario in SCENARIOS:
        for policy, k, frac in runs:
            r = RunResult(scenario, policy, k, k, 10.0, metrics={"goodput_frac": frac})
            write_run(tmp_path / scenario / policy / f"run{k}", r)
    assert main(["--reuse", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    # best fixed: ecmp at 0.6; regret 1 - 0.66 / 0.6 = -0.1 everywhere; paired ratios 1.3 and
    # 0.957 over two seeds: the interval includes 1, so no win on mixed
    assert "adaptive_regret=-0.100" in out and "adaptive_wins_mixed=0" in out


def test_csv_records_keep_the_seed():
    records = records_from_csv(REPO_ROOT / "docs" / "results", ["llhd-2"])
    assert records and all(isinstance(seed, int) for _, _, seed, _ in records)


def test_markdown_tables_rank_policies_and_pair_adaptive_by_seed(tmp_path):
    runs = [("ecmp", 0, 0.5), ("ecmp", 1, 0.5), ("letflow", 0, 0.8), ("letflow", 1, 0.9),
            ("adaptive", 0, 0.6), ("adaptive", 1, 0.7)]
    results = [RunResult("mixed", p, k, k, 10.0, metrics={"goodput_frac": x},
                         cpu_bound=(p == "ecmp" and k == 1)) for p, k, x in runs]
    text = markdown(results, ["mixed", "cmt-la"])
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| letflow", "| **adaptive**",
                                                            "| ecmp"]
    # letflow 0.85 +- 12.706 * 0.0707 / sqrt 2; adaptive / letflow 0.75, 0.778 per seed
    assert "| letflow | 2 | 0.850 ± 0.635 | 0.764 ± 0.176 |" in text
    assert "| ecmp | 2 (1\u2020) | 0.500 ± 0.000 | 1.30 ± 1.27 |" in text
    assert "cmt-la" not in text  # no runs: no table


def _records(values):
    """(scenario, policy, seed, goodput fraction) of one scenario, seeds 1.. per policy."""
    return [("s", p, k, x) for p, xs in values.items() for k, x in enumerate(xs, start=1)]


def test_to_extend_is_the_best_and_those_overlapping_it():
    """best 0.90 +- ~0.012; adaptive 0.89 +- ~0.012 overlaps, letflow 0.80 does not; a
    policy with one run counts as a point."""
    records = _records({
        "wcmp": [0.90, 0.91, 0.89], "adaptive": [0.89, 0.88, 0.90],
        "letflow": [0.80, 0.81, 0.79], "rr": [0.895],
    })  # fmt: skip
    assert to_extend(records, "s") == ["adaptive", "rr", "wcmp"]


def test_nothing_to_extend_when_the_best_stands_apart():
    records = _records({"wcmp": [0.90, 0.90, 0.90], "adaptive": [0.80, 0.80, 0.80]})
    assert to_extend(records, "s") == []
    assert to_extend(records, "other") == []


def test_plan_names_the_runs_and_the_command(tmp_path):
    records = [(name, p, k, x) for name in ("cmt-la",)
               for p, xs in {"wcmp": [0.79, 0.80], "ecmp": [0.78, 0.80]}.items()
               for k, x in enumerate(xs, start=1)]
    (tmp_path / "cmt-la-runs.csv").write_text("scenario\n")
    text = plan(records, 10, tmp_path)
    assert "cmt-la: ecmp (2), wcmp (2)" in text
    assert "cp " + str(tmp_path / "cmt-la-runs.csv") in text
    assert "--policy ecmp --policy wcmp --runs 10 --resume" in text
    assert "mixed: nothing to run (no runs)" in text


def test_plan_without_reuse_is_refused_before_anything_runs(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--plan", "10"])
    assert exit_.value.code == 2
    assert "--plan needs --reuse" in capsys.readouterr().err


def test_an_out_holding_earlier_runs_is_refused_without_resume(tmp_path, capsys, monkeypatch):
    """Runs of an earlier comparison (other run counts, durations) must not mix into this
    one's figures: without --resume nothing is run and the choices are named."""
    import mpsched.bench.adaptive as bench

    r = RunResult("mixed", "ecmp", 1, 1, 10.0, metrics={"goodput_frac": 0.5})
    write_run(tmp_path / "mixed" / "ecmp" / "run1", r)
    calls: list = []
    monkeypatch.setattr(bench.subprocess, "call", lambda cmd: calls.append(cmd) or 1)
    assert main(["--out", str(tmp_path)]) == 2
    assert calls == []
    err = capsys.readouterr().err
    assert f"{tmp_path} already holds runs" in err and "--resume" in err and "--reuse" in err
    # --resume adds to them: the comparison runs (and here fails: the stand-in exits 1)
    assert main(["--out", str(tmp_path), "--resume"]) == 1
    assert len(calls) == 1 and "--resume" in calls[0]
