"""Result reporting: per-run JSON, CSV, Markdown tables and PNG plots.

The experiment runner runs every (scenario, policy) N times with fixed seeds and hands one
``RunResult`` per run to the writers here. Metric values come from ``mpsched.lab.metrics``; this
module only aggregates (mean ± 95 % CI via ``mpsched.stats.mean_ci95``) and formats them.

Which metrics are better high and which low is declared once, in ``METRICS``.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

from mpsched import validation
from mpsched.lab import metrics
from mpsched.lab.cpu import CpuRule
from mpsched.stats import cdf, mean_ci95

log = logging.getLogger(__name__)

SCHEMA = 1
DASH = "\u2013"  # en dash, shown for a metric without values
CPU_MARK = "\u2020"  # dagger: a cell or column with runs where the machine was the bottleneck


@dataclass(frozen=True)
class MetricSpec:
    """A reported metric: name (the key in ``RunResult.metrics``), unit, and its direction."""

    name: str
    unit: str
    higher_is_better: bool | None  # None: neither (not ranked)
    description: str = ""


# The one place that says which way each metric is better; also the column order of the tables
# (metrics not listed here follow in alphabetical order and are not ranked).
METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("goodput_mbps", "Mbit/s", True, "receiver goodput (RFC 2647 §3.17)"),
    MetricSpec("goodput_frac", "", True, "goodput / summed path capacity"),
    MetricSpec("jain", "", True, "Jain's fairness index over flows"),
    MetricSpec("completed_frac", "", True, "completed / started transfers"),
    MetricSpec("fct_mean_s", "s", False, "mean flow completion time"),
    MetricSpec("fct_p99_s", "s", False, "99th percentile flow completion time"),
    MetricSpec("slowdown_mean", "", False, "mean FCT / ideal FCT alone on the best path"),
    MetricSpec("slowdown_p99", "", False, "99th percentile FCT slowdown"),
    *(
        spec
        for b, _, _ in metrics.FCT_BUCKETS
        for spec in (
            MetricSpec(f"completed_frac_{b}", "", True, f"completed / started, {b} flows"),
            MetricSpec(f"fct_{b}_mean_s", "s", False, f"mean FCT of the {b} flows"),
            MetricSpec(f"fct_{b}_p99_s", "s", False, f"99th percentile FCT, {b} flows"),
            MetricSpec(f"slowdown_{b}_mean", "", False, f"mean FCT slowdown, {b} flows"),
            MetricSpec(f"slowdown_{b}_p99", "", False, f"99th percentile slowdown, {b} flows"),
            MetricSpec(f"flows_{b}", "", None, f"completed {b} flows"),
        )
    ),
    MetricSpec("incast_completed_frac", "", True, "incast rounds with every response done"),
    MetricSpec("incast_qct_mean_s", "s", False, "mean incast query completion time"),
    MetricSpec("incast_qct_p99_s", "s", False, "99th percentile incast query completion time"),
    MetricSpec("offered_load_pct", "%", None, "poisson load, % of the summed capacity"),
    MetricSpec("rtt_p50_ms", "ms", False, "median smoothed RTT"),
    MetricSpec("rtt_p99_ms", "ms", False, "99th percentile smoothed RTT"),
    MetricSpec("ooo_packets", "", False, "reordered packets at the receiver (RFC 4737 §3)"),
    MetricSpec("reorder_ratio", "", False, "reordered / received packets (RFC 4737 §4.1)"),
    MetricSpec("reorder_degree", "pkts", False, "mean reordering extent (RFC 4737 §4.2)"),
    MetricSpec("retrans", "", False, "retransmitted segments (tcpi_total_retrans)"),
    MetricSpec("reaction_time_s", "s", False, "path-failure reaction time"),
    MetricSpec("cpu_idle_pct", "%", None, "machine CPU idle, mean over the measured time"),
    MetricSpec("cpu_low_idle_pct", "%", None, "% of the measured time idle < threshold"),
)
_SPEC = {m.name: m for m in METRICS}


def metric_spec(name: str) -> MetricSpec:
    """The declared spec of a metric, or an unranked one for a metric not in ``METRICS``."""
    return _SPEC.get(name, MetricSpec(name, "", None))


def _nan_from_null(x: Any) -> Any:
    return math.nan if x is None else x


def _null_from_nan(x: float) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _bool_or_null(x: Any) -> bool | None:
    """A JSON true/false, or null/absent (unknown)."""
    if x is None or isinstance(x, bool):
        return x
    raise ValueError(f"must be true, false or null, got {x!r}")


# a float in a run file: null there is NaN here (not measured), and back
JsonFloat = Annotated[float, BeforeValidator(_nan_from_null), PlainSerializer(_null_from_nan)]


@dataclass
class RunResult:
    """Everything measured in one run of one scenario under one policy.

    ``metrics``: scalar per-run values (keys as in ``METRICS`` where they apply; NaN = not
    measured). ``series``: time series per name (e.g. ``"path1"``, ``"total"``) of
    ``(t_s, Mbit/s)``. ``fct``: ``(size_bytes, fct_s)`` per completed flow. ``rtt_ms``: RTT
    samples. ``reorder_extents``: RFC 4737 extents of the reordered packets (all flows).

    Machine load (``mpsched.lab.cpu``): ``cpu_bound`` is True when the machine was the
    bottleneck by ``cpu_rule`` (``{"idle_below_pct", "max_time_pct"}``), False when it was
    not, None when unknown (too few samples, or a result written before it was recorded).
    ``cpu_idle``: ``(start_s, end_s, idle %)`` per sampling interval of the measured time;
    ``cpu_shares``: CPU share (% of all cores) of each process by role (``s1``, ``e1``,
    ``controller``, ``send0@h1``, ...).

    A fabric run: ``pairs`` holds per ordered pair of edges (``leaf1->leaf2``) the metrics
    of its flows (``mpsched.lab.fabric_analysis``); empty otherwise.
    """

    scenario: str
    policy: str
    run: int
    seed: int
    duration_s: JsonFloat
    metrics: dict[str, JsonFloat] = field(default_factory=dict)
    series: dict[str, list[tuple[JsonFloat, JsonFloat]]] = field(default_factory=dict)
    fct: list[tuple[int, JsonFloat]] = field(default_factory=list)
    rtt_ms: list[JsonFloat] = field(default_factory=list)
    reorder_extents: list[int] = field(default_factory=list)
    cpu_bound: Annotated[bool | None, BeforeValidator(_bool_or_null)] = None
    cpu_rule: dict[str, JsonFloat] = field(default_factory=dict)
    cpu_idle: list[tuple[JsonFloat, JsonFloat, JsonFloat]] = field(default_factory=list)
    cpu_shares: dict[str, JsonFloat] = field(default_factory=dict)
    pairs: dict[str, dict[str, JsonFloat]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (non-finite floats become null)."""
        return {"schema": SCHEMA, **validation.dump(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str | Path | None = None) -> RunResult:
        """Inverse of ``to_dict`` (null → NaN); raises `RunResultError` (a ValueError) naming
        the field of a malformed dict (and `source`, the file)."""
        if isinstance(d, dict) and d.get("schema", SCHEMA) != SCHEMA:
            raise RunResultError("schema", f"unsupported result schema {d.get('schema')}",
                                 None if source is None else str(source))
        return validation.validate(cls, d, error=RunResultError, source=source)


class RunResultError(validation.InputError):
    """A run result (JSON) that does not read back."""

    def __str__(self) -> str:
        return f"malformed run result: {super().__str__()}"


# --------------------------------------------------------------------------------------------
# Files


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "_"


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run_filename(result: RunResult) -> str:
    """``<scenario>__<policy>__run<NNN>.json`` (names reduced to file-safe characters)."""
    return f"{_slug(result.scenario)}__{_slug(result.policy)}__run{result.run:03d}.json"


def write_run(directory: str | Path, result: RunResult) -> Path:
    """Write one run as JSON (atomically) into ``directory``; returns the file."""
    path = Path(directory) / run_filename(result)
    _atomic_write(path, json.dumps(result.to_dict(), indent=1, allow_nan=False) + "\n")
    return path


def read_run(path: str | Path) -> RunResult:
    """A run written by ``write_run``."""
    return RunResult.from_dict(validation.read_document(Path(path)), source=path)


def load_runs(directory: str | Path) -> list[RunResult]:
    """All runs written by ``write_run`` in ``directory``, in file-name order."""
    return [read_run(p) for p in sorted(Path(directory).glob("*__run*.json"))]


def metric_names(results: Iterable[RunResult]) -> list[str]:
    """Metric names present in the results, in the stable report order (``METRICS`` first)."""
    present = {k for r in results for k in r.metrics}
    known = [m.name for m in METRICS if m.name in present]
    return known + sorted(present - set(known))


def write_csv(directory: str | Path, results: Sequence[RunResult]) -> tuple[Path, Path]:
    """``runs.csv`` (one row per run: scenario, policy, run, seed, duration_s, cpu_bound
    (``true``, ``false``, empty = unknown), each metric; an empty cell where a run lacks a
    metric) and ``series.csv`` (long format: scenario, policy,
    run, series, t_s, value). Returns both paths."""
    directory = Path(directory)
    names = metric_names(results)
    runs = _csv_text(
        ["scenario", "policy", "run", "seed", "duration_s", "cpu_bound", *names],
        (
            [r.scenario, r.policy, r.run, r.seed, _cell(r.duration_s), _bool_cell(r.cpu_bound)]
            + [_cell(r.metrics.get(n, math.nan)) for n in names]
            for r in results
        ),
    )
    series = _csv_text(
        ["scenario", "policy", "run", "series", "t_s", "value"],
        (
            [r.scenario, r.policy, r.run, name, _cell(t), _cell(v)]
            for r in results
            for name, pts in sorted(r.series.items())
            for t, v in pts
        ),
    )
    runs_path, series_path = directory / "runs.csv", directory / "series.csv"
    _atomic_write(runs_path, runs)
    _atomic_write(series_path, series)
    return runs_path, series_path


RUN_COLUMNS = ("scenario", "policy", "run", "seed", "duration_s", "cpu_bound")


def read_csv(path: str | Path) -> list[RunResult]:
    """The runs of a ``runs.csv`` written by ``write_csv`` (scalar metrics and the cpu_bound
    mark only: series, FCTs and samples are not in it; a file from before the mark has no
    cpu_bound column, its runs count as unknown). ValueError names the file, the line and the
    column of a malformed row."""
    path = Path(path)
    out: list[RunResult] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in RUN_COLUMNS[:-1] if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a runs.csv (no column(s) {', '.join(missing)})")
        for line, row in enumerate(reader, start=2):
            column = "run"
            try:
                run, seed = int(row["run"]), int(row["seed"])
                column = "duration_s"
                duration = float(row["duration_s"])
                column = "cpu_bound"
                bound = {"true": True, "false": False, "": None}[row.get("cpu_bound", "")]
                values = {}
                for column, cell in row.items():
                    if column not in RUN_COLUMNS and cell not in ("", None):
                        values[column] = float(cell)
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{path}:{line}: malformed {column!r}") from None
            out.append(RunResult(
                row["scenario"], row["policy"], run, seed, duration, metrics=values,
                cpu_bound=bound,
            ))
    return out


def _cell(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ""


def _bool_cell(x: bool | None) -> str:
    return "" if x is None else str(x).lower()


def _csv_text(header: list[str], rows: Iterable[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# Tables


def _groups(results: Iterable[RunResult]) -> dict[tuple[str, str], list[RunResult]]:
    """Runs by (scenario, policy), in order of first appearance (the runner's order)."""
    out: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        out.setdefault((r.scenario, r.policy), []).append(r)
    return out


def _values(runs: Iterable[RunResult], name: str) -> list[float]:
    return [v for r in runs if name in r.metrics and math.isfinite(v := r.metrics[name])]


def _decimals(ref: float) -> int:
    """Decimals that show 3 significant digits of ``ref`` (at least 0)."""
    if ref == 0 or not math.isfinite(ref):
        return 2
    return max(0, 2 - math.floor(math.log10(abs(ref))))


def format_mean_ci(mean: float, ci: float) -> str:
    """``"9.56 ± 0.12"``: 3 significant digits of the larger of |mean| and the half width, both
    to the same decimals; just the mean when the half width is undefined (one value)."""
    ref = max(abs(mean), ci) if math.isfinite(ci) else abs(mean)
    d = _decimals(ref)
    if abs(ref) >= 1e6 or (ref != 0 and abs(ref) < 1e-4):
        return f"{mean:.3g}" + (f" ± {ci:.3g}" if math.isfinite(ci) else "")
    return f"{mean:.{d}f}" + (f" ± {ci:.{d}f}" if math.isfinite(ci) else "")


def _cell_text(runs: Sequence[RunResult], name: str) -> tuple[str, float | None]:
    vals = _values(runs, name)
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
    """Footnote lines for a table of ``results``: which runs were CPU-bound (marked
    ``CPU_MARK``) and by which rule, and how many runs have no CPU record; "" when all runs were
    recorded and none was CPU-bound."""
    bound = cpu_bound_runs(results)
    unknown = sum(1 for r in results if r.cpu_bound is None)
    lines = []
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
    for (scenario, policy), runs in _groups(results).items():
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
    groups = _groups(results)
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


# --------------------------------------------------------------------------------------------
# Plots


def _figure(title: str, xlabel: str, ylabel: str) -> tuple[Any, Any]:
    # The Agg canvas directly: no pyplot global state, no display, safe in threads.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path


def mean_series(
    runs: Sequence[RunResult], name: str, points: int = 200
) -> tuple[list[float], list[float], list[float]]:
    """Series ``name`` averaged over runs: (t, mean, ci95 half width) on a common time grid.

    Every run is linearly interpolated onto ``points`` equally spaced times spanning all runs;
    a run contributes only within its own time range. Empty lists when no run has the series.
    """
    import numpy as np

    curves = [sorted(r.series[name]) for r in runs if r.series.get(name)]
    if not curves:
        return [], [], []
    t0 = min(c[0][0] for c in curves)
    t1 = max(c[-1][0] for c in curves)
    grid = np.linspace(t0, t1, max(2, points)) if t1 > t0 else np.array([t0])
    stack = np.full((len(curves), grid.size), np.nan)
    for i, c in enumerate(curves):
        t = np.array([p[0] for p in c])
        v = np.array([p[1] for p in c])
        inside = (grid >= t[0]) & (grid <= t[-1])
        stack[i, inside] = np.interp(grid[inside], t, v)
    means, cis = [], []
    for col in stack.T:
        m, h = mean_ci95(col[~np.isnan(col)].tolist())
        means.append(m)
        cis.append(h)
    return grid.tolist(), means, cis


def plot_throughput(path: str | Path, runs: Sequence[RunResult], title: str) -> Path | None:
    """Throughput over time per series (paths, total): the run itself for one run, else the
    mean over the runs with a shaded 95 % CI band. None (nothing written) without series."""
    names = sorted({n for r in runs for n, pts in r.series.items() if pts})
    if not names:
        return None
    names = [n for n in names if n != "total"] + (["total"] if "total" in names else [])
    fig, ax = _figure(title, "time (s)", "throughput (Mbit/s)")
    for name in names:
        t, m, h = mean_series(runs, name)
        style = {"color": "black", "linewidth": 2} if name == "total" else {}
        ax.plot(t, m, label=name, **style)
        if len(runs) > 1:
            lo = [a - b if math.isfinite(b) else a for a, b in zip(m, h, strict=True)]
            hi = [a + b if math.isfinite(b) else a for a, b in zip(m, h, strict=True)]
            ax.fill_between(t, lo, hi, alpha=0.2, **({"color": "black"} if name == "total" else {}))
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    return _save(fig, Path(path))


def plot_fct(path: str | Path, results: Sequence[RunResult], title: str) -> Path | None:
    """Mean FCT (with 95 % CI error bars over flows) by file size, one line per policy;
    None without FCT records."""
    by_policy: dict[str, list[tuple[int, float]]] = {}
    for r in results:
        if r.fct:
            by_policy.setdefault(r.policy, []).extend(r.fct)
    if not by_policy:
        return None
    fig, ax = _figure(title, "file size (bytes)", "flow completion time (s)")
    for policy, records in by_policy.items():
        sizes = sorted({s for s, _ in records})
        stats = [mean_ci95([f for s, f in records if s == size]) for size in sizes]
        ax.errorbar(
            sizes,
            [m for m, _ in stats],
            yerr=[h if math.isfinite(h) else 0.0 for _, h in stats],
            marker="o",
            capsize=3,
            label=policy,
        )
    if len({s for recs in by_policy.values() for s, _ in recs}) > 1:
        ax.set_xscale("log")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    return _save(fig, Path(path))


def plot_cdf(
    path: str | Path, samples: Mapping[str, Sequence[float]], title: str, xlabel: str
) -> Path | None:
    """Empirical CDF (``mpsched.stats.cdf``) per label; None when no label has samples."""
    samples = {k: v for k, v in samples.items() if len(v)}
    if not samples:
        return None
    fig, ax = _figure(title, xlabel, "CDF")
    for label, xs in samples.items():
        x, f = cdf(xs)
        ax.step([x[0], *x], [0.0, *f], where="post", label=f"{label} (n={len(x)})")
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize="small")
    return _save(fig, Path(path))


LOAD_SUFFIX = re.compile(r"-load\d+(?:\.\d+)?$")


def load_family(scenario: str) -> str:
    """A scenario's name without the ``-load<pct>`` suffix of a load sweep's variants."""
    return LOAD_SUFFIX.sub("", scenario)


def plot_fct_vs_load(
    path: str | Path, results: Sequence[RunResult], bucket: str, title: str
) -> Path | None:
    """Mean FCT of one size bucket (``fct_<bucket>_mean_s``, mean ± 95 % CI over the runs) and
    its p99 (dashed) against the offered load (``offered_load_pct``), one line per policy;
    None unless some policy has values at two loads or more."""
    by_policy: dict[str, dict[float, list[RunResult]]] = {}
    for r in results:
        load = r.metrics.get("offered_load_pct", math.nan)
        if math.isfinite(load) and _values([r], f"fct_{bucket}_mean_s"):
            by_policy.setdefault(r.policy, {}).setdefault(load, []).append(r)
    if not any(len(loads) >= 2 for loads in by_policy.values()):
        return None
    fig, ax = _figure(title, "offered load (% of summed capacity)", "flow completion time (s)")
    for policy, loads in by_policy.items():
        xs = sorted(loads)
        mean = [mean_ci95(_values(loads[x], f"fct_{bucket}_mean_s")) for x in xs]
        p99 = [mean_ci95(_values(loads[x], f"fct_{bucket}_p99_s"))[0] for x in xs]
        line = ax.errorbar(
            xs,
            [m for m, _ in mean],
            yerr=[h if math.isfinite(h) else 0.0 for _, h in mean],
            marker="o",
            capsize=3,
            label=f"{policy} mean",
        )
        ax.plot(xs, p99, linestyle="--", color=line[0].get_color(), label=f"{policy} p99")
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    return _save(fig, Path(path))


def write_load_plots(directory: str | Path, results: Sequence[RunResult]) -> list[Path]:
    """Per load sweep (scenarios named ``<family>-load<pct>``, or one scenario run at several
    loads) and size bucket: ``fct_load_<family>_<bucket>.png`` (``plot_fct_vs_load``)."""
    directory = Path(directory)
    families: dict[str, list[RunResult]] = {}
    for r in results:
        families.setdefault(load_family(r.scenario), []).append(r)
    written = []
    for family, runs in families.items():
        for bucket, _, _ in metrics.FCT_BUCKETS:
            out = plot_fct_vs_load(
                directory / f"fct_load_{_slug(family)}_{bucket}.png",
                runs,
                bucket,
                f"{family}: FCT of {bucket} flows vs load",
            )
            if out is not None:
                written.append(out)
    return written


def _pooled(runs: Iterable[RunResult], attr: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in runs:
        out.setdefault(r.policy, []).extend(float(x) for x in getattr(r, attr))
    return out


def write_plots(directory: str | Path, results: Sequence[RunResult]) -> list[Path]:
    """All plots as PNG into ``directory``; returns the files written. A plot without data is
    skipped (never an empty PNG). Per (scenario, policy): ``throughput_<s>_<p>.png`` (mean over
    runs). Per scenario, policies compared: ``fct_<s>.png`` (FCT by file size),
    ``rtt_cdf_<s>.png`` (CDF of RTT samples), ``reorder_cdf_<s>.png`` (CDF of RFC 4737
    reordering extents), samples pooled over the runs."""
    directory = Path(directory)
    written: list[Path] = []

    def keep(p: Path | None, what: str) -> None:
        if p is None:
            log.info("no data for %s: plot skipped", what)
        else:
            written.append(p)

    groups = _groups(results)
    for (scenario, policy), runs in groups.items():
        name = f"throughput_{_slug(scenario)}_{_slug(policy)}.png"
        n = f"{len(runs)} runs" if len(runs) > 1 else f"run {runs[0].run}"
        keep(
            plot_throughput(directory / name, runs, f"{scenario} / {policy} ({n})"),
            f"throughput {scenario}/{policy}",
        )
    for scenario in dict.fromkeys(s for s, _ in groups):
        runs = [r for r in results if r.scenario == scenario]
        s = _slug(scenario)
        keep(plot_fct(directory / f"fct_{s}.png", runs, f"{scenario}: FCT"), f"FCT {scenario}")
        keep(
            plot_cdf(
                directory / f"rtt_cdf_{s}.png", _pooled(runs, "rtt_ms"), f"{scenario}: RTT",
                "RTT (ms)",
            ),
            f"RTT {scenario}",
        )  # fmt: skip
        keep(
            plot_cdf(
                directory / f"reorder_cdf_{s}.png", _pooled(runs, "reorder_extents"),
                f"{scenario}: reordering extent (RFC 4737)", "reordering extent (packets)",
            ),
            f"reordering {scenario}",
        )  # fmt: skip
    return written
