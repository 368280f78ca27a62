"""Flow completion time by size bucket: run scenarios under policies (and loads), sum them up.

The programmatic side of `mpsched compare` for the data-centre workloads (`kind: poisson`):
`run_fct` runs every scenario file x offered load x policy x seeded run on the testbed, writes
the usual reports (runs.csv, summary.md, plots) and returns one `FctRow` per (scenario at a
load, policy) with goodput and, per size bucket (`metrics.FCT_BUCKETS`: lt100k < 100 kB,
100k_1m 100 kB-1 MB, gt1m > 1 MB), the FCT mean and p99 and the slowdown (each mean ± 95 % CI
over the runs). `fct_rows` does the same for results already on disk
(`load_results`). As a command:

    python -m mpsched.lab.fct scenarios/asymmetric.yaml --policy ecmp --policy letflow \\
        --runs 3 --load-pct 30 --load-pct 70 --out build/results/fct

prints the table and writes OUT/fct.json (the rows) beside the runner's output.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mpsched import validation
from mpsched.lab import metrics
from mpsched.lab.report import JsonFloat, RunResult, read_run
from mpsched.lab.scenario import POLICIES, ScenarioError, load
from mpsched.stats import mean_ci95, paired_ratio

log = logging.getLogger(__name__)

# per bucket: the metric suffixes summed up, their key in FctRow.buckets
BUCKET_FIELDS = (
    ("fct_{b}_mean_s", "fct_mean_s"),
    ("fct_{b}_p99_s", "fct_p99_s"),
    ("slowdown_{b}_mean", "slowdown_mean"),
    ("slowdown_{b}_p99", "slowdown_p99"),
    ("completed_frac_{b}", "completed_frac"),
    ("flows_{b}", "flows"),
)
Stat = tuple[float, float]  # (mean over the runs, half width of the 95 % CI; NaN if < 2 runs)
JsonStat = tuple[JsonFloat, JsonFloat]  # a Stat, NaN written as null


@dataclass(frozen=True)
class FctRow:
    """One (scenario, policy): `load_pct` the offered load (NaN without a poisson workload);
    `fct_mean_s`, `fct_p99_s` over all flows, those still running at the end at their
    censored FCT (each run's, averaged over the runs);
    `buckets[b][field]` for b in `metrics.FCT_BUCKETS` with flows and each field of
    `BUCKET_FIELDS`; every `Stat` a mean ± CI over `runs` runs (`cpu_bound` of them marked)."""

    scenario: str
    policy: str
    load_pct: JsonFloat
    runs: int
    cpu_bound: int
    goodput_mbps: JsonStat
    goodput_frac: JsonStat
    completed_frac: JsonStat
    fct_mean_s: JsonStat
    fct_p99_s: JsonStat
    slowdown_mean: JsonStat
    slowdown_p99: JsonStat
    buckets: dict[str, dict[str, JsonStat]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict (NaN becomes null)."""
        return validation.dump(self)


def _stat(runs: Sequence[RunResult], name: str) -> Stat:
    vals = [v for r in runs if math.isfinite(v := r.metrics.get(name, math.nan))]
    return mean_ci95(vals)


def fct_rows(results: Sequence[RunResult]) -> list[FctRow]:
    """One `FctRow` per (scenario, policy) of `results`, in order of first appearance."""
    groups: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.scenario, r.policy), []).append(r)
    rows = []
    for (scenario, policy), runs in groups.items():
        buckets = {}
        for b, _, _ in metrics.FCT_BUCKETS:
            fields = {key: _stat(runs, name.format(b=b)) for name, key in BUCKET_FIELDS}
            if any(math.isfinite(m) for m, _ in fields.values()):
                buckets[b] = fields
        rows.append(
            FctRow(
                scenario=scenario,
                policy=policy,
                load_pct=_stat(runs, "offered_load_pct")[0],
                runs=len(runs),
                cpu_bound=sum(1 for r in runs if r.cpu_bound is True),
                goodput_mbps=_stat(runs, "goodput_mbps"),
                goodput_frac=_stat(runs, "goodput_frac"),
                completed_frac=_stat(runs, "completed_frac"),
                fct_mean_s=_stat(runs, "fct_mean_s"),
                fct_p99_s=_stat(runs, "fct_p99_s"),
                slowdown_mean=_stat(runs, "slowdown_mean"),
                slowdown_p99=_stat(runs, "slowdown_p99"),
                buckets=buckets,
            )
        )
    return rows


