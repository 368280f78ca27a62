"""`make bench-fct`: congestion-aware path choice against ECMP and LetFlow where it matters.

Runs the asymmetric web-search scenario (scenarios/asymmetric.yaml: paths of 8/8/8/2 Mbit/s,
open-loop Poisson arrivals of web-search flow sizes at 70 % of the summed capacity) under
ecmp, letflow and the congestion-aware policy (`--policy`, default the best one of
docs/results/congestion.md), `--runs` seeded runs each on a fresh testbed
(`mpsched.lab.fct.run_fct`), and ends with

    fct_short_ratio_vs_ecmp=     mean FCT of flows < 100 kB: the CA policy / ecmp      [<= 0.5]
    fct_short_ratio_vs_letflow=  the same against letflow                                [<= 0.75]
    fct_p99_ratio_vs_letflow=    p99 FCT of all flows: the CA policy / letflow           [<= 0.8]
    goodput_ratio_vs_letflow=    goodput: the CA policy / letflow                        [>= 1.0]

each the ratio of the means over the runs. The table before them gives every policy's
figures with 95 % confidence intervals. Needs root, BMv2 and `make p4 linkem`.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from pathlib import Path

from mpsched.lab.fct import FctRow, fct_rows, fct_table, load_results, run_fct
from mpsched.proc.layout import REPO_ROOT, build_dir

log = logging.getLogger(__name__)

SCENARIO = REPO_ROOT / "scenarios" / "asymmetric.yaml"
LOAD_PCT = 70.0
BASELINES = ("ecmp", "letflow")
DEFAULT_POLICY = "ca"


def _mean(row: FctRow | None, what: str) -> float:
    """A row's mean over its runs: "goodput", "p99" (all flows) or "short" (< 100 kB)."""
    if row is None:
        return math.nan
    if what == "goodput":
        return row.goodput_mbps[0]
    if what == "p99":
        return row.fct_p99_s[0]
    return row.buckets.get("lt100k", {}).get("fct_mean_s", (math.nan, math.nan))[0]


def _ratio(a: float, b: float) -> float:
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


def figures(rows: list[FctRow], policy: str) -> dict[str, float]:
    """The four key figures of `policy` against ecmp and letflow from `rows`."""
    by = {r.policy: r for r in rows}
    ca, ecmp, letflow = by.get(policy), by.get("ecmp"), by.get("letflow")
    return {
        "fct_short_ratio_vs_ecmp": _ratio(_mean(ca, "short"), _mean(ecmp, "short")),
        "fct_short_ratio_vs_letflow": _ratio(_mean(ca, "short"), _mean(letflow, "short")),
        "fct_p99_ratio_vs_letflow": _ratio(_mean(ca, "p99"), _mean(letflow, "p99")),
        "goodput_ratio_vs_letflow": _ratio(_mean(ca, "goodput"), _mean(letflow, "goodput")),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.bench.fct",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--policy", default=DEFAULT_POLICY,
                   help="the congestion-aware policy (default: %(default)s)")
    p.add_argument("--runs", type=int, default=5, help="runs per policy (default: %(default)s)")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds per run (default: the scenario's)")
    p.add_argument("--scenario", type=Path, default=SCENARIO,
                   help="scenario file (default: scenarios/asymmetric.yaml)")
    p.add_argument("--out", type=Path, default=build_dir() / "results" / "bench-fct",
                   help="output directory (default: %(default)s)")
    p.add_argument("--reuse", action="store_true",
                   help="only read an earlier run's results from --out")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be >= 1")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    policies = [*BASELINES, args.policy]
    if args.reuse:
        rows = fct_rows(load_results(args.out))
    else:
        rows = run_fct([args.scenario], policies, args.runs, [LOAD_PCT], args.duration, args.out)
    print(fct_table(rows))
    for key, value in figures(rows, args.policy).items():
        print(f"{key}={value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
