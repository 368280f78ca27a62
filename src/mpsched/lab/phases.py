"""Per phase of a scenario whose conditions change: what each policy delivered against the
capacity in force.

A run's goodput fraction averages over the whole run; on a scenario with a link schedule
(`scenarios/mixed.yaml`: a loss ramp, a capacity drop, a failure) it does not say in which
phase a policy lost, or whether any policy could have done better in a phase. This table does:
the phases are the intervals between the times a path's forward parameters change (a step's
`at_s`, a ramp's start and end), and per phase and policy the cell is the rate the paths
delivered (the sum of the runs' `path<i>` series: Ethernet bytes each link emulator delivered
s1 -> s2, retransmissions and headers included), mean ± 95 % CI over the runs, and that
mean as a fraction of the phase's capacity (the up paths' forward rates averaged over the
phase, `Scenario.mean_capacity_mbps`, as the goodput fraction's denominator).

    python -m mpsched.lab.phases scenarios/mixed.yaml build/results/adaptive [--edges 0,20,40]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from mpsched.emu.schedule import Ramp, Step
from mpsched.lab.fct import load_results
from mpsched.lab.report import RunResult, format_mean_ci
from mpsched.lab.scenario import Scenario, ScenarioError, load
from mpsched.stats import mean, mean_ci95
from mpsched.validation import cli_error


def phase_edges(sc: Scenario, min_phase_s: float = 2.0) -> list[float]:
    """0, every time in (0, duration) at which a path's forward parameters start or stop
    changing, and the duration; sorted, unique; a phase shorter than `min_phase_s` is merged
    into the one before it (the first one into the one after it)."""
    times = {0.0, float(sc.duration_s)}
    for path in sc.topo.paths:
        for seg in path.segments():
            for event in seg.forward_events:
                if isinstance(event, Step):
                    times.add(event.at_s)
                elif isinstance(event, Ramp):
                    times.update((event.start_s, event.end_s))
    edges = [0.0]
    for t in sorted(t for t in times if 0.0 < t <= sc.duration_s):
        if t - edges[-1] >= min_phase_s:
            edges.append(t)
        elif len(edges) > 1:
            edges[-1] = t
    return edges


def phase_rates(result: RunResult, edges: Sequence[float]) -> list[float]:
    """Per phase [edges[i], edges[i+1]): the sum over paths of the mean of the path's series
    samples in the phase (NaN where a path has no sample in it)."""
    paths = [pts for name, pts in sorted(result.series.items()) if name.startswith("path")]
    out = []
    for a, b in itertools.pairwise(edges):
        total = 0.0
        for pts in paths:
            inside = [v for t, v in pts if a <= t < b]
            total += mean(inside)
        out.append(total if paths else math.nan)
    return out


def phase_table(results: Sequence[RunResult], sc: Scenario, edges: Sequence[float]) -> str:
    """Markdown: a row per policy (in order of first appearance), a column per phase with
    its capacity in the header; cells "rate ± CI (fraction of capacity)"; the best mean per
    phase in bold."""
    caps = [sc.mean_capacity_mbps(a, b) for a, b in itertools.pairwise(edges)]
    runs: dict[str, list[list[float]]] = {}
    for r in results:
        if r.scenario == sc.name:
            runs.setdefault(r.policy, []).append(phase_rates(r, edges))
    stats = {
        p: [mean_ci95([x[i] for x in rows if not math.isnan(x[i])])
            for i in range(len(caps))]
        for p, rows in runs.items()
    }
    best = [
        max((s[i][0] for s in stats.values() if not math.isnan(s[i][0])), default=math.nan)
        for i in range(len(caps))
    ]
    header = ["policy", "runs"] + [
        f"{a:g}-{b:g} s ({c:.3g} Mbit/s)" for (a, b), c in zip(
            itertools.pairwise(edges), caps, strict=True)
    ]
    lines = ["| " + " | ".join(header) + " |", "| --- | ---: |" + " ---: |" * len(caps)]
    for policy, cells in stats.items():
        texts = []
        for i, (m, h) in enumerate(cells):
            if math.isnan(m):
                texts.append("\u2013")
                continue
            text = format_mean_ci(m, h)
            if caps[i]:
                text += f" ({m / caps[i]:.2f})"
            texts.append(f"**{text}**" if m == best[i] else text)
        lines.append(f"| {policy} | {len(runs[policy])} | " + " | ".join(texts) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.lab.phases",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenario", type=Path, help="the scenario file the runs ran")
    p.add_argument("sources", type=Path, nargs="+",
                   help="output directories of mpsched run/compare (their run JSONs are read)")
    p.add_argument("--edges", help="phase boundaries in seconds, e.g. 0,20,40,60,80 (default: "
                   "from the scenario's link schedules)")
    p.add_argument("--min-phase", type=float, default=2.0, metavar="S",
                   help="merge a phase shorter than S seconds into the one before it "
                   "(default: %(default)s)")
    args = p.parse_args(argv)
    try:
        sc = load(args.scenario)
    except ScenarioError as error:
        return cli_error(error, "phases")
    if args.edges:
        try:
            edges = sorted({float(x) for x in args.edges.split(",")})
        except ValueError:
            print(f"phases: --edges: numbers separated by commas, got {args.edges!r}",
                  file=sys.stderr)
            return 2
        if len(edges) < 2:
            print("phases: --edges: at least two boundaries", file=sys.stderr)
            return 2
    else:
        edges = phase_edges(sc, args.min_phase)
    results = [r for src in args.sources for r in load_results(src) if r.scenario == sc.name]
    if not results:
        print(f"phases: no runs of scenario {sc.name!r} under "
              f"{', '.join(map(str, args.sources))}", file=sys.stderr)
        return 2
    sys.stdout.write(phase_table(results, sc, edges))
    return 0


if __name__ == "__main__":
    sys.exit(main())
