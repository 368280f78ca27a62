"""Run results shared by the tests of the result writers (report, tables, plots)."""

from __future__ import annotations

import math

from mpsched.lab.report import RunResult


def sample_results() -> list[RunResult]:
    return [
        RunResult(
            "llhd1", "hash", 0, 1, 20.0,
            metrics={"goodput_mbps": 9.0, "jain": 0.9, "rtt_p50_ms": 20.0},
            series={"path1": [(0.5, 6.0), (1.5, 7.0)], "path2": [(0.5, 3.0), (1.5, 2.0)],
                    "total": [(0.5, 9.0), (1.5, 9.0)]},
            fct=[(1000, 0.1), (10000, 0.5), (1000, 0.3)],
            rtt_ms=[10.0, 12.0, 11.0],
            reorder_extents=[1, 2],
        ),
        RunResult(
            "llhd1", "hash", 1, 2, 20.0,
            metrics={"goodput_mbps": 11.0, "jain": math.nan, "rtt_p50_ms": 22.0},
            series={"total": [(0.5, 10.0), (1.5, 12.0)]},
        ),
        RunResult(
            "llhd1", "llhd", 0, 1, 20.0,
            metrics={"custom": 3.0, "goodput_mbps": 12.0, "jain": 0.95, "rtt_p50_ms": 15.0},
            series={"total": [(0.5, 12.0), (1.5, 12.0)]},
            fct=[(1000, 0.05)],
            rtt_ms=[8.0, 9.0],
        ),
        RunResult("lm3", "hash", 0, 1, 60.0, metrics={"goodput_mbps": 5.0}),
    ]  # fmt: skip


def load_sweep() -> list[RunResult]:
    out = []
    for policy, base in (("ecmp", 1.0), ("letflow", 0.5)):
        for load in (30, 70):
            for run in (0, 1):
                fct = base * load / 30 + 0.1 * run
                out.append(RunResult(
                    f"asym-load{load}", policy, run, run + 1, 30.0, cpu_bound=run == 1,
                    metrics={"offered_load_pct": load, "goodput_mbps": load / 5 + run,
                             "fct_lt100k_mean_s": fct, "fct_lt100k_p99_s": 3 * fct,
                             "slowdown_lt100k_mean": 10 * fct, "flows_lt100k": 40.0},
                ))  # fmt: skip
    return out
