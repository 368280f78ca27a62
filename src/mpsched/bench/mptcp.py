"""`make bench-mptcp`: MPTCP over ECMP-style hashing vs MPTCP with subflow steering, short.

Runs `mpsched compare` on scenarios/mptcp-hash.yaml (steering off: the three subflows of
one kernel-MPTCP connection are hashed like any TCP flow) and scenarios/mptcp-steered.yaml
(steering on: each subflow pinned to its own path), 3 seeded runs each by default, each
on a fresh testbed, and reads the per-run metrics back from the runs.csv files. Both use
three paths of 10 / 6 / 4 Mbit/s. Ends with

    mptcp_goodput_frac_ecmp=      mean goodput / summed capacity, subflows hashed
    mptcp_goodput_frac_steered=   the same with steering

The full comparison (>= 5 runs, and the time to recover from a path failure with the
mptcp-failure-* scenarios) is in docs/results/mptcp.md with its command.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
from pathlib import Path

from mpsched import stats
from mpsched.bench.sched import read_runs
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT, build_dir

SCENARIOS = {
    "ecmp": REPO_ROOT / "scenarios" / "mptcp-hash.yaml",
    "steered": REPO_ROOT / "scenarios" / "mptcp-steered.yaml",
}
POLICY = "ecmp"  # both scenarios run the default class under ecmp


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench mptcp",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--runs", type=int, default=3, help="runs per variant (default: %(default)s)")
    p.add_argument(
        "--out",
        type=Path,
        default=build_dir() / "results" / "bench-mptcp",
        help="output directory (default: %(default)s)",
    )
    p.add_argument(
        "--reuse", action="store_true", help="only read an earlier run's runs.csv from --out"
    )
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    refused = cpulimit.confine(args.cpu_limit, "bench-mptcp")
    if refused is not None:
        return refused
    if not args.reuse:
        cmd = [
            sys.executable, "-m", "mpsched.cli", "compare",
            *[str(s) for s in SCENARIOS.values()],
            "--runs", str(args.runs), "--out", str(args.out),
        ]  # fmt: skip
        print("+", " ".join(cmd), flush=True)
        rc = subprocess.call(cmd)
        if rc != 0:
            print(f"bench-mptcp: the comparison failed (exit {rc})", file=sys.stderr)
            return rc
    figures: dict[str, float] = {}
    print(f"{'variant':8s} {'runs':>4s} {'goodput_frac':>12s} {'min':>6s} {'max':>6s}")
    for variant, scenario in SCENARIOS.items():
        runs_csv = args.out / scenario.stem / "runs.csv"
        if not runs_csv.exists():
            print(f"bench-mptcp: {runs_csv} is missing", file=sys.stderr)
            return 2
        frac = read_runs(runs_csv).get(POLICY, {}).get("goodput_frac", [])
        figures[variant] = stats.mean(frac)
        low, high = (min(frac), max(frac)) if frac else (math.nan, math.nan)
        print(f"{variant:8s} {len(frac):4d} {figures[variant]:12.3f} {low:6.3f} {high:6.3f}")
    for variant in SCENARIOS:
        print(f"mptcp_goodput_frac_{variant}={figures[variant]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
