"""LLHD: low latency and high data rate scheduling (seed 003, Sensors 2022), in-network form.

Paper (seeds/003_5013e52659220c9d.txt, lines 72-78 and Algorithm 1 at lines 79-103):
    gamma = GP_N + β · 1 / RTT_N,  GP_N = GP / GP_max,  RTT_N = RTT / RTT_max
i.e. gamma_p = GP_p / GP_max + β · RTT_max / RTT_p over the subflows that are neither backup nor
(temporarily) unavailable, with β = 0.001 (line 83); the subflow with the largest gamma and an
available cwnd sends the next packet; goodput = throughput less losses (line 72).

In-network reading (DESIGN.md §5): GP_p = the goodput delivered at the egress
(`goodput_mbps`), RTT_p = `srtt_ms`, over the alive paths; the decision is made once per
control period for flowlets (Mode.FLOWLET) instead of per ACK for packets:
- ``weighted`` True (default): weights ∝ gamma_p, so the next flowlets spread by utility;
- ``weighted`` False: winner takes all, the paper's rule (all weight on the best gamma).

Deviations and reconstructions:
- Algorithm 1 line 100 assigns ``gamma_curr = gamma_max`` where it means
  ``gamma_max = gamma_curr``: as printed, gamma_max stays 0 and the *last* available subflow
  wins. The intent is implemented: the best is the maximum gamma (ties: the lowest path id).
- The cwnd-available test (line 99) is not applied: the weights hold for a whole control
  period, in which a path's window fills and drains many times; skipping a path on one
  in-flight reading would make the weights flap.
- Neutral treatment of missing estimates: an unmeasured goodput counts as GP = 0; an
  unmeasured srtt takes the smallest srtt known among the alive paths (so a new path is not
  penalised on delay); with no srtt known at all the RTT term is β for every path. A
  measured srtt of 0 is read as `min_rtt_ms` (no division by 0). If GP_max = 0 the goodput
  term is 0 for every path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mpsched.controller.policies.base import (
    Decision,
    Mode,
    PathState,
    Policy,
    equal_weights,
    fmt_scores,
    no_alive_decision,
)
from mpsched.controller.policies.registry import register

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LlhdParams:
    beta: float = field(
        default=0.001,
        metadata={"min": 0.0, "max": 10.0, "doc": "LLHD β: weight of the RTT term (paper: 0.001)"},
    )
    weighted: bool = field(
        default=True,
        metadata={"doc": "weights ∝ gamma (True) or all weight on the best gamma (False)"},
    )
    min_rtt_ms: float = field(
        default=0.001,
        metadata={
            "min": 1e-6,
            "max": 1000.0,
            "doc": "smallest RTT used in RTT_max / RTT (guards a 0 ms reading)",
        },
    )


def gammas(
    goodput: Mapping[int, float | None],
    rtt_ms: Mapping[int, float | None],
    beta: float,
    min_rtt_ms: float = 0.001,
) -> dict[int, float]:
    """gamma_p = GP_p / GP_max + β · RTT_max / RTT_p with the neutral fills documented above."""
    gp = {pid: (v if v is not None and v > 0 else 0.0) for pid, v in goodput.items()}
    gp_max = max(gp.values(), default=0.0)
    known = [v for v in rtt_ms.values() if v is not None]
    fill = min(known) if known else 1.0
    rtt = {pid: max(min_rtt_ms, v if v is not None else fill) for pid, v in rtt_ms.items()}
    rtt_max = max(rtt.values(), default=1.0)
    return {
        pid: (gp[pid] / gp_max if gp_max > 0 else 0.0) + beta * rtt_max / rtt[pid] for pid in gp
    }


def best_path(gamma: Mapping[int, float]) -> int:
    """The path with the largest gamma, ties to the lowest id (Algorithm 1's intent:
    ``gamma_max = gamma_curr`` on a new maximum)."""
    best, gamma_max = -1, float("-inf")
    for pid in sorted(gamma):
        gamma_curr = gamma[pid]
        if gamma_curr > gamma_max:
            gamma_max = gamma_curr
            best = pid
    return best


@register
class Llhd(Policy):
    name = "llhd"
    Params = LlhdParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.FLOWLET)
        gamma = gammas(
            {p.path_id: p.goodput_mbps for p in alive},
            {p.path_id: p.srtt_ms for p in alive},
            self.params.beta,
            self.params.min_rtt_ms,
        )
        best = best_path(gamma)
        log.debug("llhd: gamma %s, best %d", gamma, best)
        if self.params.weighted and any(g > 0 for g in gamma.values()):
            weights = {p.path_id: gamma.get(p.path_id, 0.0) for p in paths}
            how = "weights ∝ gamma"
        else:
            weights = equal_weights(paths, [best])
            how = f"all weight on the best gamma (path {best})"
        scores = {p.path_id: gamma.get(p.path_id, 0.0) for p in paths}
        return Decision(
            weights=weights,
            mode=Mode.FLOWLET,
            scores=scores,
            reason=f"llhd: {how}; best path {best}; gamma {fmt_scores(gamma)}",
        )
