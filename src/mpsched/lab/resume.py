"""`mpsched run|compare --resume`: which runs an earlier call left are kept instead of run
again (a run's JSON in its directory, else a row of the scenario's runs.csv), and the rows of
that runs.csv a call does not replace, so a resumed call loses no row of its table."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mpsched.lab.report import RunResult
    from mpsched.lab.scenario import Scenario

log = logging.getLogger("mpsched.lab.resume")


def _is_run(r: RunResult, sc: Scenario, policy: str, k: int) -> bool:
    """`r` is run `k` of `sc` under `policy`: same scenario name, policy, run number, seed
    and duration."""
    same = (r.scenario, r.policy, r.run, r.seed) == (sc.name, policy, k, sc.seed + k)
    return same and math.isclose(r.duration_s, sc.duration_s)


def kept_run(
    run_dir: Path,
    sc: Scenario,
    policy: str,
    k: int,
    rerun_cpu_bound: bool = False,
    carried: Sequence[RunResult] = (),
) -> RunResult | None:
    """The result an earlier call left for run `k` of `sc` under `policy` (`_is_run`) if it
    may be kept (not marked cpu_bound when `rerun_cpu_bound`): the run's JSON in `run_dir`,
    else, where `run_dir` holds none, a row of `carried` (the scenario's runs.csv, e.g. a
    table committed by a session on another machine). None when there is none, it is another
    run's, or the JSON does not read back."""
    from mpsched.lab import report

    found: RunResult | None = None
    jsons = sorted(run_dir.glob("*__run*.json"))
    for path in jsons:
        try:
            r = report.read_run(path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("--resume: %s does not read back (%s); running it again", path, exc)
            return None
        if _is_run(r, sc, policy, k):
            found = r
            break
    if found is None and not jsons:
        found = next((r for r in carried if _is_run(r, sc, policy, k)), None)
    if found is None or (rerun_cpu_bound and found.cpu_bound is True):
        return None
    return found


class ResumeError(ValueError):
    """A runs.csv to resume from that does not read back."""


def carried_runs(out: Path, sc: Scenario) -> list[RunResult]:
    """The rows of OUT/<scenario>/runs.csv an earlier call (or a copy of a committed table)
    left; [] when there is none. A malformed file raises ResumeError naming it."""
    from mpsched.lab import report

    path = out / sc.name / "runs.csv"
    if not path.exists():
        return []
    try:
        return [r for r in report.read_csv(path) if r.scenario == sc.name]
    except ValueError as exc:
        raise ResumeError(str(exc)) from None


def not_replaced(results: Sequence[RunResult], carried: Sequence[RunResult]) -> list[RunResult]:
    """The `carried` rows that none of `results` replaces (same policy and run number)."""
    done = {(r.policy, r.run) for r in results}
    return [r for r in carried if (r.policy, r.run) not in done]


def table_rows(results: Sequence[RunResult], carried: Sequence[RunResult]) -> list[RunResult]:
    """The rows of a scenario's runs.csv: this call's `results`, then the `carried` rows
    they do not replace (`not_replaced`), so a call that runs some policies again, or
    others, loses no row of the table it resumed."""
    return [*results, *not_replaced(results, carried)]
