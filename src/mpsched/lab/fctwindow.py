"""The FCT of the flows that arrived in a time window of each run (`fcttable --window A:B`).

A scenario with a link schedule (scenarios/fabric-failure.yaml: leaf1-spine2 down from 20 to
40 s) is about the flows that meet the failure; a run's FCT figures pool them with those
before and after. `windowed` recomputes a run's FCT figures over the open-loop (poisson)
transfers whose arrival fell in [A, B) seconds of the run, from its senders' reports beside
the run JSON (`send<i>_<host>.json`, role `plan`): the FCT overall and per size bucket
(`metrics.FCT_BUCKETS`), counted as the run's own figures are (a transfer still running at
the end at the time it had run, a failed one as not completed: `transfer_fct`,
`fabric_analysis.fct_metrics`). The time
of an arrival is taken from its sender's start (the report's `started`), which follows the
run's t = 0 (the schedules' start) by the time a sender takes to start, a few tenths of a
second. Goodput and slowdown are of the whole run and have no windowed form here: they become
NaN, so that a table does not mix the two.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from mpsched.lab import metrics
from mpsched.lab.fabric_analysis import FlowRecord, fct_metrics
from mpsched.lab.fct import BUCKET_FIELDS
from mpsched.lab.report import RunResult, read_run
from mpsched.lab.run_window import transfer_fct
from mpsched.stats import mean_ci95

Record = tuple[int, float | None, bool]  # (size bytes, FCT s or None, censored)
# a run's figures that have no windowed form (module doc)
WHOLE_RUN = ("goodput_mbps", "goodput_frac", "slowdown_mean", "slowdown_p99")


def parse_window(text: str) -> tuple[float, float]:
    """"A:B" as seconds (A < B); ValueError naming the text otherwise."""
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"--window {text!r}: expected A:B in seconds, e.g. 20:40") from None
    if not (math.isfinite(a) and math.isfinite(b) and 0 <= a < b):
        raise ValueError(f"--window {text!r}: needs 0 <= A < B")
    return a, b


def arrivals(reports: Iterable[dict[str, Any]]) -> Iterator[tuple[float, Record]]:
    """Every transfer of the `plan` reports: when it arrived (s after its sender's start)
    and its (size, FCT, censored) record, counted as the run counts it (module doc)."""
    for report in reports:
        if report.get("role") != "plan" or report.get("started") is None:
            continue
        started = float(report["started"])
        for tr in report.get("transfers", []):
            began = tr.get("arrival", tr.get("start"))
            if began is None:
                continue
            yield float(began) - started, (int(tr["size"]), *transfer_fct(tr, report))


def window_records(reports: Iterable[dict[str, Any]], w0: float, w1: float) -> Iterator[Record]:
    """The transfers of the `plan` reports that arrived in [w0, w1) s of their sender's
    start (`arrivals`)."""
    return (record for t, record in arrivals(reports) if w0 <= t < w1)


def window_metrics(records: list[Record]) -> dict[str, float]:
    """The FCT figures of `records` under the run's metric names (`fct_rows` reads them), as
    a fabric run counts its flows (`fabric_analysis.fct_metrics`); every FCT figure the
    window has no flow for, and the whole run's (`WHOLE_RUN`), NaN."""
    out: dict[str, float] = {name: math.nan for name in WHOLE_RUN}
    out.update({name: math.nan for name in ("transfers", "completed_frac", "fct_mean_s",
                                            "fct_p99_s")})
    for b, _, _ in metrics.FCT_BUCKETS:
        out.update({name.format(b=b): math.nan for name, _ in BUCKET_FIELDS})
    flows = [FlowRecord((0, 0), size, fct, censored) for size, fct, censored in records]
    got = fct_metrics(flows, lambda _pair, _size: math.nan)  # no ideal: no slowdown
    out.update({k: v for k, v in got.items() if not k.startswith("slowdown")})
    return out


def sender_reports(directory: Path) -> list[dict[str, Any]]:
    """The senders' reports written beside a run's JSON."""
    return [json.loads(p.read_text()) for p in sorted(directory.glob("send*_*.json"))
            if not p.name.endswith(".flows.json")]


def windowed(run: RunResult, directory: Path, w0: float, w1: float) -> RunResult:
    """`run` (written in `directory`) with its FCT figures over the window's arrivals."""
    records = list(window_records(sender_reports(directory), w0, w1))
    return replace(run, metrics={**run.metrics, **window_metrics(records)}, pairs={})


def runs_with_dirs(source: Path) -> list[tuple[RunResult, Path]]:
    """Every run under an `mpsched compare` output directory and the directory it was
    written in. ValueError when the source is not a directory (a runs.csv has no
    transfers)."""
    if not source.is_dir():
        raise ValueError(f"{source}: needs a compare output directory (the senders' "
                         "reports), not a runs.csv")
    return [(read_run(p), p.parent) for p in sorted(source.rglob("*__run*.json"))]


def load_windowed(source: Path, w0: float, w1: float) -> list[RunResult]:
    """Every run under an `mpsched compare` output directory, windowed (`runs_with_dirs`)."""
    return [windowed(run, directory, w0, w1) for run, directory in runs_with_dirs(source)]


def run_timeline(reports: Iterable[dict[str, Any]], bin_s: float,
                 bucket: str = "lt100k") -> dict[int, float]:
    """Per bin of `bin_s` s of arrival time (its index from 0), the mean FCT of the run's
    flows of `bucket` that arrived in it (`arrivals`; failed ones left out)."""
    fcts: dict[int, list[float]] = {}
    for t, (size, fct, _) in arrivals(reports):
        if fct is not None and math.isfinite(fct) and metrics.size_bucket(size) == bucket:
            fcts.setdefault(int(t // bin_s), []).append(fct)
    return {k: math.fsum(v) / len(v) for k, v in fcts.items()}


Timeline = list[tuple[float, float, float]]  # (bin's middle s, mean over the runs, CI half)


def timelines(runs: Iterable[tuple[RunResult, Path]], bin_s: float,
              bucket: str = "lt100k") -> dict[tuple[str, str], Timeline]:
    """Per (scenario, policy): per arrival bin the mean over its runs of each run's mean FCT
    of `bucket` in that bin (`run_timeline`), ± the 95 % interval over the runs."""
    per_bin: dict[tuple[str, str], dict[int, list[float]]] = {}
    for run, directory in runs:
        got = per_bin.setdefault((run.scenario, run.policy), {})
        for k, mean in run_timeline(sender_reports(directory), bin_s, bucket).items():
            got.setdefault(k, []).append(mean)
    return {key: [(bin_s * (k + 0.5), *mean_ci95(v)) for k, v in sorted(bins.items())]
            for key, bins in per_bin.items()}
