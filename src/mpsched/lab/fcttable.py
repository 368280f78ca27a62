"""The FCT tables of docs/results/congestion.md from results on disk, and their paired ratios.

    python -m mpsched.lab.fcttable SOURCE [SOURCE ...] [--paired REF ...] [--no-cpu-bound]
                                   [--plot DIR] [--window A:B] [--timeline BIN]
                                   [--policy P ...]

Each SOURCE is an `mpsched compare` output directory (every run JSON under it,
`fct.load_results`) or a runs.csv (`report.read_csv`, e.g. docs/results/*-runs.csv); the
runs of all sources are pooled, so a comparison extended by a later call (more seeds, more
policies) or a published table plus new runs is one table. Printed as Markdown:

1. per (scenario, policy), sorted by the mean FCT of flows < 100 kB: runs (a † when some
   were CPU-bound), goodput, completed fraction, per size bucket the mean FCT (and the p99
   of the short flows), the p99 FCT of all flows and the mean slowdown, each mean ± 95 % CI
   over the runs (`fct.fct_rows`);
2. per REF (default: letflow and ecmp), paired by seed: each policy's ratio to REF's run
   with the same seed, mean ± 95 % CI over the seeds both ran (`fct.paired_ratios`), for the
   short flows' mean FCT, the p99 of all flows, goodput and the slowdown;
3. the CPU-bound runs by scenario, policy and seed.

`--no-cpu-bound` leaves the CPU-bound runs out of every table (re-run them with
`mpsched compare ... --resume --rerun-cpu-bound`). `--plot DIR` also draws, per scenario and
REF, the short flows' paired ratios (`paired_<scenario>_<REF>.png`, blue where the interval
lies below 1) and, for a scenario run at several loads, FCT against load per size bucket
(`fct_load_<scenario>_<bucket>.png`). `--window A:B` counts only the flows that arrived
between A and B seconds into each run (e.g. while a link was down; src/mpsched/lab/fctwindow.py:
compare output directories only, goodput and slowdown left out). `--timeline BIN` with
`--plot` also draws the short flows' mean FCT per BIN seconds of arrival time, one line per
policy (`timeline_<scenario>.png`, the `--window` shaded). `--policy P` (repeatable) keeps
only those policies and the references.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from mpsched.lab import fctwindow, plots
from mpsched.lab.fct import FctRow, Stat, fct_rows, load_results, paired_ratios, stat_cell
from mpsched.lab.report import RunResult, read_csv, slug

NAN_STAT: Stat = (math.nan, math.nan)
# paired figures: (metric, column title)
PAIRED = (
    ("fct_lt100k_mean_s", "FCT < 100 kB"),
    ("fct_p99_s", "p99 FCT, all flows"),
    ("goodput_mbps", "goodput"),
    ("slowdown_mean", "slowdown"),
)


def load_sources(sources: Sequence[Path]) -> list[RunResult]:
    """The runs of every source: a runs.csv file, else a directory of run JSONs. ValueError
    names a source that is neither or holds no run."""
    out: list[RunResult] = []
    for source in sources:
        if source.is_file():
            runs = read_csv(source)
        elif source.is_dir():
            runs = load_results(source)
        else:
            raise ValueError(f"{source}: no such file or directory")
        if not runs:
            raise ValueError(f"{source}: holds no run results")
        out += runs
    return out


def _bucket(row: FctRow, bucket: str, key: str) -> Stat:
    return row.buckets.get(bucket, {}).get(key, NAN_STAT)


def _short_mean(row: FctRow) -> float:
    m = _bucket(row, "lt100k", "fct_mean_s")[0]
    return m if math.isfinite(m) else math.inf


def bucket_table(results: Sequence[RunResult]) -> str:
    """Table 1 (module doc) as Markdown."""
    rows = sorted(fct_rows(results), key=lambda r: (r.scenario, _short_mean(r)))
    several = len({r.scenario for r in rows}) > 1
    head = ["policy", "runs", "goodput Mbit/s", "completed", "FCT < 100 kB mean (s)",
            "< 100 kB p99", "100 kB\u20131 MB mean", "> 1 MB mean", "p99 all flows",
            "slowdown mean"]
    if several:
        head.insert(0, "scenario")
    lines = ["| " + " | ".join(head) + " |",
             "| " + " | ".join(["---"] * (2 if several else 1) + ["---:"] * 9) + " |"]
    for r in rows:
        cells = [
            f"{r.policy}{' †' if r.cpu_bound else ''}",
            str(r.runs),
            stat_cell(r.goodput_mbps),
            stat_cell(r.completed_frac),
            stat_cell(_bucket(r, "lt100k", "fct_mean_s")),
            stat_cell(_bucket(r, "lt100k", "fct_p99_s")),
            stat_cell(_bucket(r, "100k_1m", "fct_mean_s")),
            stat_cell(_bucket(r, "gt1m", "fct_mean_s")),
            stat_cell(r.fct_p99_s),
            stat_cell(r.slowdown_mean),
        ]
        if several:
            cells.insert(0, r.scenario)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def paired_table(results: Sequence[RunResult], reference: str) -> str:
    """Table 2 (module doc) for one reference policy as Markdown; rows sorted by the short
    flows' ratio. Empty when no run of `reference` pairs with another policy's."""
    got = {m: paired_ratios(results, m, reference) for m, _ in PAIRED}
    keys = sorted(
        (k for k in got[PAIRED[0][0]] if k[1] != reference),
        key=lambda k: (k[0], got[PAIRED[0][0]][k][0][0]),
    )
    if not keys:
        return ""
    several = len({k[0] for k in keys}) > 1
    head = (["scenario"] if several else []) + ["policy (seeds)"] + [t for _, t in PAIRED]
    lines = [f"paired by seed against {reference} (ratio, mean ± 95 % CI over the seeds):", "",
             "| " + " | ".join(head) + " |",
             "| " + " | ".join(["---"] * (2 if several else 1) + ["---:"] * len(PAIRED)) + " |"]
    for key in keys:
        n = got[PAIRED[0][0]][key][1]
        cells = [f"{key[1]} ({n})"]
        for metric, _ in PAIRED:
            if key in got[metric]:
                (mean, ci), _ = got[metric][key]
                cells.append(f"{mean:.2f} ± {ci:.2f}" if math.isfinite(ci) else f"{mean:.2f}")
            else:
                cells.append("\u2013")
        lines.append("| " + " | ".join(([key[0]] if several else []) + cells) + " |")
    return "\n".join(lines) + "\n"


def write_plots(directory: Path, results: Sequence[RunResult], references: Sequence[str]
                ) -> list[Path]:
    """The `--plot` files (module doc); returns those written."""
    written = plots.write_load_plots(directory, results)
    metric, label = PAIRED[0]
    for ref in references:
        got = paired_ratios(results, metric, ref)
        for scenario in dict.fromkeys(s for s, _ in got):
            ratios = {p: v for (s, p), v in got.items() if s == scenario}
            out = plots.plot_paired(directory / f"paired_{slug(scenario)}_{slug(ref)}.png",
                                    ratios, ref, f"{scenario}: {label} / {ref}'s")
            if out is not None:
                written.append(out)
    return written


def cpu_bound_runs(results: Sequence[RunResult]) -> list[tuple[str, str, int]]:
    return sorted((r.scenario, r.policy, r.seed) for r in results if r.cpu_bound is True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.lab.fcttable",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("sources", nargs="+", type=Path, help="compare output directory or runs.csv")
    p.add_argument("--paired", action="append", metavar="REF",
                   help="reference policy of the paired ratios (repeatable; default: letflow, "
                   "ecmp)")
    p.add_argument("--no-cpu-bound", action="store_true", help="leave CPU-bound runs out")
    p.add_argument("--plot", type=Path, metavar="DIR",
                   help="also draw the paired ratios and FCT against load as PNGs into DIR")
    p.add_argument("--window", metavar="A:B",
                   help="only the flows that arrived between A and B s into each run "
                   "(compare output directories only; goodput and slowdown left out)")
    p.add_argument("--timeline", type=float, metavar="BIN",
                   help="with --plot: the short flows' mean FCT per BIN s of arrival time")
    p.add_argument("--policy", action="append", metavar="P",
                   help="only this policy (repeatable; the references are kept)")
    return p


def _load(args: argparse.Namespace, window: tuple[float, float] | None
          ) -> tuple[list[RunResult], list[tuple[RunResult, Path]]]:
    """The runs of the sources, windowed if asked, and with --window or --timeline each
    run's directory too (read once: compare output directories only)."""
    if window is None and args.timeline is None:
        return load_sources(args.sources), []
    runs = [rd for source in args.sources for rd in fctwindow.runs_with_dirs(source)]
    if window is None:
        return [r for r, _ in runs], runs
    return [fctwindow.windowed(r, d, *window) for r, d in runs], runs


