"""`mpsched compare --resume`: which runs an earlier call left are kept (mpsched/lab/experiment.py
kept_run), and that kept runs are not run again while the missing ones are."""

from __future__ import annotations

import pytest

from mpsched.lab import experiment, report, runner
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
    kept = experiment.kept_run(written(tmp_path), SCENARIO, "ca", 1)
    assert kept is not None and kept.metrics["goodput_mbps"] == 7.0


@pytest.mark.parametrize(
    "changes",
    [{"seed": 99}, {"duration": 12.0}, {"policy": "letflow"}],
    ids=["other-seed", "other-duration", "other-policy"],
)
def test_another_run_is_not_kept(tmp_path, changes):
    assert experiment.kept_run(written(tmp_path, **changes), SCENARIO, "ca", 1) is None


def test_no_result_or_a_broken_one_is_run_again(tmp_path):
    empty = tmp_path / "x" / "run0"
    empty.mkdir(parents=True)
    assert experiment.kept_run(empty, SCENARIO, "ca", 0) is None
    run_dir = written(tmp_path)
    next(run_dir.glob("*__run*.json")).write_text("{not json")
    assert experiment.kept_run(run_dir, SCENARIO, "ca", 1) is None


def test_cpu_bound_runs_only_kept_unless_asked(tmp_path):
    run_dir = written(tmp_path, cpu_bound=True)
    assert experiment.kept_run(run_dir, SCENARIO, "ca", 1) is not None
    assert experiment.kept_run(run_dir, SCENARIO, "ca", 1, rerun_cpu_bound=True) is None


def test_resume_runs_only_what_is_missing(tmp_path, monkeypatch):
    """Runs 0 and 2 are on disk; only run 1 is executed (by a stand-in for the testbed)."""
    for k in (0, 2):
        written(tmp_path, k=k)
    executed = []

    class FakeRun:
        def __init__(self, sc, policy, k, run_dir):
            executed.append(k)

        def execute(self, progress):
            raise runner.RunError("no testbed in a unit test")

    monkeypatch.setattr(runner, "Run", FakeRun)
    sc = SCENARIO
    results, failed = experiment.run_experiments(
        [sc], {sc.name: ("ca",)}, 3, tmp_path, False, resume=True
    )
    assert executed == [1]
    assert failed == 1
    assert sorted(r.run for r in results) == [0, 2]


def test_rerun_cpu_bound_needs_resume(capsys):
    assert experiment.main(["scenarios/asymmetric.yaml", "--rerun-cpu-bound"], compare=True) == 2
    assert "--rerun-cpu-bound needs --resume" in capsys.readouterr().err
