"""`make bench-adaptive`: the context-adaptive policy against the best fixed policy.

On the four scenarios of docs/results (llhd-1-manyflows, cmt-la, llhd-2, lm3-failure) and
scenarios/mixed.yaml (conditions changing every 20 s), each under its compare list (every
fixed policy and `adaptive`), the mean goodput fraction (goodput / summed configured
capacity) per policy over the runs. Per scenario the regret of `adaptive` is
1 - its goodput fraction / the best fixed policy's (negative when it beats them all). Ends with

    adaptive_regret=       the mean regret over the five scenarios
    adaptive_wins_mixed=   1 if adaptive's goodput fraction on mixed is at least the best
                           fixed policy's, else 0

Without --reuse it runs `mpsched compare` on the five scenarios (`--runs`, default 3: many
hours, the scenarios' durations + about 9 s per run for 14-19 policies each). `--reuse DIR`
evaluates an earlier comparison instead: the run results under DIR (`*__run*.json`, as
`mpsched.lab.fct.load_results` reads them), or, where there are none, its runs.csv tables
(`DIR/<scenario>/runs.csv`, or `DIR/<scenario>-runs.csv` as in docs/results).
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from mpsched.bench.sched import read_runs
from mpsched.lab.fct import load_results
from mpsched.lab.report import RunResult
from mpsched.proc.layout import REPO_ROOT, build_dir

SCENARIOS = ("llhd-1-manyflows", "cmt-la", "llhd-2", "lm3-failure", "mixed")
ADAPTIVE = "adaptive"
METRIC = "goodput_frac"

Table = dict[str, dict[str, float]]  # scenario -> policy -> mean goodput fraction


def table_from_results(results: Sequence[RunResult]) -> Table:
    """scenario -> policy -> mean goodput fraction over its runs (NaN runs left out)."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        x = r.metrics.get(METRIC, math.nan)
        if x is not None and not math.isnan(x):
            values[r.scenario][r.policy].append(x)
    return {s: {p: statistics.fmean(v) for p, v in pols.items()} for s, pols in values.items()}


def table_from_csv(directory: Path, scenarios: Sequence[str]) -> Table:
    """The same from runs.csv tables: DIR/<scenario>/runs.csv or DIR/<scenario>-runs.csv."""
    out: Table = {}
    for name in scenarios:
        for path in (directory / name / "runs.csv", directory / f"{name}-runs.csv"):
            if path.exists():
                runs = read_runs(path)
                out[name] = {
                    p: statistics.fmean(m[METRIC]) for p, m in runs.items() if m.get(METRIC)
                }
                break
    return out


def regret(policies: Mapping[str, float]) -> tuple[float, str, float]:
    """(1 - adaptive / best fixed, the best fixed policy, its goodput fraction)."""
    fixed = {p: v for p, v in policies.items() if p != ADAPTIVE}
    best = max(fixed, key=lambda p: (fixed[p], p))
    return 1.0 - policies[ADAPTIVE] / fixed[best], best, fixed[best]


def figures(table: Table, scenarios: Sequence[str] = SCENARIOS) -> dict[str, float]:
    """adaptive_regret (mean over `scenarios`) and adaptive_wins_mixed; ValueError names what
    is missing."""
    missing = [s for s in scenarios if s not in table]
    if missing:
        raise ValueError(f"no results for scenario(s) {missing}")
    lacking = [s for s in scenarios if ADAPTIVE not in table[s] or len(table[s]) < 2]
    if lacking:
        raise ValueError(f"scenario(s) {lacking} lack adaptive or any fixed policy")
    regrets = [regret(table[s])[0] for s in scenarios]
    out = {"adaptive_regret": statistics.fmean(regrets)}
    if "mixed" in scenarios:
        out["adaptive_wins_mixed"] = float(regret(table["mixed"])[0] <= 0)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.bench.adaptive",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--runs", type=int, default=3, help="runs per policy (default: %(default)s)")
    p.add_argument(
        "--out",
        type=Path,
        default=build_dir() / "results" / "bench-adaptive",
        help="output directory of a new comparison (default: %(default)s)",
    )
    p.add_argument(
        "--reuse", type=Path, metavar="DIR", help="evaluate an earlier comparison's results"
    )
    args = p.parse_args(argv)
    source = args.reuse
    if source is None:
        cmd = [
            sys.executable, "-m", "mpsched.cli", "compare",
            *(str(REPO_ROOT / "scenarios" / f"{s}.yaml") for s in SCENARIOS),
            "--runs", str(args.runs), "--out", str(args.out),
        ]
        print("+", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd)
        if rc != 0:
            print(f"bench-adaptive: the comparison failed (exit {rc})", file=sys.stderr)
            return rc
        source = args.out
    if not source.is_dir():
        print(f"bench-adaptive: {source} is not a directory", file=sys.stderr)
        return 2
    table = table_from_results(load_results(source))
    for name, row in table_from_csv(source, SCENARIOS).items():
        table.setdefault(name, row)
    try:
        values = figures(table)
    except ValueError as error:
        print(f"bench-adaptive: {source}: {error}", file=sys.stderr)
        return 2
    print(f"{'scenario':18s} {'adaptive':>9s} {'best fixed':>14s} {'goodput_frac':>12s} "
          f"{'regret':>7s}")
    for name in SCENARIOS:
        r, best, frac = regret(table[name])
        print(f"{name:18s} {table[name][ADAPTIVE]:9.3f} {best:>14s} {frac:12.3f} {r:7.3f}")
    for key, value in values.items():
        print(f"{key}={value:.3f}" if key == "adaptive_regret" else f"{key}={int(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
