"""PNG plots of run results: throughput over time, FCT by size and against the offered load,
CDFs of RTT and reordering, policies' ratios to a reference paired by seed (``write_plots``,
``write_load_plots``, ``plot_paired``). A plot without data is
skipped, never drawn empty. Matplotlib is imported only when a plot is drawn."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mpsched.lab import metrics
from mpsched.lab.report import RunResult, by_scenario_policy, metric_values, slug
from mpsched.stats import cdf, mean_ci95

log = logging.getLogger(__name__)


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
        if math.isfinite(load) and metric_values([r], f"fct_{bucket}_mean_s"):
            by_policy.setdefault(r.policy, {}).setdefault(load, []).append(r)
    if not any(len(loads) >= 2 for loads in by_policy.values()):
        return None
    fig, ax = _figure(title, "offered load (% of summed capacity)", "flow completion time (s)")
    for policy, loads in by_policy.items():
        xs = sorted(loads)
        mean = [mean_ci95(metric_values(loads[x], f"fct_{bucket}_mean_s")) for x in xs]
        p99 = [mean_ci95(metric_values(loads[x], f"fct_{bucket}_p99_s"))[0] for x in xs]
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


def plot_timeline(
    path: str | Path,
    series: Mapping[str, Sequence[tuple[float, float, float]]],
    title: str,
    shade: tuple[float, float] | None = None,
) -> Path | None:
    """One line per policy: the short flows' mean FCT per arrival bin (the bin's middle, the
    mean over the runs ± 95 % CI: ``fctwindow.timelines``), the window ``shade`` (e.g. a
    link's failure) shaded; None without two bins of any policy."""
    if not any(len(points) >= 2 for points in series.values()):
        return None
    fig, ax = _figure(title, "arrival time in the run (s)", "mean FCT (s)")
    if shade is not None:
        ax.axvspan(*shade, color="tab:red", alpha=0.12, linewidth=0)
    for policy, points in series.items():
        ax.errorbar([t for t, _, _ in points], [m for _, m, _ in points],
                    yerr=[h if math.isfinite(h) else 0.0 for _, _, h in points],
                    marker="o", capsize=3, label=policy)
    ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    return _save(fig, Path(path))


def plot_paired(
    path: str | Path,
    ratios: Mapping[str, tuple[tuple[float, float], int]],
    reference: str,
    title: str,
) -> Path | None:
    """One horizontal bar per policy: its ratio to ``reference`` paired by seed (mean ± 95 % CI
    over the seeds, ``fct.paired_ratios`` of one scenario, keyed by policy), sorted best (lowest)
    first, a line at 1 (level with the reference); None without a finite ratio."""
    rows = sorted(
        ((p, m, h, n) for p, ((m, h), n) in ratios.items() if p != reference and math.isfinite(m)),
        key=lambda row: row[1],
    )
    if not rows:
        return None
    fig, ax = _figure(title, f"ratio to {reference} (paired by seed)", "")
    fig.set_size_inches(7, max(2.5, 0.3 * len(rows) + 1.2))
    ys = list(range(len(rows)))[::-1]
    ax.barh(
        ys,
        [m for _, m, _, _ in rows],
        xerr=[h if math.isfinite(h) else 0.0 for _, _, h, _ in rows],
        capsize=3,
        color=["tab:blue" if m + (h if math.isfinite(h) else 0.0) < 1 else "tab:gray"
               for _, m, h, _ in rows],
    )  # fmt: skip
    ax.set_yticks(ys, [f"{p} ({n})" for p, _, _, n in rows])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlim(left=0)
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
                directory / f"fct_load_{slug(family)}_{bucket}.png",
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

    groups = by_scenario_policy(results)
    for (scenario, policy), runs in groups.items():
        name = f"throughput_{slug(scenario)}_{slug(policy)}.png"
        n = f"{len(runs)} runs" if len(runs) > 1 else f"run {runs[0].run}"
        keep(
            plot_throughput(directory / name, runs, f"{scenario} / {policy} ({n})"),
            f"throughput {scenario}/{policy}",
        )
    for scenario in dict.fromkeys(s for s, _ in groups):
        runs = [r for r in results if r.scenario == scenario]
        s = slug(scenario)
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
