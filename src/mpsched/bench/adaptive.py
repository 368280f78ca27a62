"""`make bench-adaptive`: the context-adaptive policy against the best fixed policy.

On the four scenarios of docs/results (llhd-1-manyflows, cmt-la, llhd-2, lm3-failure) and
scenarios/mixed.yaml (conditions changing every 20 s), each under its compare list (every
fixed policy and `adaptive`), the mean goodput fraction (goodput / summed configured
capacity) per policy over the runs. Per scenario the regret of `adaptive` is
1 - its goodput fraction / the best fixed policy's (negative when it beats them all). Ends with

    adaptive_regret=       the mean regret over the five scenarios                [<= 0.05]
    adaptive_wins_mixed=   1 if adaptive beats every fixed policy on mixed beyond the
                           confidence interval, else 0: paired by seed, the 95 % interval
                           of adaptive's goodput fraction / the fixed policy's lies above 1

Without --reuse it runs `mpsched compare` on the five scenarios (`--runs`, default 5: many
hours, the scenarios' durations + about 6 s per run for 14-19 policies each; `--scenario`
runs some of them, `--resume` keeps the runs --out already holds, so the comparison can be
split over several calls into one --out; without --resume a --out that already holds runs is
refused, so the figures come from this invocation's runs). `--reuse DIR` evaluates an
earlier comparison instead: the run results under DIR (`*__run*.json`, as
`mpsched.lab.fct.load_results` reads them), or, where there are none, its runs.csv tables
(`DIR/<scenario>/runs.csv`, or `DIR/<scenario>-runs.csv` as in docs/results). `--markdown
FILE` also writes, per scenario, every policy's goodput fraction and adaptive's ratio to it
paired by seed (the tables of docs/results/adaptive.md).
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mpsched.lab.fct import load_results
from mpsched.lab.report import RunResult, format_mean_ci, read_csv
from mpsched.lab.tables import CPU_MARK
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT, build_dir
from mpsched.stats import mean, mean_ci95, paired_ratio

SCENARIOS = ("llhd-1-manyflows", "cmt-la", "llhd-2", "lm3-failure", "mixed")
ADAPTIVE = "adaptive"
METRIC = "goodput_frac"

Table = dict[str, dict[str, float]]  # scenario -> policy -> mean goodput fraction
# one run's goodput fraction: (scenario, policy, seed, value)
Record = tuple[str, str, int, float]


def records_from_results(results: Sequence[RunResult]) -> list[Record]:
    """(scenario, policy, seed, goodput fraction) per run; runs without it left out."""
    return [
        (r.scenario, r.policy, r.seed, x)
        for r in results
        if (x := r.metrics.get(METRIC, math.nan)) is not None and not math.isnan(x)
    ]


def results_from_csv(directory: Path, scenarios: Sequence[str]) -> list[RunResult]:
    """The runs of runs.csv tables: DIR/<scenario>/runs.csv or DIR/<scenario>-runs.csv."""
    out: list[RunResult] = []
    for name in scenarios:
        for path in (directory / name / "runs.csv", directory / f"{name}-runs.csv"):
            if path.exists():
                out += read_csv(path)
                break
    return out


def records_from_csv(directory: Path, scenarios: Sequence[str]) -> list[Record]:
    """(scenario, policy, seed, goodput fraction) from runs.csv tables (`results_from_csv`)."""
    return records_from_results(results_from_csv(directory, scenarios))


def table_from_records(records: Sequence[Record]) -> Table:
    """scenario -> policy -> mean goodput fraction over its runs."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for scenario, policy, _, x in records:
        values[scenario][policy].append(x)
    return {s: {p: mean(v) for p, v in pols.items()} for s, pols in values.items()}


def table_from_csv(directory: Path, scenarios: Sequence[str]) -> Table:
    """The same from runs.csv tables: DIR/<scenario>/runs.csv or DIR/<scenario>-runs.csv."""
    return table_from_records(records_from_csv(directory, scenarios))


def by_seed(records: Sequence[Record], scenario: str) -> dict[str, dict[int, float]]:
    """policy -> seed -> goodput fraction, the runs of `scenario`."""
    out: dict[str, dict[int, float]] = defaultdict(dict)
    for s, policy, seed, x in records:
        if s == scenario:
            out[policy][seed] = x
    return out


def paired_ratios(records: Sequence[Record], scenario: str) -> dict[str, tuple[float, float, int]]:
    """Per fixed policy of `scenario`: adaptive's goodput fraction / the policy's over the
    seeds both ran, as (mean, 95 % CI half width, seeds); NaN where undefined."""
    runs = by_seed(records, scenario)
    mine = runs.get(ADAPTIVE, {})
    out = {}
    for policy, theirs in runs.items():
        if policy != ADAPTIVE:
            got = paired_ratio(mine, theirs)
            out[policy] = (got.mean, got.ci95, got.n)
    return out


