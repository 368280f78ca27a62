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

each the ratio of the means over the runs. The tables before them give every policy's
figures with 95 % confidence intervals, and the CA policy's ratios to each baseline paired by
seed (runs with the same seed see the same arrivals and sizes, so the seed-to-seed spread of
the offered load cancels). The figures come from this invocation's runs alone: they go into a
new directory (--out, default build/results/bench-fct/<time>; a --out that already holds runs
is refused). `--reuse DIR` runs nothing and reads the runs under DIR instead (any run
directory of `mpsched compare` with these policies on one scenario: the runs of the comparison
in docs/results/congestion.md are such a directory); runs of several scenarios are refused.
Needs root, BMv2 and `make p4 linkem`.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mpsched.lab.fct import FctRow, fct_rows, fct_table, load_results, paired_ratios, run_fct
from mpsched.lab.report import RunResult
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT, build_dir
from mpsched.stats import ratio

log = logging.getLogger(__name__)

SCENARIO = REPO_ROOT / "scenarios" / "asymmetric.yaml"
LOAD_PCT = 70.0
BASELINES = ("ecmp", "letflow")
DEFAULT_POLICY = "ca"


def row_mean(row: FctRow | None, what: str) -> float:
    """A row's mean over its runs: "goodput", "p99" (all flows) or "short" (< 100 kB)."""
    if row is None:
        return math.nan
    if what == "goodput":
        return row.goodput_mbps[0]
    if what == "p99":
        return row.fct_p99_s[0]
    return row.buckets.get("lt100k", {}).get("fct_mean_s", (math.nan, math.nan))[0]


def figures(rows: list[FctRow], policy: str) -> dict[str, float]:
    """The four key figures of `policy` against ecmp and letflow from `rows`."""
    by = {r.policy: r for r in rows}
    ca, ecmp, letflow = by.get(policy), by.get("ecmp"), by.get("letflow")
    return {
        "fct_short_ratio_vs_ecmp": ratio(row_mean(ca, "short"), row_mean(ecmp, "short")),
        "fct_short_ratio_vs_letflow": ratio(row_mean(ca, "short"), row_mean(letflow, "short")),
        "fct_p99_ratio_vs_letflow": ratio(row_mean(ca, "p99"), row_mean(letflow, "p99")),
        "goodput_ratio_vs_letflow": ratio(row_mean(ca, "goodput"), row_mean(letflow, "goodput")),
    }


PAIRED = (
    ("fct_lt100k_mean_s", "mean FCT < 100 kB"),
    ("fct_p99_s", "p99 FCT, all flows"),
    ("goodput_mbps", "goodput"),
)


def paired_table(results: list, policy: str) -> str:
    """`policy` against each baseline, paired by seed (`paired_ratios`): mean ratio ± 95 % CI."""
    lines = [f"{policy} / baseline, paired by seed (mean ± 95 % CI over the seeds):"]
    for metric, label in PAIRED:
        for base in BASELINES:
            got = paired_ratios(results, metric, base)
            for (_scenario, pol), ((mean, ci), n) in sorted(got.items()):
                if pol == policy:
                    lines.append(f"  {label:20s} vs {base:8s} {mean:.3f} ± {ci:.3f} ({n} seeds)")
    return "\n".join(lines)


class BenchError(Exception):
    """The runs cannot give this benchmark's figures (the message says why)."""


def select_results(results: Sequence[RunResult], policies: Sequence[str]) -> list[RunResult]:
    """The runs of `policies`; BenchError when there are none or they come from several
    scenarios (their rows would be mixed under one policy)."""
    mine = [r for r in results if r.policy in policies]
    if not mine:
        raise BenchError(f"no runs of {', '.join(policies)}")
    scenarios = sorted({r.scenario for r in mine})
    if len(scenarios) > 1:
        raise BenchError(f"runs of several scenarios ({', '.join(scenarios)}): the figures "
                         "compare policies on one scenario; name one scenario's runs")
    return mine


def add_out_options(p: argparse.ArgumentParser, bench: str, reuse_help: str) -> None:
    """The options where a bench's runs go (`--out`, a new directory, `fresh_out`) or which
    earlier runs it evaluates instead (`--reuse DIR`); `check_out_options` checks them."""
    p.add_argument("--out", type=Path, default=None,
                   help=f"new directory for the runs (default: build/results/{bench}/<time>)")
    p.add_argument("--reuse", type=Path, metavar="DIR", default=None,
                   help=f"run nothing: {reuse_help}")


def check_out_options(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (usage error, exit 2) `--runs` below 1 and `--out` beside `--reuse`."""
    if args.runs < 1:
        p.error("--runs must be >= 1")
    if args.reuse is not None and args.out is not None:
        p.error("--reuse DIR reads DIR and runs nothing: --out does not apply")


def fresh_out(out: Path | None, bench: str = "bench-fct") -> Path:
    """The directory for this invocation's runs: `out`, which must hold no runs yet, or a
    new build/results/<bench>/<time>."""
    if out is None:
        base = build_dir() / "results" / bench / time.strftime("%Y%m%d-%H%M%S")
        out, k = base, 1
        while out.exists():
            k += 1
            out = base.with_name(f"{base.name}-{k}")
        return out
    if load_results(out):
        raise BenchError(f"{out} already holds runs: name a new --out, or evaluate those "
                         f"runs with --reuse {out}")
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mpsched bench fct",
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
    cpulimit.add_option(p)
    add_out_options(p, "bench-fct", "evaluate the runs under DIR (one scenario)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    check_out_options(p, args)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    policies = [*BASELINES, args.policy]
    refused = cpulimit.confine(args.cpu_limit, "bench-fct")
    if refused is not None:
        return refused
    try:
        if args.reuse is not None:
            if not args.reuse.is_dir():
                raise BenchError(f"{args.reuse} is not a directory")
            source = args.reuse
        else:
            source = fresh_out(args.out)
            log.info("runs go to %s", source)
            run_fct([args.scenario], policies, args.runs, [LOAD_PCT], args.duration, source)
        results = select_results(load_results(source), policies)
    except BenchError as error:
        print(f"bench-fct: {error}", file=sys.stderr)
        return 2
    rows = fct_rows(results)
    print(fct_table(rows))
    print(paired_table(results, args.policy))
    for key, value in figures(rows, args.policy).items():
        print(f"{key}={value:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
