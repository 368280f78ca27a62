"""`make bench-fabric`: congestion-aware choice per destination on an asymmetric leaf-spine.

Two phases, every run on a fresh fabric testbed (root, BMv2, `make p4 linkem`):

1. **FCT**: scenarios/fabric-asymmetric.yaml (4 leaves x 2 spines, 2.5 Mbit/s links,
   leaf1-spine2 at a quarter of that: CONGA's asymmetric case), all-to-all open-loop Poisson
   flows of web-search sizes at 70 % of the leaves' uplink capacity, under ecmp, letflow,
   the congestion-aware policy (`--policy`, default ca) and the papers' congestion-aware
   variants named by `--papers` (default llhd-ca; `all`: llhd-ca, cmtla-ca, fdmvqs-ca and
   qos-ca; `none`), `--runs` seeded runs each (`mpsched.lab.fct.run_fct`; runs with the same
   seed see the same arrivals, sizes and destinations, so the ratios are also given paired by
   seed).
2. **Failover**: `--failover-runs` runs of scenarios/fabric-failure.yaml (leaf1-spine2 down
   from 20 to 40 s) under the congestion-aware policy, with captures at every edge's ports
   towards the spines; the time from the link going down to the last data frame (not probe)
   whose tag names a path through it, the worst over the pairs
   (src/mpsched/bench/fabric_failover.py says how and why).

It ends with

    fabric_fct_short_ratio_vs_ecmp=     mean FCT of flows < 100 kB: CA / ecmp        [<= 0.5]
    fabric_fct_short_ratio_vs_letflow=  the same against letflow                     [<= 0.75]
    fabric_goodput_ratio_vs_letflow=    goodput: CA / letflow                        [>= 1.0]
    fabric_failover_ms=                 the failover phase's figure, median over runs [<= 200]
    fabric_cpu_bound_runs=              runs of both phases marked cpu_bound          [0]
    fabric_fct_short_ratio_best_paper_vs_letflow=
                                        the best paper variant run: its mean FCT of
                                        flows < 100 kB / letflow's, paired by seed    [<= 0.75]
    fabric_controller_cpu_pct=          the controller's share of one core, mean over
                                        the CA policy's runs                          [<= 5]
    fabric_idle_pct_min=                the lowest mean machine idle of any run       [>= 35]
    fabric_switch_cpu_ratio_plain=      the switches' CPU per delivered Mbit/s under
                                        the CA policy / under the plain ECMP program,
                                        paired by seed                                [<= 1.3]
    fabric_quiet_busy_pct=              the machine's busy share with the fabric up
                                        and no traffic for 30 s under the CA policy,
                                        less the same with the plain program          [<= 10]

(the first three: ratios of the means over the runs; NaN where runs are missing). The plain
ECMP program (p4src/bench/plain_ecmp.p4, no controller: docs/fabric-lab.md, "A plain-forwarding
reference") runs the FCT phase's seeds too, as policy `plain-ecmp`, and a quiet phase
(src/mpsched/bench/fabric_quiet.py) brings the fabric up without traffic under each; `--no-plain`
leaves both out. Under `--cpu-limit P` (CPU_LIMIT=P) idle and busy are of the limit. The best
paper variant is the one of least paired ratio among those with runs (named before the keys).
Why llhd-ca alone by default: it had the least paired short-flow FCT against letflow of the
four on the two-edge asymmetric case (docs/results/congestion.md: 0.58 ± 0.14; qos-ca 0.62,
fdmvqs-ca 0.66, cmtla-ca 0.78), and each variant adds `--runs` runs (about 7 min at 5).

Before them: the FCT table per policy, the CA policy's ratios paired by seed, the paper
variants' short-flow FCT against letflow paired by seed, the mean FCT of short flows per ordered
pair of leaves and policy (where the asymmetry bites: the pairs from and to leaf1), and each
failover run. Runs go to a new directory (--out, default build/results/bench-fabric/<time>:
OUT/fct/... and OUT/failover/...; a --out holding runs is refused); `--reuse DIR` runs
nothing and evaluates the runs under DIR.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from mpsched import stats
from mpsched.bench.fabric_cost import (
    SWITCH_COST,
    controller_core_pct,
    idle_min_pct,
    with_switch_cost,
)
from mpsched.bench.fabric_failover import DEFAULT_POLICY, read_failovers, run_failover
from mpsched.bench.fabric_quiet import KEY as QUIET_KEY
from mpsched.bench.fabric_quiet import QUIET_S, read_quiet, run_quiet
from mpsched.bench.fct import (
    BenchError,
    add_out_options,
    check_out_options,
    fresh_out,
    paired_table,
    row_mean,
    select_results,
)
from mpsched.lab.fabrictable import TIMEOUT_S, waits
from mpsched.lab.fct import FctRow, fct_rows, fct_table, load_results, paired_ratios, run_fct
from mpsched.lab.programs import PLAIN_ECMP
from mpsched.lab.report import RunResult
from mpsched.lab.scenario import load
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT

log = logging.getLogger(__name__)

SCENARIO = REPO_ROOT / "scenarios" / "fabric-asymmetric.yaml"
LOAD_PCT = 70.0
BASELINES = ("ecmp", "letflow")
PAPER_CA = ("llhd-ca", "cmtla-ca", "fdmvqs-ca", "qos-ca")  # the papers' congestion-aware variants
DEFAULT_PAPERS = "llhd-ca"
SHORT = "fct_lt100k_mean_s"
BEST_PAPER_KEY = "fabric_fct_short_ratio_best_paper_vs_letflow"


def figures(rows: list[FctRow], policy: str, failover_ms: Sequence[float],
            cpu_bound_runs: int) -> dict[str, float]:
    """The five key figures: `policy`'s ratios to ecmp and letflow from `rows`, the median of
    the finite `failover_ms` (NaN if none), the CPU-bound runs."""
    by = {r.policy: r for r in rows}
    ca, ecmp, letflow = by.get(policy), by.get("ecmp"), by.get("letflow")
    finite = [v for v in failover_ms if math.isfinite(v)]
    return {
        "fabric_fct_short_ratio_vs_ecmp": stats.ratio(row_mean(ca, "short"),
                                                      row_mean(ecmp, "short")),
        "fabric_fct_short_ratio_vs_letflow": stats.ratio(row_mean(ca, "short"),
                                                         row_mean(letflow, "short")),
        "fabric_goodput_ratio_vs_letflow": stats.ratio(row_mean(ca, "goodput"),
                                                       row_mean(letflow, "goodput")),
        "fabric_failover_ms": stats.median(finite),
        "fabric_cpu_bound_runs": float(cpu_bound_runs),
    }


def parse_papers(text: str) -> list[str]:
    """`--papers`: `all`, `none` or a comma-separated list of PAPER_CA (ValueError naming a
    policy that is not one)."""
    if text == "all":
        return list(PAPER_CA)
    if text == "none":
        return []
    names = [n.strip() for n in text.split(",") if n.strip()]
    wrong = [n for n in names if n not in PAPER_CA]
    if wrong or not names:
        raise ValueError(f"--papers: {', '.join(wrong) or repr(text)} not among all, none, "
                         f"{', '.join(PAPER_CA)}")
    return list(dict.fromkeys(names))


def paper_ratios(results: Sequence[RunResult]) -> dict[str, tuple[float, float, int]]:
    """Per paper variant with runs: its mean FCT of short flows / letflow's in the run with
    the same seed, (mean, 95 % CI, seeds) over the seeds (`paired_ratios`)."""
    got = paired_ratios(results, SHORT, "letflow")
    return {pol: (mean, ci, n) for (_scenario, pol), ((mean, ci), n) in got.items()
            if pol in PAPER_CA and math.isfinite(mean)}


def best_paper(results: Sequence[RunResult]) -> tuple[str, float] | None:
    """The paper variant of least paired short-flow FCT ratio to letflow, and the ratio (None:
    no paper variant ran)."""
    ratios = paper_ratios(results)
    if not ratios:
        return None
    name = min(ratios, key=lambda pol: (ratios[pol][0], PAPER_CA.index(pol)))
    return name, ratios[name][0]


def pair_table(results: Sequence[RunResult], policies: Sequence[str],
               metric: str = "fct_lt100k_mean_s") -> str:
    """Per ordered pair of edges: `metric` (RunResult.pairs) per policy, mean over the runs."""
    values: dict[str, dict[str, list[float]]] = {}
    for r in results:
        for pair, m in (r.pairs or {}).items():
            v = m.get(metric, math.nan)
            if isinstance(v, int | float) and math.isfinite(v):
                values.setdefault(pair, {}).setdefault(r.policy, []).append(float(v))
    lines = [f"{metric} per pair (mean over the runs):",
             "  " + f"{'pair':14s}" + "".join(f"{p:>11s}" for p in policies)]
    for pair in sorted(values):
        cells = [stats.mean(values[pair].get(p, ())) for p in policies]
        lines.append("  " + f"{pair:14s}" + "".join(f"{c:11.3f}" for c in cells))
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mpsched bench fabric", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--policy", default=DEFAULT_POLICY,
                   help="the congestion-aware policy (default: %(default)s)")
    p.add_argument("--papers", default=DEFAULT_PAPERS,
                   help="the papers' congestion-aware variants to run too: all, none or a "
                        f"comma-separated list of {', '.join(PAPER_CA)} "
                        "(default: %(default)s)")
    p.add_argument("--runs", type=int, default=5,
                   help="FCT runs per policy (default: %(default)s)")
    p.add_argument("--failover-runs", type=int, default=3,
                   help="runs of the failover phase (default: %(default)s; 0: none)")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds per run (default: the scenarios')")
    p.add_argument("--no-plain", action="store_true",
                   help="run no plain-forwarding reference (the plain ECMP program on the "
                        "same seeds, and at rest): no fabric_switch_cpu_ratio_plain= and no "
                        "fabric_quiet_busy_pct=")
    p.add_argument("--quiet-s", type=float, default=QUIET_S,
                   help="seconds of the quiet phase, each program (default: %(default)s)")
    cpulimit.add_option(p)
    add_out_options(p, "bench-fabric", "evaluate the runs under DIR (an earlier --out)")
    return p


def report_lines(source: Path, policy: str) -> list[str]:
    """Everything the bench prints for the runs under `source` (the paper variants: those
    that ran)."""
    everything = load_results(source / "fct")
    papers = [p for p in PAPER_CA if p != policy and any(r.policy == p for r in everything)]
    plain = [PLAIN_ECMP] if any(r.policy == PLAIN_ECMP for r in everything) else []
    policies = [*BASELINES, policy, *papers, *plain]
    results = select_results(everything, policies)
    rows = fct_rows(results)
    failovers = read_failovers(source)
    failover_results = load_results(source / "failover")
    lines = [fct_table(rows), paired_table(results, policy), paper_lines(results),
             waits_lines(results, policies), pair_table(results, policies),
             "failover runs (ms from down to the last data frame on a dead path; frames on "
             "those paths in the 5 s before / after):"]
    for f in failovers:
        lines.append(f"  {f['run']}: {f['ms']:.0f} ms, {f['frames_before']} / "
                     f"{f['frames_after']} frames, last on {f['worst']}, "
                     f"{f['probes_after']} probes after")
    if any(f["frames_before"] == 0 for f in failovers):
        lines.append("  (a run with no frames on those paths before the failure shows nothing)")
    cpu_bound = sum(1 for r in [*results, *failover_results] if r.cpu_bound is True)
    got = figures(rows, policy, [f["ms"] for f in failovers], cpu_bound)
    best = best_paper(results)
    got[BEST_PAPER_KEY] = best[1] if best is not None else math.nan
    got["fabric_controller_cpu_pct"] = controller_core_pct(results, policy)
    got["fabric_idle_pct_min"] = idle_min_pct([*results, *failover_results])
    ratio_plain, plain_line = switch_ratio_plain(results, policy)
    got["fabric_switch_cpu_ratio_plain"] = ratio_plain
    quiet_lines, got[QUIET_KEY] = read_quiet(source)
    lines += [plain_line, *quiet_lines]
    for key, value in got.items():
        digits = 3 if "ratio" in key else 1 if "_pct" in key else 0
        lines.append(f"{key}={value:.{digits}f}")
    return lines


def switch_ratio_plain(results: Sequence[RunResult], policy: str) -> tuple[float, str]:
    """The switches' CPU per delivered Mbit/s under `policy` / under the plain ECMP program,
    paired by seed (NaN without plain runs), and the line that says so."""
    fabric = load(SCENARIO, fabric=True).fabric
    assert fabric is not None
    costed = with_switch_cost(results, list(fabric.by_name))
    # the scenario's runs are named by their load (fabric-asymmetric-load70): the policy's
    got = next((v for (_sc, pol), v in paired_ratios(costed, SWITCH_COST, PLAIN_ECMP).items()
                if pol == policy), None)
    if got is None:
        return math.nan, "switch CPU per delivered Mbit/s / plain ECMP's: no paired runs"
    (mean, ci), n = got
    return mean, (f"switch CPU per delivered Mbit/s, {policy} / plain ECMP's, paired by seed: "
                  f"{mean:.3f} ± {ci:.3f} ({n} seeds)")


def waits_lines(results: Sequence[RunResult], policies: Sequence[str]) -> str:
    """Per policy, how much of the short flows' mean FCT is retransmission timeouts."""
    lines = [f"short flows (< 100 kB) pooled over the runs; over {TIMEOUT_S:g} s = waited for a "
             "retransmission timeout:",
             "  policy     flows  mean s  over 1 s      share of the sum  mean s of the others"]
    for pol in policies:
        n, mean, slow, share, rest = waits(results, pol)
        if n:
            lines.append(f"  {pol:10s} {n:5d}  {mean:6.3f}  {slow:4d} ({100 * slow / n:3.0f} %)"
                         f"  {100 * share:3.0f} %              {rest:.3f}")
    return "\n".join(lines)


