"""Baseline policies every comparison needs (docs/scheduling.md, "Baselines").

- ``ecmp``: per flow (Mode.HASH), equal weights over the alive paths: the 5-tuple hash.
- ``rr``: per packet (Mode.RR), round robin over the alive paths.
- ``letflow``: per flowlet (Mode.FLOWLET), equal weights: a new flowlet draws a random path
  (LetFlow's rule; the data plane's flowlet hash stands in for its random draw).
- ``minrtt``: per flowlet, all weight on the alive path with the smallest srtt (the Linux
  default scheduler's rule, applied at flowlet granularity). Neutral treatment: alive paths
  with no srtt yet are tried first (equal weights among them) as the Linux default does
  (a new subflow's srtt is 0, so it is picked and thereby probed); ties in srtt go to the
  lowest path id.
- ``wcmp``: per flow (Mode.HASH), weights proportional to `capacity_mbps`. An operator can
  override with `Params.weights`, a string ``"id:weight,id:weight"`` (e.g. ``"1:3,2:1"``;
  a string rather than per-path float fields so that any number of paths fits in one
  scalar parameter). Paths not listed get 0. Neutral treatment: an alive path with no
  capacity estimate gets the mean capacity of the measured alive paths; with none measured,
  equal weights. If every listed path is dead, equal weights over the alive paths. On a
  fabric the capacity is the path's configured bottleneck (`bottleneck_mbps`), not what other
  pairs leave of it: WCMP's weights are the topology's (Zhou et al., EuroSys 2014), and in
  hash mode every weight change moves flows.

Dead paths always get weight 0; with no alive path every policy returns equal weights over
all paths ("no path alive", policy.no_alive_decision).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from mpsched.controller.model.decision import Decision, Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.base import (
    NoParams,
    Policy,
    alive_ids,
    equal_weights,
    fmt_scores,
    no_alive_decision,
)
from mpsched.controller.policies.registry import register

log = logging.getLogger(__name__)


class _EqualPolicy(Policy[NoParams]):
    mode: Mode
    rule: str
    repeats = True

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = alive_ids(paths)
        if not alive:
            return no_alive_decision(paths, self.mode)
        weights = equal_weights(paths, alive)
        return Decision(
            weights=weights,
            mode=self.mode,
            scores=dict(weights),
            reason=f"{self.name}: {self.rule} over alive paths {alive}",
        )


@register
class Ecmp(_EqualPolicy):
    name = "ecmp"
    mode = Mode.HASH
    rule = "equal weights, 5-tuple hash"


@register
class RoundRobin(_EqualPolicy):
    name = "rr"
    mode = Mode.RR
    rule = "per-packet round robin"


@register
class LetFlow(_EqualPolicy):
    name = "letflow"
    mode = Mode.FLOWLET
    rule = "a random path per flowlet"


FULL_GOODPUT = 0.9  # minrtt: a path delivering this share of its capacity counts as full


def _full(p: PathState) -> bool:
    """The in-network reading of "its cwnd is full": bytes in flight reached the path's
    BDP, or (in-flight unknown) it delivers >= FULL_GOODPUT of its capacity."""
    bdp = p.bdp_bytes()
    if p.inflight_bytes is not None and bdp is not None:
        return p.inflight_bytes >= bdp
    if p.goodput_mbps is not None and p.capacity_mbps:
        return p.goodput_mbps >= FULL_GOODPUT * p.capacity_mbps
    return False


@register
class MinRtt(Policy[NoParams]):
    """The Linux default scheduler's rule, per flowlet: the lowest-RTT path whose window
    has room. Paths are taken in srtt order; while a taken path is full (`_full`), the
    next one is added too (the kernel sends on the next subflow when the fastest one's
    cwnd is full). The taken paths share the flowlets in proportion to their capacity
    (equal when unknown). Unmeasured paths are tried first."""

    name = "minrtt"
    repeats = True

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.FLOWLET)
        scores = {p.path_id: p.srtt_ms if p.srtt_ms is not None else 0.0 for p in paths}
        unmeasured = [p.path_id for p in alive if p.srtt_ms is None]
        if unmeasured:
            weights = equal_weights(paths, unmeasured)
            why = f"paths {unmeasured} have no srtt yet: tried first"
        else:
            order = sorted(alive, key=lambda p: (p.srtt_ms, p.path_id))
            taken = [order[0]]
            for p in order[1:]:
                if not _full(taken[-1]):
                    break
                taken.append(p)
            weights = dict.fromkeys((p.path_id for p in paths), 0.0)
            for p in taken:
                weights[p.path_id] = p.capacity_mbps or 1.0
            best = order[0]
            why = f"path {best.path_id} has the smallest srtt ({best.srtt_ms:.3g} ms)"
            if len(taken) > 1:
                why += f"; full, so also {[p.path_id for p in taken[1:]]}"
        return Decision(
            weights=weights,
            mode=Mode.FLOWLET,
            scores=scores,
            reason=f"minrtt: {why}; srtt_ms {fmt_scores(scores)}",
        )


def parse_weights(text: str) -> dict[int, float]:
    """``"1:3,2:1"`` -> {1: 3.0, 2: 1.0}; "" -> {}. FieldError("weights", ...) when malformed."""
    out: dict[int, float] = {}
    if not text.strip():
        return out
    for item in text.split(","):
        pid_text, sep, weight_text = item.partition(":")
        try:
            if not sep:
                raise ValueError
            pid, weight = int(pid_text), float(weight_text)
        except ValueError:
            raise FieldError("weights", f"expected 'id:weight,...', got {item.strip()!r}") from None
        if pid < 0 or not math.isfinite(weight) or weight < 0:
            raise FieldError("weights", f"ids and weights must be >= 0, got {item.strip()!r}")
        if pid in out:
            raise FieldError("weights", f"path {pid} is listed twice")
        out[pid] = weight
    return out


@dataclass(frozen=True)
class WcmpParams:
    weights: str = field(
        default="",
        metadata={
            "doc": "WCMP operator weights 'id:weight,...' (e.g. '1:3,2:1'); empty: ∝ capacity"
        },
    )

    def __post_init__(self) -> None:
        parse_weights(self.weights)


def _static_capacity(p: PathState) -> float | None:
    """The capacity WCMP weighs a path by: a fabric path's configured bottleneck, else its
    capacity estimate."""
    return p.bottleneck_mbps if p.bottleneck_mbps is not None else p.capacity_mbps


@register
class Wcmp(Policy[WcmpParams]):
    name = "wcmp"
    repeats = True
    Params = WcmpParams

    def decide(self, paths: Sequence[PathState], now: float) -> Decision:
        alive = [p for p in paths if p.alive]
        if not alive:
            return no_alive_decision(paths, Mode.HASH)
        operator = parse_weights(self.params.weights)
        if operator:
            weights = {p.path_id: operator.get(p.path_id, 0.0) if p.alive else 0.0 for p in paths}
            why = f"operator weights {self.params.weights!r}"
            if not any(weights.values()):
                weights = equal_weights(paths, [p.path_id for p in alive])
                why = "no operator-weighted path alive: equal weights over alive paths"
                log.info("wcmp: no path of %r is alive", self.params.weights)
        else:
            caps = {p.path_id: _static_capacity(p) for p in alive}
            known = [c for c in caps.values() if c is not None]
            if not known or not any(known):
                weights = equal_weights(paths, [p.path_id for p in alive])
                why = "no capacity measured: equal weights"
            else:
                fill = sum(known) / len(known)
                weights = {
                    p.path_id: (c if (c := caps.get(p.path_id)) is not None else fill)
                    if p.alive
                    else 0.0
                    for p in paths
                }
                why = "weights ∝ capacity (unmeasured: mean capacity)"
        return Decision(
            weights=weights,
            mode=Mode.HASH,
            scores=dict(weights),
            reason=f"wcmp: {why}; weights {fmt_scores(weights)}",
        )
