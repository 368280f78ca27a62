"""`make bench-fabric-mptcp`: MPTCP across a fabric, subflows steered onto distinct paths vs
hashed.

Runs scenarios/fabric-mptcp-steered.yaml and fabric-mptcp-hash.yaml (4 leaves x 2 spines,
2.5 Mbit/s links; two kernel-MPTCP bulk transfers of 2 subflows, leaf1->leaf3 and
leaf2->leaf4, plus all-to-all short web-search flows at 15 % of the uplinks; link
leaf1-spine2 down from 20 to 35 s), `--runs` seeded runs each (default 5), every run on a
fresh fabric testbed (root, BMv2, `make p4 linkem`; the caller holds the testbed lock), the
two variants alternating run by run so that both see the same drift of the shared machine.
The variants differ only in `params.mptcp.steering`. Each run samples the controller's MPTCP
connections every second (`fabric_mptcp_run.SamplingRun`, mptcp.json), from which the
steered runs' share of samples with each connection's subflows on distinct paths is given.

The figure per run is `mptcp_goodput_frac`: each MPTCP connection's goodput over the capacity
its paths can give it, the mean over the two connections (src/mpsched/lab/fabric_mptcp.py
defines it, on the wire: the connection's frames over the alive paths' bottleneck rates over
the measured window, less the larger of what other frames took on the source edge's links
and on the destination edge's). It prints per variant the mean with its 95 % interval
(Student t over the runs), goodput, capacity, goodput over the paths' capacity with nothing
subtracted, and the fraction per connection, the steered/hashed ratio paired by seed, each
run (`*`: marked cpu_bound: the machine, not the network, may have limited it), and ends with

    fabric_mptcp_cpu_bound_runs=        runs marked cpu_bound, both variants            [0]
    fabric_mptcp_goodput_frac_steered=  mean over the steered runs                      [>= 0.9]
    fabric_mptcp_goodput_frac_hashed=   mean over the hashed runs

Runs go to a new directory (--out, default build/results/bench-fabric-mptcp/<time>; a --out
holding runs is refused); `--reuse DIR` runs nothing and evaluates the runs under DIR.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from mpsched import stats
from mpsched.bench.fabric_mptcp_run import SAMPLES_FILE, distinct_share
from mpsched.bench.fct import BenchError, add_out_options, check_out_options, fresh_out
from mpsched.lab.fct import load_results
from mpsched.lab.report import RunResult, format_mean_ci
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT
from mpsched.stats import mean_ci95

log = logging.getLogger(__name__)

VARIANTS = {
    "steered": REPO_ROOT / "scenarios" / "fabric-mptcp-steered.yaml",
    "hashed": REPO_ROOT / "scenarios" / "fabric-mptcp-hash.yaml",
}
POLICY = "ecmp"  # both files run the default class under ecmp
METRIC = "mptcp_goodput_frac"


def run_variants(runs: int, out: Path, duration_s: float | None) -> None:
    """`runs` runs of each variant into OUT/<scenario>/<policy>/run<k>, alternating."""
    from mpsched.bench.fabric_mptcp_run import SamplingRun
    from mpsched.lab import analysis, report
    from mpsched.lab.scenario import load

    scenarios = {}
    for variant, path in VARIANTS.items():
        sc = load(path, fabric=True)
        scenarios[variant] = dataclasses.replace(sc, duration_s=duration_s) if duration_s else sc
    for k in range(runs):
        for variant, sc in scenarios.items():
            run_dir = out / sc.name / POLICY / f"run{k}"
            log.info("%s run %d/%d: %s", variant, k + 1, runs, run_dir)
            try:
                raw = SamplingRun(sc, POLICY, k, run_dir).execute()
                result = analysis.analyse(raw)
            except Exception as exc:  # one failed run must not lose the others
                log.error("%s run %d failed: %s", variant, k, exc)
                continue
            report.write_run(run_dir, result)


def by_variant(results: Sequence[RunResult]) -> dict[str, list[RunResult]]:
    """The runs of each variant (by the scenario's name), in run order."""
    names = {path.stem: variant for variant, path in VARIANTS.items()}
    out: dict[str, list[RunResult]] = {v: [] for v in VARIANTS}
    for r in sorted(results, key=lambda r: r.run):
        if r.scenario in names:
            out[names[r.scenario]].append(r)
    return out


def values(runs: Sequence[RunResult], key: str) -> list[float]:
    return [v for r in runs if math.isfinite(v := r.metrics.get(key, math.nan))]


def pair_values(runs: Sequence[RunResult], pair: str, key: str = METRIC) -> list[float]:
    return [v for r in runs if math.isfinite(v := (r.pairs.get(pair) or {}).get(key, math.nan))]


def by_seed(runs: Sequence[RunResult], key: str = METRIC) -> dict[int, float]:
    """seed -> the run's `key`."""
    return {r.seed: r.metrics.get(key, math.nan) for r in runs}


def distinct_line(source: Path, runs: Sequence[RunResult]) -> str:
    """The steered runs' share of MPTCP samples with every subflow on its own path."""
    distinct = counted = 0
    for r in runs:
        for path in (source / r.scenario / r.policy / f"run{r.run}").glob(SAMPLES_FILE):
            d, n = distinct_share(json.loads(path.read_text()))
            distinct, counted = distinct + d, counted + n
    share = distinct / counted if counted else math.nan
    return (f"steered: subflows of a connection on distinct paths in {distinct} of {counted} "
            f"samples ({share:.1%}; while leaf1-spine2 is down leaf1->leaf3 has one path)")


def report_lines(source: Path) -> list[str]:
    """Everything the bench prints for the runs under `source`."""
    runs = by_variant(load_results(source))
    pairs = sorted({p for rs in runs.values() for r in rs for p, m in r.pairs.items()
                    if METRIC in m})
    head = ["variant", "runs", "goodput_frac (95 % CI)", "goodput Mbit/s", "capacity Mbit/s",
            "goodput / paths", *pairs]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for variant, rs in runs.items():
        cells = [variant, str(len(rs)), format_mean_ci(*mean_ci95(values(rs, METRIC))),
                 format_mean_ci(*mean_ci95(values(rs, "mptcp_goodput_mbps"))),
                 format_mean_ci(*mean_ci95(values(rs, "mptcp_capacity_mbps"))),
                 format_mean_ci(*mean_ci95(values(rs, "mptcp_goodput_of_paths"))),
                 *(format_mean_ci(*mean_ci95(pair_values(rs, p))) for p in pairs)]
        lines.append("| " + " | ".join(cells) + " |")
    ratio = stats.paired_ratio(by_seed(runs["steered"]), by_seed(runs["hashed"]))
    lines.append(f"steered / hashed, paired by seed: {format_mean_ci(ratio.mean, ratio.ci95)} "
                 f"({ratio.n} pairs)")
    lines.append(distinct_line(source, runs["steered"]))
    lines.append("runs (mptcp_goodput_frac per pair; * cpu_bound):")
    for variant, rs in runs.items():
        for r in rs:
            per = ", ".join(f"{p} {(r.pairs.get(p) or {}).get(METRIC, math.nan):.3f}"
                            for p in pairs)
            mark = " *" if r.cpu_bound else ""
            lines.append(f"  {variant} run{r.run} seed {r.seed}: "
                         f"{r.metrics.get(METRIC, math.nan):.3f} ({per}){mark}")
    cpu_bound = sum(1 for rs in runs.values() for r in rs if r.cpu_bound is True)
    lines.append(f"fabric_mptcp_cpu_bound_runs={cpu_bound}")
    for variant, rs in runs.items():
        lines.append(f"fabric_mptcp_goodput_frac_{variant}={stats.mean(values(rs, METRIC)):.3f}")
    return lines


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mpsched bench fabric-mptcp", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5,
                   help="runs per variant (default: %(default)s)")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds per run (default: the scenarios' 60)")
    cpulimit.add_option(p)
    add_out_options(p, "bench-fabric-mptcp", "evaluate the runs under DIR (an earlier --out)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    check_out_options(p, args)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    refused = cpulimit.confine(args.cpu_limit, "bench-fabric-mptcp")
    if refused is not None:
        return refused
    try:
        if args.reuse is not None:
            if not load_results(args.reuse):
                raise BenchError(f"{args.reuse} holds no runs of bench-fabric-mptcp")
            source = args.reuse
        else:
            source = fresh_out(args.out, "bench-fabric-mptcp")
            log.info("runs go to %s", source)
            run_variants(args.runs, source, args.duration)
        print("\n".join(report_lines(source)))
    except BenchError as error:
        print(f"bench-fabric-mptcp: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
