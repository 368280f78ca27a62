"""The `adaptive` policy's REST view (GET /classes/{id}/adaptive, per switch).

`table_view` renders the Beta table (`adaptive_bayes.BetaTable`) per context and arm: the
posterior's alpha, beta and mean, the dwells scored and the latest outcome; `dwell_view` the
current arm's run. `Adaptive.view` puts them together with the context and the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mpsched.controller.policies.adaptive_arms import Arm
from mpsched.controller.policies.adaptive_bayes import BetaTable

if TYPE_CHECKING:
    from mpsched.controller.policies.adaptive import Dwell


def table_view(table: BetaTable, arms: Sequence[Arm]) -> dict[str, Any]:
    """Per context: its dwells, the explored ones, and per arm the posterior and evidence."""
    tables: dict[str, Any] = {}
    for ctx, item in table.to_json()["contexts"].items():
        by_arm = {}
        for a in arms:
            alpha, beta = table.posterior(ctx, a.label)
            cell = item["arms"].get(a.label, {})
            by_arm[a.label] = {
                "alpha": round(alpha, 6), "beta": round(beta, 6),
                "mean": round(alpha / (alpha + beta), 6),
                "n": cell.get("n", 0), "last": cell.get("last"),
            }
        tables[ctx] = {"dwells": item["dwells"], "explored": item["explored"], "arms": by_arm}
    return tables


def dwell_view(d: Dwell | None, dwell_periods: int) -> dict[str, Any] | None:
    """The current dwell: its context, how far it ran, how its arm was chosen."""
    if d is None:
        return None
    return {
        "context": d.ctx, "periods": d.periods, "of": dwell_periods,
        "explored": d.choice.explored, "note": d.choice.note,
        "started": round(d.started, 3),
    }
