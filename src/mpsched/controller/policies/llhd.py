"""LLHD: low latency and high data rate scheduling (LLHD, Sensors 2022), in-network form.

Paper (Lubna, Mahmud, Cho, "LLHD Scheduler", Sensors 2022, doi:10.3390/s22249869; Section 3
and Algorithm 1):
    gamma = GP_N + β · 1 / RTT_N,  GP_N = GP / GP_max,  RTT_N = RTT / RTT_max
i.e. gamma_p = GP_p / GP_max + β · RTT_max / RTT_p over the subflows that are neither backup nor
(temporarily) unavailable, with β = 0.001; the subflow with the largest gamma and an
available cwnd sends the next packet; goodput = throughput less losses.

In-network reading (docs/scheduling.md, "LLHD"): GP_p = the goodput the path could deliver, its
availability (`availability.availability_mbps`: the delivered goodput while the path holds a
standing queue, else capacity · (1 - loss), or a neutral prior), RTT_p = `srtt_ms`, over the
alive paths; the decision is made once per control period for flowlets (Mode.FLOWLET) instead
of per ACK for packets. In MPTCP a subflow's goodput is what its window lets it deliver; in
the network it is what the scheduler sent there, so the delivered goodput alone starved a
lightly used path and, with traffic paused, ranked probe-sized noise (docs/control-loop.md,
"Idle paths: demand is not ability"):
- ``weighted`` True (default): weights ∝ gamma_p, so the next flowlets spread by utility;
- ``weighted`` False: winner takes all, the paper's rule (all weight on the best gamma).

Deviations and reconstructions:
- Algorithm 1 assigns ``gamma_curr = gamma_max`` where it means
  ``gamma_max = gamma_curr``: as printed, gamma_max stays 0 and the *last* available subflow
  wins. The intent is implemented: the best is the maximum gamma (ties: the lowest path id).
- Algorithm 1's cwnd-available test is not applied: the weights hold for a whole control
  period, in which a path's window fills and drains many times; skipping a path on one
  in-flight reading would make the weights flap.
- Neutral treatment of missing estimates: a path without goodput, capacity or delay gets
  the mean availability of the others (none known anywhere: GP = 0); an unmeasured srtt
  takes the smallest srtt known among the alive paths (so a new path is not penalised on
  delay); with no srtt known at all the RTT term is β for every path. A
  measured srtt of 0 is read as `min_rtt_ms` (no division by 0). If GP_max = 0 the goodput
  term is 0 for every path.

Congestion-aware variant ``llhd-ca`` (Mode.CA; `docs/scheduling.md`): the same gamma, with
RTT_p = the base RTT (`rtt_min_ms`, else srtt: the queueing part is the switch's live term),
becomes the cost, with S = `offset_span_us` and A_max = the largest availability:
- offset_p = S · (gamma_max - gamma_p) / gamma_max (0 for the best path, S for gamma 0);
- utilisation: every path's reference capacity is A_max and c_util = S / gamma_max, so the
  rate a path delivers now takes its share GP / A_max back out of its goodput term (the
  offset counts what the path could deliver, the live term what it already carries);
- c_qdelay = S · β · RTT_max / (gamma_max · RTT_min²) (RTTs in µs): the slope of
  β · RTT_max / RTT at the smallest RTT, so a queue costs what it takes from the RTT term (with
  the paper's β = 0.001 almost nothing: LLHD is a goodput scheduler);
- c_loss = S / gamma_max · 0.01 µs per 1 % (a loss lowers the goodput, throughput less
  losses, by that share of A_max);
- weights 1 on every alive path; epsilon and max_age as parameters.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.availability import availability_mbps
from mpsched.controller.policies.base import Policy, equal_weights, fmt_scores, no_alive_decision
from mpsched.controller.policies.paper_ca import (
    EPSILON_META,
    MAX_AGE_META,
    ca_decision,
    meta,
    no_alive,
    relative_offsets,
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
class Llhd(Policy[LlhdParams]):
    name = "llhd"
    repeats = True
    Params = LlhdParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.FLOWLET)
        avail = availability_mbps(alive)
        gamma = gammas(
            avail,
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
            reason=(
                f"llhd: {how}; best path {best}; gamma {fmt_scores(gamma)}; "
                f"GP = availability Mbit/s {fmt_avail(avail)}"
            ),
        )


def fmt_avail(avail: Mapping[int, float | None]) -> str:
    return fmt_scores({pid: v for pid, v in avail.items() if v is not None}) or "none"


@dataclass(frozen=True)
class LlhdCaParams:
    beta: float = field(default=LlhdParams.beta, metadata=meta(LlhdParams, "beta"))
    min_rtt_ms: float = field(
        default=LlhdParams.min_rtt_ms, metadata=meta(LlhdParams, "min_rtt_ms")
    )
    offset_span_us: float = field(
        default=10000.0,
        metadata={
            "min": 0.0,
            "max": 1e7,
            "doc": "S: offset of a path whose gamma is 0, S·(gmax-g)/gmax in general (µs)",
        },
    )
    epsilon_us: float = field(default=CaCost.epsilon_us, metadata=EPSILON_META)
    max_age_ms: float = field(default=CaCost.max_age_ms, metadata=MAX_AGE_META)


def llhd_cost(
    alive: Sequence[PathState], prm: LlhdCaParams
) -> tuple[CaCost, dict[int, float], dict[int, float | None]]:
    """The CA cost of llhd-ca (module docstring), gamma and the availabilities."""
    avail = availability_mbps(alive)
    base = {p.path_id: p.rtt_min_ms if p.rtt_min_ms is not None else p.srtt_ms for p in alive}
    gamma = gammas(avail, base, prm.beta, prm.min_rtt_ms)
    g_max = max(gamma.values(), default=0.0)
    a_max = max((v for v in avail.values() if v is not None and v > 0), default=None)
    offsets = relative_offsets(gamma, prm.offset_span_us)
    known = [v for v in base.values() if v is not None]
    fill = min(known) if known else 1.0
    rtt_us = [max(prm.min_rtt_ms, v if v is not None else fill) * 1000 for v in base.values()]
    scale = prm.offset_span_us / g_max if g_max > 0 else 0.0
    qdelay = scale * prm.beta * max(rtt_us) / min(rtt_us) ** 2 if rtt_us else 0.0
    cost = CaCost(
        qdelay_coef=qdelay,
        loss_coef_us=scale * 0.01,
        util_coef_us=scale if a_max is not None else 0.0,
        epsilon_us=prm.epsilon_us,
        max_age_ms=prm.max_age_ms,
        paths={p.path_id: CaPath(offsets[p.path_id], a_max) for p in alive},
    )
    return cost, gamma, avail


@register
class LlhdCa(Policy[LlhdCaParams]):
    """LLHD's utility as the cost of the congestion-aware data plane (module docstring)."""

    name = "llhd-ca"
    repeats = True
    Params = LlhdCaParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        cost, gamma, avail = llhd_cost(alive, self.params)
        if not alive:
            return no_alive(paths, cost)
        why = (
            f"offsets S·(gmax-g)/gmax from gamma {fmt_scores(gamma)} "
            f"(GP = availability Mbit/s {fmt_avail(avail)}, RTT = base RTT); "
            f"util against A_max, c_qdelay from β's RTT term"
        )
        return ca_decision(self.name, paths, [p.path_id for p in alive], cost, why)
