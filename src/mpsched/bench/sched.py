"""`make bench-sched`: the schedulers on the many-flow workload of LLHD scenario #1, short.

Runs `mpsched compare scenarios/llhd-1-manyflows.yaml` (every policy of the scenario's
compare list; 3 seeded runs each by default, each on a fresh testbed) and reads the
per-run metrics back from `<out>/llhd-1-manyflows/runs.csv`. The best policy is the one
with the highest mean goodput fraction (goodput / summed configured capacity). Ends with

    goodput_frac_best=   the best policy's mean goodput fraction
    fct_ratio_best_vs_ecmp=   its mean flow completion time / ECMP's
    ooo_ratio_best_vs_rr=     its out-of-order arrivals (RFC 4737) / per-packet round robin's

The full comparison (more scenarios, >= 5 runs) is `make compare`; docs/results/ has it.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from mpsched import stats
from mpsched.lab.report import read_csv
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT, build_dir

SCENARIO = REPO_ROOT / "scenarios" / "llhd-1-manyflows.yaml"


def read_runs(path: Path) -> dict[str, dict[str, list[float]]]:
    """policy -> metric -> values over its runs (NaN and empty cells left out), from a
    runs.csv as `report.read_csv` reads it."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in read_csv(path):
        for key, x in r.metrics.items():
            if x is not None and not math.isnan(x):
                out[r.policy][key].append(x)
    return out


def mean(runs: dict[str, dict[str, list[float]]], policy: str, metric: str) -> float:
    values = runs.get(policy, {}).get(metric, [])
    return stats.mean(values)


def figures(runs: dict[str, dict[str, list[float]]]) -> tuple[str, dict[str, float]]:
    best = max(runs, key=lambda p: (mean(runs, p, "goodput_frac"), p))
    fct = mean(runs, best, "fct_mean_s") / mean(runs, "ecmp", "fct_mean_s")
    ooo_rr = mean(runs, "rr", "ooo_packets")
    ooo = mean(runs, best, "ooo_packets") / ooo_rr if ooo_rr else math.nan
    return best, {
        "goodput_frac_best": mean(runs, best, "goodput_frac"),
        "fct_ratio_best_vs_ecmp": fct,
        "ooo_ratio_best_vs_rr": ooo,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench sched",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--runs", type=int, default=3, help="runs per policy (default: %(default)s)")
    p.add_argument(
        "--duration", type=float, default=20.0, help="seconds per run (default: %(default)s)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=build_dir() / "results" / "bench-sched",
        help="output directory (default: %(default)s)",
    )
    p.add_argument(
        "--reuse", action="store_true", help="only read an earlier run's runs.csv from --out"
    )
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    refused = cpulimit.confine(args.cpu_limit, "bench-sched")
    if refused is not None:
        return refused
    runs_csv = args.out / "llhd-1-manyflows" / "runs.csv"
    if not args.reuse:
        cmd = [
            sys.executable,
            "-m",
            "mpsched.cli",
            "compare",
            str(SCENARIO),
            "--runs",
            str(args.runs),
            "--duration",
            str(args.duration),
            "--out",
            str(args.out),
        ]
        print("+", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd)
        if rc != 0:
            print(f"bench-sched: the comparison failed (exit {rc})", file=sys.stderr)
            return rc
    runs = read_runs(runs_csv)
    if "ecmp" not in runs or "rr" not in runs:
        print(f"bench-sched: {runs_csv} lacks ecmp or rr runs", file=sys.stderr)
        return 2
    print(
        f"{'policy':14s} {'runs':>4s} {'goodput_frac':>12s} {'fct_mean_s':>10s} "
        f"{'ooo_packets':>11s} {'reorder_ratio':>13s}"
    )
    for policy in sorted(runs, key=lambda q: -mean(runs, q, "goodput_frac")):
        print(
            f"{policy:14s} {len(runs[policy]['goodput_frac']):4d} "
            f"{mean(runs, policy, 'goodput_frac'):12.3f} {mean(runs, policy, 'fct_mean_s'):10.2f} "
            f"{mean(runs, policy, 'ooo_packets'):11.0f} {mean(runs, policy, 'reorder_ratio'):13.3f}"
        )
    best, values = figures(runs)
    print(f"best policy (highest mean goodput fraction): {best}")
    for key, value in values.items():
        print(f"{key}={value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