def paired_lower_bounds(records: Sequence[Record], scenario: str) -> dict[str, float]:
    """Per fixed policy of `scenario`: the lower end of the 95 % interval of adaptive's
    goodput fraction / the policy's over the seeds both ran (NaN with fewer than 2 seeds).
    Above 1: adaptive beats that policy beyond the interval."""
    return {p: m - h for p, (m, h, _) in paired_ratios(records, scenario).items()}


def _interval(values: Iterable[float]) -> tuple[float, float]:
    """The 95 % interval (low, high) of the mean of `values`; one value is a point."""
    m, h = mean_ci95(values)
    h = h if math.isfinite(h) else 0.0
    return m - h, m + h


def to_extend(records: Sequence[Record], scenario: str) -> list[str]:
    """The policies of `scenario` whose runs are too few to tell them from the leader: the
    best fixed policy (by mean goodput fraction) and every policy, `adaptive` included, whose
    95 % interval overlaps the best's. [] when the best's interval overlaps none (or the
    scenario has no runs). These get 10 runs, so that their intervals can separate."""
    runs = by_seed(records, scenario)
    fixed = {p: v for p, v in runs.items() if p != ADAPTIVE and v}
    if not fixed:
        return []
    best = max(fixed, key=lambda p: (mean(fixed[p].values()), p))
    lo, hi = _interval(runs[best].values())
    out = []
    for policy, values in runs.items():
        if policy != best and values:
            plo, phi = _interval(values.values())
            if phi >= lo and plo <= hi:
                out.append(policy)
    return sorted([best, *out]) if out else []


def regret(policies: Mapping[str, float]) -> tuple[float, str, float]:
    """(1 - adaptive / best fixed, the best fixed policy, its goodput fraction)."""
    fixed = {p: v for p, v in policies.items() if p != ADAPTIVE}
    best = max(fixed, key=lambda p: (fixed[p], p))
    return 1.0 - policies[ADAPTIVE] / fixed[best], best, fixed[best]


def figures(
    table: Table, scenarios: Sequence[str] = SCENARIOS, records: Sequence[Record] = ()
) -> dict[str, float]:
    """adaptive_regret (mean over `scenarios`) and adaptive_wins_mixed (from the per-seed
    `records` of mixed: `paired_lower_bounds` all above 1); ValueError names what is
    missing."""
    missing = [s for s in scenarios if s not in table]
    if missing:
        raise ValueError(f"no results for scenario(s) {missing}")
    lacking = [s for s in scenarios if ADAPTIVE not in table[s] or len(table[s]) < 2]
    if lacking:
        raise ValueError(f"scenario(s) {lacking} lack adaptive or any fixed policy")
    regrets = [regret(table[s])[0] for s in scenarios]
    out = {"adaptive_regret": mean(regrets)}
    if "mixed" in scenarios:
        bounds = paired_lower_bounds(records, "mixed")
        out["adaptive_wins_mixed"] = float(
            bool(bounds) and all(b > 1 for b in bounds.values())
        )
    return out


