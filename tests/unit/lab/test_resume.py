"""`mpsched compare --resume`: which runs an earlier call left are kept
(src/mpsched/lab/resume.py
kept_run), and that kept runs are not run again while the missing ones are."""

from __future__ import annotations

import types

import pytest

from mpsched.lab import analysis, experiment, report, resume, runner
from mpsched.lab.report import RunResult
from mpsched.lab.scenario import load
from mpsched.proc.layout import REPO_ROOT

SCENARIO = load(REPO_ROOT / "scenarios" / "asymmetric.yaml")


def written(tmp_path, policy="ca", k=1, seed=None, duration=None, cpu_bound=False):
    run_dir = tmp_path / SCENARIO.name / policy / f"run{k}"
    run_dir.mkdir(parents=True, exist_ok=True)
    r = RunResult(
        SCENARIO.name, policy, k, SCENARIO.seed + k if seed is None else seed,
        SCENARIO.duration_s if duration is None else duration,
        metrics={"goodput_mbps": 7.0},
    )
    r.cpu_bound = cpu_bound
    report.write_run(run_dir, r)
    return run_dir


def test_the_same_run_is_kept(tmp_path):
    kept = resume.kept_run(written(tmp_path), SCENARIO, "ca", 1)
    assert kept is not None and kept.metrics["goodput_mbps"] == 7.0


@pytest.mark.parametrize(
    "changes",
    [{"seed": 99}, {"duration": 12.0}, {"policy": "letflow"}],
    ids=["other-seed", "other-duration", "other-policy"],
)
def test_another_run_is_not_kept(tmp_path, changes):
    assert resume.kept_run(written(tmp_path, **changes), SCENARIO, "ca", 1) is None


def test_no_result_or_a_broken_one_is_run_again(tmp_path):
    empty = tmp_path / "x" / "run0"
    empty.mkdir(parents=True)
    assert resume.kept_run(empty, SCENARIO, "ca", 0) is None
    run_dir = written(tmp_path)
    next(run_dir.glob("*__run*.json")).write_text("{not json")
    assert resume.kept_run(run_dir, SCENARIO, "ca", 1) is None


def test_cpu_bound_runs_only_kept_unless_asked(tmp_path):
    run_dir = written(tmp_path, cpu_bound=True)
    assert resume.kept_run(run_dir, SCENARIO, "ca", 1) is not None
    assert resume.kept_run(run_dir, SCENARIO, "ca", 1, rerun_cpu_bound=True) is None


def test_resume_runs_only_what_is_missing(tmp_path, monkeypatch):
    """Runs 0 and 2 are on disk; only run 1 is executed (by a stand-in for the testbed),
    with the call's --p4rt-plaintext."""
    for k in (0, 2):
        written(tmp_path, k=k)
    executed = []
    plaintext: list[bool] = []

    class FakeRun:
        def __init__(self, sc, policy, k, run_dir, p4rt_plaintext=False):
            executed.append(k)
            plaintext.append(p4rt_plaintext)

        def execute(self, progress):
            raise runner.RunError("no testbed in a unit test")

    monkeypatch.setattr(runner, "Run", FakeRun)
    sc = SCENARIO
    results, failed = experiment.run_experiments(
        [sc], {sc.name: ("ca",)}, 3, tmp_path, False, resume=True, p4rt_plaintext=True
    )
    assert executed == [1] and plaintext == [True]
    assert failed == 1
    assert sorted(r.run for r in results) == [0, 2]


def test_rerun_cpu_bound_needs_resume(capsys):
    assert experiment.main(["scenarios/asymmetric.yaml", "--rerun-cpu-bound"], compare=True) == 2
    assert "--rerun-cpu-bound needs --resume" in capsys.readouterr().err


def carried_csv(tmp_path, rows):
    """OUT/<scenario>/runs.csv holding `rows` ((policy, k, goodput, cpu_bound) each), as a
    table committed on another machine and copied there: no run directories."""
    results = []
    for policy, k, goodput, bound in rows:
        r = RunResult(SCENARIO.name, policy, k, SCENARIO.seed + k, SCENARIO.duration_s,
                      metrics={"goodput_mbps": goodput})
        r.cpu_bound = bound
        results.append(r)
    report.write_csv(tmp_path / SCENARIO.name, results)
    return resume.carried_runs(tmp_path, SCENARIO)


def test_a_row_of_runs_csv_is_kept_where_no_json_is(tmp_path):
    carried = carried_csv(tmp_path, [("ca", 1, 6.5, False)])
    empty = tmp_path / SCENARIO.name / "ca" / "run1"
    kept = resume.kept_run(empty, SCENARIO, "ca", 1, carried=carried)
    assert kept is not None and kept.metrics["goodput_mbps"] == 6.5
    assert resume.kept_run(empty, SCENARIO, "ca", 2, carried=carried) is None


def test_the_json_wins_over_the_row(tmp_path):
    carried = carried_csv(tmp_path, [("ca", 1, 6.5, False)])
    kept = resume.kept_run(written(tmp_path), SCENARIO, "ca", 1, carried=carried)
    assert kept is not None and kept.metrics["goodput_mbps"] == 7.0


def test_a_cpu_bound_row_is_run_again_when_asked(tmp_path):
    carried = carried_csv(tmp_path, [("ca", 1, 6.5, True)])
    empty = tmp_path / "none"
    assert resume.kept_run(empty, SCENARIO, "ca", 1, carried=carried) is not None
    assert resume.kept_run(empty, SCENARIO, "ca", 1, True, carried) is None


def test_resume_from_a_table_runs_the_rest_and_loses_no_row(tmp_path, monkeypatch):
    """runs.csv holds ca runs 0-1 and letflow run 0; a call for ca with 3 runs runs only
    run 2 (which succeeds here) and the table it writes still has letflow's row."""
    carried_csv(tmp_path, [("ca", 0, 6.0, False), ("ca", 1, 6.1, False),
                           ("letflow", 0, 5.0, False)])
    executed = []

    class FakeRun:
        def __init__(self, sc, policy, k, run_dir, p4rt_plaintext=False):
            self.k, self.run_dir = k, run_dir

        def execute(self, progress):
            executed.append(self.k)
            self.run_dir.mkdir(parents=True)
            return types.SimpleNamespace(capture=None, captures={})

    def analyse(raw):
        return RunResult(SCENARIO.name, "ca", 2, SCENARIO.seed + 2, SCENARIO.duration_s,
                         metrics={"goodput_mbps": 6.2})

    monkeypatch.setattr(runner, "Run", FakeRun)
    monkeypatch.setattr(analysis, "analyse", analyse)
    sc = SCENARIO
    results, failed = experiment.run_experiments(
        [sc], {sc.name: ("ca",)}, 3, tmp_path, False, resume=True
    )
    assert executed == [2] and failed == 0
    assert sorted((r.policy, r.run) for r in results) == [
        ("ca", 0), ("ca", 1), ("ca", 2), ("letflow", 0)]
    table = report.read_csv(tmp_path / sc.name / "runs.csv")
    assert {(r.policy, r.run): r.metrics["goodput_mbps"] for r in table} == {
        ("ca", 0): 6.0, ("ca", 1): 6.1, ("ca", 2): 6.2, ("letflow", 0): 5.0}


def test_a_malformed_table_to_resume_from_is_named(tmp_path):
    sdir = tmp_path / SCENARIO.name
    sdir.mkdir()
    (sdir / "runs.csv").write_text("scenario,policy\nx,y\n")
    with pytest.raises(resume.ResumeError, match="runs.csv"):
        resume.carried_runs(tmp_path, SCENARIO)
