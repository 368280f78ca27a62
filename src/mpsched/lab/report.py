"""Run results: the record of one run (``RunResult``), its files (one JSON per run,
``runs.csv`` and ``series.csv``), the metrics' declarations, and the "mean ± CI" format.

The experiment runner runs every (scenario, policy) N times with fixed seeds and writes one
``RunResult`` per run here. Metric values come from ``mpsched.lab.metrics``; the Markdown
tables are ``mpsched.lab.tables``, the PNG plots ``mpsched.lab.plots``; both only aggregate
(mean ± 95 % CI via ``mpsched.stats.mean_ci95``) and format.

Which metrics are better high and which low is declared once, in ``METRICS``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer

from mpsched import safeload, validation
from mpsched.lab import metrics

SCHEMA = 1


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
    MetricSpec("cpu_cores", "", None, "cores the CPU shares are a part of"),
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
    ``controller``, ``send0@h1``, ...). ``cpu_limit_pct``: the CPU limit (% of the cores) the
    testbed ran under (``--cpu-limit``), None without one; idle and ``cpu_bound`` are then
    against the limit.

    A fabric run: ``pairs`` holds per ordered pair of edges (``leaf1->leaf2``) the metrics
    of its flows (``mpsched.lab.fabric_analysis``); empty otherwise. ``warnings``: what the
    analysis found amiss in the run, a sentence each (a fabric pair that carried nothing).
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
    cpu_limit_pct: float | None = None
    pairs: dict[str, dict[str, JsonFloat]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

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


def slug(text: str) -> str:
    """``text`` reduced to file-safe characters (for file names)."""
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
    return f"{slug(result.scenario)}__{slug(result.policy)}__run{result.run:03d}.json"


def write_run(directory: str | Path, result: RunResult) -> Path:
    """Write one run as JSON (atomically) into ``directory``; returns the file."""
    path = Path(directory) / run_filename(result)
    _atomic_write(path, json.dumps(result.to_dict(), indent=1, allow_nan=False) + "\n")
    return path


# A run's JSON is this tool's own output, series and every flow's FCT included: bounded so
# that a stray file (or /dev/zero) cannot hold a resume, far above any run's.
RUN_LIMITS = safeload.Limits(max_bytes=256 << 20, max_nodes=20_000_000)


def read_run(path: str | Path) -> RunResult:
    """A run written by ``write_run``."""
    return RunResult.from_dict(safeload.read_document(Path(path), limits=RUN_LIMITS),
                               source=path)


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
    (``true``, ``false``, empty = unknown), where some run had a CPU limit cpu_limit_pct
    (empty: none), each metric; an empty cell where a run lacks a metric) and ``series.csv``
    (long format: scenario, policy, run, series, t_s, value). Returns both paths."""
    directory = Path(directory)
    names = metric_names(results)
    limited = any(r.cpu_limit_pct is not None for r in results)
    runs = _csv_text(
        [*REQUIRED_COLUMNS, "cpu_bound", *(["cpu_limit_pct"] if limited else []), *names],
        (
            [r.scenario, r.policy, r.run, r.seed, _cell(r.duration_s), _bool_cell(r.cpu_bound)]
            + ([_optional_cell(r.cpu_limit_pct)] if limited else [])
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


REQUIRED_COLUMNS = ("scenario", "policy", "run", "seed", "duration_s")
RUN_COLUMNS = (*REQUIRED_COLUMNS, "cpu_bound", "cpu_limit_pct")


def read_csv(path: str | Path) -> list[RunResult]:
    """The runs of a ``runs.csv`` written by ``write_csv`` (scalar metrics, the cpu_bound
    mark and the CPU limit only: series, FCTs and samples are not in it; a file from before
    the mark has no cpu_bound column, its runs count as unknown). ValueError names the file,
    the line and the column of a malformed row."""
    path = Path(path)
    out: list[RunResult] = []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a runs.csv (no column(s) {', '.join(missing)})")
        for line, row in _rows(reader, path):
            column = "run"
            try:
                run, seed = int(row["run"]), int(row["seed"])
                column = "duration_s"
                duration = float(row["duration_s"])
                column = "cpu_bound"
                bound = {"true": True, "false": False, "": None}[row.get("cpu_bound", "")]
                column = "cpu_limit_pct"
                limit = float(row["cpu_limit_pct"]) if row.get("cpu_limit_pct") else None
                values = {}
                for column, cell in row.items():
                    if column not in RUN_COLUMNS and cell not in ("", None):
                        values[column] = float(cell)
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{path}:{line}: malformed {column!r}") from None
            out.append(RunResult(
                row["scenario"], row["policy"], run, seed, duration, metrics=values,
                cpu_bound=bound, cpu_limit_pct=limit,
            ))
    return out


def _rows(reader: csv.DictReader, path: Path) -> Iterator[tuple[int, dict]]:
    """(line, row) of `reader`; csv's own error (a field over its 128 KiB, a NUL) as the
    ValueError naming the file and line that `read_csv` raises."""
    try:
        yield from safeload.csv_rows(reader)
    except safeload.RefusedError as exc:
        raise ValueError(f"{path}:{exc.line}: {exc.message}") from None


def _cell(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ""


def _optional_cell(x: float | None) -> str:
    return "" if x is None else _cell(x)


def _bool_cell(x: bool | None) -> str:
    return "" if x is None else str(x).lower()


def _csv_text(header: list[str], rows: Iterable[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# Grouping and formatting, shared by the tables and the plots


def by_scenario_policy(results: Iterable[RunResult]) -> dict[tuple[str, str], list[RunResult]]:
    """Runs by (scenario, policy), in order of first appearance (the runner's order)."""
    out: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        out.setdefault((r.scenario, r.policy), []).append(r)
    return out


def metric_values(runs: Iterable[RunResult], name: str) -> list[float]:
    """The finite values of metric ``name`` over ``runs`` (a run without it gives none)."""
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