def markdown(results: Sequence[RunResult], scenarios: Sequence[str] = SCENARIOS) -> str:
    """Per scenario a table: policy, runs (CPU-bound ones marked), goodput fraction (mean ±
    95 % CI), and adaptive / the policy paired by seed (mean ± 95 % CI over the seeds both
    ran); policies by descending mean goodput fraction."""
    records = records_from_results(results)
    bound: dict[tuple[str, str], int] = defaultdict(int)
    for r in results:
        bound[(r.scenario, r.policy)] += int(r.cpu_bound is True)
    parts = []
    for name in scenarios:
        values = by_seed(records, name)
        if not values:
            continue
        ratios = paired_ratios(records, name)
        lines = [
            f"### {name}\n",
            "| policy | runs | goodput_frac | adaptive / policy (paired) |",
            "| --- | ---: | ---: | ---: |",
        ]
        order = sorted(values, key=lambda p: -mean(values[p].values()))
        for policy in order:
            runs = values[policy]
            k = bound[(name, policy)]
            count = f"{len(runs)}" + (f" ({k}{CPU_MARK})" if k else "")
            cell = format_mean_ci(*mean_ci95(runs.values()))
            ratio = "\u2013"
            if policy in ratios and ratios[policy][2]:
                m, h, n = ratios[policy]
                ratio = format_mean_ci(m, h) + (f" (n={n})" if n < len(runs) else "")
            label = f"**{policy}**" if policy == ADAPTIVE else policy
            lines.append(f"| {label} | {count} | {cell} | {ratio} |")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def plan(records: Sequence[Record], runs: int, source: Path) -> str:
    """Per scenario `to_extend` and the `mpsched compare --resume` that runs them up to
    `runs` runs into `source` (kept runs stay, runs.csv rows included). A table in the
    layout of docs/results (`<scenario>-runs.csv`) is first copied to where `--resume`
    reads it, build/results/extend/<scenario>/runs.csv."""
    lines = []
    for name in SCENARIOS:
        out, copy = source, ""
        flat = source / f"{name}-runs.csv"
        if flat.exists() and not (source / name / "runs.csv").exists():
            out = build_dir() / "results" / "extend"
            copy = f"  mkdir -p {out / name} && cp {flat} {out / name / 'runs.csv'}\n"
        policies = to_extend(records, name)
        counts = by_seed(records, name)
        short = [p for p in policies if len(counts[p]) < runs]
        if not short:
            lines.append(f"{name}: nothing to run" + (" (no runs)" if not counts else ""))
            continue
        flags = " ".join(f"--policy {p}" for p in short)
        lines.append(
            f"{name}: {', '.join(f'{p} ({len(counts[p])})' for p in short)}\n{copy}"
            f"  .venv/bin/python -m mpsched.cli compare scenarios/{name}.yaml {flags} "
            f"--runs {runs} --resume --out {out}"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mpsched bench adaptive",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--runs", type=int, default=5, help="runs per policy (default: %(default)s)")
    p.add_argument(
        "--scenario",
        action="append",
        choices=SCENARIOS,
        help="run only these scenarios (repeatable; default: all five); the figures need all",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs --out already holds (mpsched compare --resume)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=build_dir() / "results" / "bench-adaptive",
        help="output directory of a new comparison (default: %(default)s)",
    )
    p.add_argument(
        "--reuse", type=Path, metavar="DIR", help="evaluate an earlier comparison's results"
    )
    p.add_argument(
        "--plan", type=int, metavar="N",
        help="with --reuse: per scenario, the policies to run up to N runs (the best fixed "
        "policy and those whose 95 %% interval overlaps it, `to_extend`) and the command "
        "that does it; nothing is run",
    )
    p.add_argument(
        "--markdown", type=Path, metavar="FILE",
        help="also write the per-scenario tables (goodput fraction, adaptive / each policy "
        "paired by seed) to FILE",
    )
    cpulimit.add_option(p)
    return p


def run_comparison(args: argparse.Namespace) -> int:
    """`mpsched compare` of the scenarios into args.out; its exit status."""
    cmd = [
        sys.executable, "-m", "mpsched.cli", "compare",
        *(str(REPO_ROOT / "scenarios" / f"{s}.yaml") for s in args.scenario or SCENARIOS),
        "--runs", str(args.runs), "--out", str(args.out),
        *(["--resume"] if args.resume else []),
    ]
    print("+", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd)
    if rc != 0:
        print(f"bench-adaptive: the comparison failed (exit {rc})", file=sys.stderr)
    return rc


def report(records: list[Record], source: Path) -> int:
    """The per-scenario table and the key=value lines; 2 if the figures cannot be had."""
    table = table_from_records(records)
    try:
        values = figures(table, records=records)
    except ValueError as error:
        print(f"bench-adaptive: {source}: {error}", file=sys.stderr)
        return 2
    print(f"{'scenario':18s} {'adaptive':>9s} {'best fixed':>14s} {'goodput_frac':>12s} "
          f"{'regret':>7s}")
    for name in SCENARIOS:
        r, best, frac = regret(table[name])
        print(f"{name:18s} {table[name][ADAPTIVE]:9.3f} {best:>14s} {frac:12.3f} {r:7.3f}")
    bounds = paired_lower_bounds(records, "mixed")
    print("mixed, paired by seed: lower end of the 95 % interval of adaptive / each fixed "
          "policy: " + ", ".join(f"{p} {b:.3f}" for p, b in sorted(bounds.items())))
    for key, value in values.items():
        print(f"{key}={value:.3f}" if key == "adaptive_regret" else f"{key}={int(value)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.plan is not None and args.reuse is None:
        p.error("--plan needs --reuse DIR (it plans from results, it runs nothing)")
    source = args.reuse
    if source is None and not args.resume and args.out.is_dir() and load_results(args.out):
        print(f"bench-adaptive: {args.out} already holds runs of an earlier comparison: "
              f"--resume adds to them, --reuse {args.out} evaluates them, or name another "
              "--out", file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-adaptive")
    if refused is not None:
        return refused
    if source is None:
        rc = run_comparison(args)
        if rc != 0:
            return rc
        source = args.out
    if not source.is_dir():
        print(f"bench-adaptive: {source} is not a directory", file=sys.stderr)
        return 2
    results = load_results(source)
    have = {r.scenario for r in results}
    results += [r for r in results_from_csv(source, SCENARIOS) if r.scenario not in have]
    records = records_from_results(results)
    if args.plan is not None:
        print(plan(records, args.plan, source))
        return 0
    if args.markdown is not None:
        args.markdown.write_text(markdown(results))
        print(f"bench-adaptive: tables in {args.markdown}")
    return report(records, source)


if __name__ == "__main__":
    sys.exit(main())
