"""The control loop's statistics (`LoopStats`): what the loop measures
(src/mpsched/controller/scheduling/loop.py) and GET /decisions shows."""

from __future__ import annotations

from mpsched.controller.model.view import Number, View


class LoopStats(View):
    iterations: int
    writes: int
    latency_ms_p50: float | None
    latency_ms_p99: float | None
    control_period_ms: Number
    # the share of the period (%) a step may spend on a fabric's pairs now: step_budget_pct,
    # lowered while the process is over cpu_budget_pct (src/mpsched/controller/runtime/governor.py)
    step_budget_pct_now: Number | None = None
    cpu_pct: Number | None = None  # the process's CPU over the last 2 s, % of one core
