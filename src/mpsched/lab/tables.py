"""Markdown tables of run results: one row per (scenario, policy) (``summary_table``), or per
scenario the policies side by side with the best mean in bold (``comparison_table``); cells
are "mean ± 95 % CI" over the runs. Runs where the machine was the bottleneck are marked
(``CPU_MARK``) and explained in a footnote (``cpu_footnote``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mpsched.lab.cpu import CpuRule
from mpsched.lab.report import (
    MetricSpec,
    RunResult,
    by_scenario_policy,
    format_mean_ci,
    metric_names,
    metric_spec,
    metric_values,
)
from mpsched.stats import mean_ci95

DASH = "\u2013"  # en dash, shown for a metric without values
CPU_MARK = "\u2020"  # dagger: a cell or column with runs where the machine was the bottleneck


def _cell_text(runs: Sequence[RunResult], name: str) -> tuple[str, float | None]:
    vals = metric_values(runs, name)
    if not vals:
        return DASH, None
    mean, ci = mean_ci95(vals)
    text = format_mean_ci(mean, ci)
    if len(vals) < len(runs):
        text += f" (n={len(vals)})"
    return text, mean


def _table(header: list[str], align: list[str], rows: Iterable[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def cpu_bound_runs(results: Iterable[RunResult]) -> list[RunResult]:
    """The runs marked CPU-bound (the machine, not the policy, was the bottleneck)."""
    return [r for r in results if r.cpu_bound is True]


def run_label(r: RunResult) -> str:
    """``scenario/policy/run<k>``, as the run's directory under the output directory."""
    return f"{r.scenario}/{r.policy}/run{r.run}"


def _cpu_rule_text(runs: Sequence[RunResult]) -> str:
    rules = []
    for r in runs:
        try:
            text = CpuRule(**r.cpu_rule).describe() if r.cpu_rule else ""
        except TypeError:
            text = ""
        rules.append(text or "see scenarios/README.md")
    return "; ".join(dict.fromkeys(rules))


def cpu_footnote(results: Sequence[RunResult]) -> str:
    """Footnote lines for a table of ``results``: the CPU limit the testbed had, if any,
    which runs were CPU-bound (marked ``CPU_MARK``) and by which rule, and how many runs have
    no CPU record; "" when all runs were recorded, none was limited and none was CPU-bound."""
    bound = cpu_bound_runs(results)
    unknown = sum(1 for r in results if r.cpu_bound is None)
    lines = []
    limits = sorted({r.cpu_limit_pct for r in results if r.cpu_limit_pct is not None})
    if limits:
        limited = sum(1 for r in results if r.cpu_limit_pct is not None)
        lines.append(
            f"Testbed limited to {' or '.join(f'{p:g} %' for p in limits)} of the machine's "
            f"CPU (--cpu-limit) in {limited} of {len(results)} run(s): their idle and "
            "CPU-bound mark are against the limit."
        )
    if bound:
        lines.append(
            f"{CPU_MARK} CPU-bound run(s) ({_cpu_rule_text(bound)}): the machine, not only the "
            "policy, limited them: " + ", ".join(run_label(r) for r in bound) + "."
        )
    if unknown:
        lines.append(f"CPU load not recorded for {unknown} of {len(results)} run(s).")
    return "".join(line + "\n" for line in lines)


def _cpu_count(runs: Sequence[RunResult]) -> int:
    return len(cpu_bound_runs(runs))


def summary_table(results: Sequence[RunResult]) -> str:
    """Markdown table: one row per (scenario, policy) with its number of runs and, per metric,
    "mean ± ci95" over the runs. A metric missing (or NaN) in some runs shows the count it is
    based on, "(n=k)"; a metric with no values shows an en dash. Rows in order of first appearance,
    metric columns in ``metric_names`` order. A row with CPU-bound runs shows their count in the
    runs cell ("5 (2†)"), explained by a footnote (``cpu_footnote``)."""
    names = metric_names(results)
    rows = []
    for (scenario, policy), runs in by_scenario_policy(results).items():
        k = _cpu_count(runs)
        count = f"{len(runs)} ({k}{CPU_MARK})" if k else str(len(runs))
        rows.append([scenario, policy, count, *(_cell_text(runs, n)[0] for n in names)])
    table = _table(
        ["scenario", "policy", "runs", *names], ["---", "---", "---:", *["---:"] * len(names)], rows
    )
    note = cpu_footnote(results)
    return table + ("\n" + note if note else "")


def _arrow(spec: MetricSpec) -> str:
    return {True: " ↑", False: " ↓", None: ""}[spec.higher_is_better]


def comparison_table(results: Sequence[RunResult]) -> str:
    """Markdown, per scenario: metrics as rows, policies side by side as columns ("mean ±
    ci95"); the best mean per metric is bold (ties: all of them) when at least two policies
    have a value and ``METRICS`` ranks the metric (↑ higher is better, ↓ lower is better).
    A policy with CPU-bound runs gets ``CPU_MARK`` on its column and their count in the "runs
    per policy" line, explained by a footnote (``cpu_footnote``)."""
    groups = by_scenario_policy(results)
    scenarios = list(dict.fromkeys(s for s, _ in groups))
    parts: list[str] = []
    for scenario in scenarios:
        policies = [p for s, p in groups if s == scenario]
        runs_of = {p: groups[(scenario, p)] for p in policies}
        names = metric_names(r for rs in runs_of.values() for r in rs)
        rows = []
        for name in names:
            spec = metric_spec(name)
            cells = [_cell_text(runs_of[p], name) for p in policies]
            means = [m for _, m in cells if m is not None]
            best = None
            if spec.higher_is_better is not None and len(means) >= 2:
                best = max(means) if spec.higher_is_better else min(means)
            texts = [f"**{t}**" if m is not None and m == best else t for t, m in cells]
            rows.append([name + _arrow(spec), *texts])
        bound = {p: _cpu_count(runs_of[p]) for p in policies}
        runs = ", ".join(
            f"{p}: {len(runs_of[p])}" + (f" ({bound[p]} cpu-bound{CPU_MARK})" if bound[p] else "")
            for p in policies
        )
        header = [p + (f" {CPU_MARK}" if bound[p] else "") for p in policies]
        parts.append(
            f"### {scenario}\n\nruns per policy: {runs}\n\n"
            + _table(["metric", *header], ["---", *["---:"] * len(policies)], rows)
        )
    legend = "↑ higher is better, ↓ lower is better; **bold**: best mean. Cells: mean ± 95 % CI.\n"
    return "\n".join(parts) + ("\n" + legend + cpu_footnote(results) if parts else "")