def _timeline_plots(directory: Path, runs: Sequence[tuple[RunResult, Path]], bin_s: float,
                    window: tuple[float, float] | None) -> list[Path]:
    """The `--timeline` plots, one per scenario; returns those written."""
    lines = fctwindow.timelines(runs, bin_s)
    written = []
    for scenario in dict.fromkeys(s for s, _ in lines):
        out = plots.plot_timeline(
            directory / f"timeline_{slug(scenario)}.png",
            {pol: pts for (s, pol), pts in lines.items() if s == scenario},
            f"{scenario}: mean FCT of flows < 100 kB by arrival time", window)
        if out is not None:
            written.append(out)
    return written


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    refs = args.paired or ["letflow", "ecmp"]
    keep = None if args.policy is None else set(args.policy) | set(refs)
    try:
        window = None if args.window is None else fctwindow.parse_window(args.window)
        if args.timeline is not None and not (args.timeline > 0 and args.plot is not None):
            raise ValueError("--timeline needs a bin > 0 s and --plot")
        results, runs = _load(args, window)
    except (OSError, ValueError) as exc:
        print(f"fcttable: {exc}", file=sys.stderr)
        return 2
    if window is not None:
        print(f"flows that arrived {window[0]:g} to {window[1]:g} s into each run\n")

    def wanted(r: RunResult) -> bool:
        return (keep is None or r.policy in keep) and not (
            args.no_cpu_bound and r.cpu_bound is True)

    bound = cpu_bound_runs([r for r in results if keep is None or r.policy in keep])
    results = [r for r in results if wanted(r)]
    print(bucket_table(results))
    for ref in refs:
        text = paired_table(results, ref)
        print(text if text else f"(no run of {ref} pairs with another policy's)\n")
    if args.plot is not None:
        written = write_plots(args.plot, results, refs)
        if args.timeline is not None:
            written += _timeline_plots(args.plot, [(r, d) for r, d in runs if wanted(r)],
                                       args.timeline, window)
        for path in written:
            print(f"plot: {path}")
    left = " (left out)" if args.no_cpu_bound else ""
    print(f"CPU-bound runs{left}: "
          + (", ".join(f"{s}/{p}/seed {k}" for s, p, k in bound) if bound else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