def paired_ratios(
    results: Sequence[RunResult], metric: str, reference: str
) -> dict[tuple[str, str], tuple[Stat, int]]:
    """Per (scenario, policy): the ratio `metric` / the `reference` policy's `metric` in the
    run with the same seed, as mean ± 95 % CI over the seeds both ran, and how many seeds.

    Runs with the same seed see the same arrivals, sizes and link randomness, so most of the
    run-to-run spread (the offered load a seed happens to draw) cancels in the ratio: the
    paired interval says whether a policy beats the reference where the unpaired means'
    intervals overlap (`mpsched.stats.paired_ratio`). Seeds without a finite, positive
    reference value are left out; so are (scenario, policy) without a seed left."""
    by_seed: dict[tuple[str, str], dict[int, float]] = {}
    for r in results:
        by_seed.setdefault((r.scenario, r.policy), {})[r.seed] = r.metrics.get(metric, math.nan)
    out = {}
    for (scenario, policy), values in by_seed.items():
        got = paired_ratio(values, by_seed.get((scenario, reference), {}))
        if got.n:
            out[(scenario, policy)] = ((got.mean, got.ci95), got.n)
    return out


def load_results(out: str | Path) -> list[RunResult]:
    """Every run result the runner wrote under `out` (OUT/<scenario>/<policy>/run<k>/*.json),
    in path order: what `fct_rows` sums up again without running."""
    return [read_run(p) for p in sorted(Path(out).rglob("*__run*.json"))]


def stat_cell(st: Stat) -> str:
    mean, ci = st
    if not math.isfinite(mean):
        return "\u2013"
    return f"{mean:.3g}" + (f" ± {ci:.2g}" if math.isfinite(ci) else "")


def fct_table(rows: Sequence[FctRow]) -> str:
    """Markdown: one line per row, goodput and per bucket FCT mean / p99 (s)."""
    names = [b for b, _, _ in metrics.FCT_BUCKETS]
    header = ["scenario", "policy", "load %", "runs", "goodput Mbit/s", "slowdown"]
    header += [f"{b} {k}" for b in names for k in ("mean s", "p99 s")]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for r in rows:
        cells = [
            r.scenario,
            r.policy,
            f"{r.load_pct:g}" if math.isfinite(r.load_pct) else "\u2013",
            f"{r.runs}" + (f" ({r.cpu_bound}\u2020)" if r.cpu_bound else ""),
            stat_cell(r.goodput_mbps),
            stat_cell(r.slowdown_mean),
        ]
        for b in names:
            got = r.buckets.get(b, {})
            nan = (math.nan, math.nan)
            cells += [stat_cell(got.get("fct_mean_s", nan)), stat_cell(got.get("fct_p99_s", nan))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_fct(
    scenario_files: Sequence[str | Path],
    policies: Sequence[str] | None = None,
    runs: int = 3,
    loads: Sequence[float] | None = None,
    duration_s: float | None = None,
    out: Path | None = None,
    backend: str | None = None,
    keep_captures: bool = False,
) -> list[FctRow]:
    """Run each scenario file (at each of `loads`, else its own load_pct) under `policies`
    (default: its `compare` list) `runs` times on the testbed (root, BMv2, `make p4`; the
    caller holds the testbed lock), write the runner's reports into `out` (default
    build/results/fct-<time>) and return the rows. Raises ScenarioError for a bad file."""
    from mpsched.lab.experiment import load_variants, run_experiments, write_reports
    from mpsched.proc.layout import build_dir

    scenarios = []
    for path in scenario_files:
        sc = load(path, backend=backend, fabric=True)  # a fabric runs like two edges
        if duration_s is not None:
            sc = dataclasses.replace(sc, duration_s=duration_s)
        scenarios += load_variants(sc, list(loads) if loads else None)
    policies_for = {sc.name: tuple(policies) if policies else sc.compare for sc in scenarios}
    out = out or build_dir() / "results" / time.strftime("fct-%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    results, failed = run_experiments(scenarios, policies_for, runs, out, keep_captures)
    if failed:
        log.warning("%d run(s) failed", failed)
    write_reports(out, scenarios, results)
    rows = fct_rows(results)
    (out / "fct.json").write_text(json.dumps([r.to_dict() for r in rows], indent=1))
    (out / "fct.md").write_text(fct_table(rows))
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.lab.fct",
        description="Run scenarios under policies (and offered loads); print FCT per size "
        "bucket and goodput; OUT/fct.json holds the rows.",
    )
    p.add_argument("scenarios", nargs="+", type=Path)
    p.add_argument("--policy", action="append", choices=POLICIES, help="repeatable")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--load-pct", type=float, action="append", help="repeatable: a load sweep")
    p.add_argument("--duration", type=float, default=None)
    p.add_argument("--backend", choices=("auto", "linkem", "netem"), default=None)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    from mpsched.lab.experiment import _prerequisites
    from mpsched.proc.cleanup import interrupt_on_signals

    if args.runs < 1:
        p.error("--runs must be >= 1")
    problems = _prerequisites(args.backend)
    if problems:
        print("missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    interrupt_on_signals()
    try:
        rows = run_fct(
            args.scenarios, args.policy, args.runs, args.load_pct, args.duration, args.out,
            args.backend,
        )  # fmt: skip
    except ScenarioError as exc:
        return validation.cli_error(exc, p.prog)
    except KeyboardInterrupt:
        return 130
    print(fct_table(rows))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