def paper_lines(results: Sequence[RunResult]) -> str:
    """The paper variants' short-flow FCT / letflow's, paired by seed, and the best."""
    ratios = paper_ratios(results)
    lines = ["paper -ca variants / letflow, mean FCT < 100 kB paired by seed "
             "(mean ± 95 % CI over the seeds):"]
    lines += [f"  {pol:10s} {mean:.3f} ± {ci:.3f} ({n} seeds)"
              for pol, (mean, ci, n) in sorted(ratios.items(), key=lambda kv: kv[1][0])]
    best = best_paper(results)
    lines.append(f"  best: {best[0]}" if best is not None else "  best: none ran")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    check_out_options(p, args)
    if args.failover_runs < 0:
        p.error("--failover-runs must be >= 0")
    try:
        papers = [n for n in parse_papers(args.papers) if n != args.policy]
    except ValueError as error:
        p.error(str(error))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    refused = cpulimit.confine(args.cpu_limit, "bench-fabric")
    if refused is not None:
        return refused
    try:
        if args.reuse is not None:
            if not (args.reuse / "fct").is_dir():
                raise BenchError(f"{args.reuse} holds no fct/ runs of bench-fabric")
            source = args.reuse
        else:
            source = fresh_out(args.out, "bench-fabric")
            log.info("runs go to %s", source)
            plain = [] if args.no_plain else [PLAIN_ECMP]
            run_fct([SCENARIO], [*BASELINES, args.policy, *papers, *plain], args.runs,
                    [LOAD_PCT], args.duration, source / "fct")
            run_failover(args.policy, args.failover_runs, source, args.duration)
            if not args.no_plain and args.quiet_s > 0:
                run_quiet(load(SCENARIO, fabric=True), args.policy, source / "quiet",
                          args.quiet_s)
        print("\n".join(report_lines(source, args.policy)))
    except BenchError as error:
        print(f"bench-fabric: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
