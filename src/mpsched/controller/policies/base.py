"""The scheduling-policy interface, parameter handling and helpers shared by every policy.

It knows no implementation: they register themselves in `registry` (see the package).

A policy turns the estimators' view of the paths (`PathState`, docs/control-loop.md, "The loop
around a policy") into a `Decision` once per control period: a weight per path, the data
plane's path-choice `Mode`, the policy's per-path scores and a one-line reason for the decision log.

Rules every policy follows (implemented here, used by all):
- a dead path (`alive` False: liveness and operator admin state combined) gets weight 0;
- if no path is alive the policy does NOT return all-zero weights (the data plane would drop
  everything): it returns equal weights over all paths with the reason "no path alive" and
  lets the data plane's local failover decide (`no_alive_decision`);
- a missing estimate (None) never raises; each policy documents its neutral treatment.

Parameters: each policy declares `Params`, a frozen dataclass whose fields carry defaults and
`metadata` with "doc" and optional "min", "max" and "choices";
src/mpsched/controller/policies/params.py
makes the pydantic model that validates them (`params_from_dict`, raising `FieldError` naming
the offending field) and gives their schema (`params_schema`).
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Generic, TypeVar

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies.params import (  # noqa: F401 (re-exported)
    params_from_dict,
    params_schema,
    params_to_dict,
)
from mpsched.p4rt.weights import MAX_WEIGHT

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PathCounters:
    """A path's cumulative counters at the egress edge, unwrapped since the estimator's first
    report (they restart at 0 when the egress switch restarts: a difference < 0 means that).
    `t_s` is the egress clock of the latest report (seconds)."""

    t_s: float
    packets: int  # delivered (data and probes)
    bytes: int
    lost: int  # sequence gaps, net of late arrivals
    flow_ooo: int  # packets overtaken within their flow (reordering)


@dataclass(frozen=True)
class QosTarget:
    """A traffic class's QoS target (`qos_target` of the class; None = no target on that
    metric), measured over the class's paths per dwell by the `adaptive` policy."""

    min_goodput_frac: float | None = None  # delivered / summed capacity of the alive paths
    max_delay_ms: float | None = None  # queueing delay (one-way delay above its minimum)
    max_loss: float | None = None  # lost / sent, by bytes
    max_reorder: float | None = None  # packets overtaken within their flow / delivered

    def is_empty(self) -> bool:
        return self == QosTarget()


@dataclass(frozen=True)
class PathState:
    """One path's state at decision time (from the estimators; None = not measured yet)."""

    path_id: int
    alive: bool  # liveness and operator admin state combined
    srtt_ms: float | None = None
    rttvar_ms: float | None = None
    rtt_min_ms: float | None = None
    rtt_max_ms: float | None = None
    loss_rate: float | None = None  # fraction 0..1 from per-path sequence gaps
    goodput_mbps: float | None = None  # delivered at the egress
    capacity_mbps: float | None = None  # estimate, or the configured rate when known
    inflight_bytes: int | None = None  # in-network stand-in for the cwnd
    owd_ms: float | None = None  # one-way delay above the window minimum (queueing)
    owd_series_ms: tuple[float, ...] = ()  # recent one-way-delay samples, oldest first
    retrans: int | None = None  # TCP retransmissions seen in the window
    reordered: int | None = None
    rto_ms: float | None = None  # RFC 6298 srtt + 4*rttvar (>= 200 ms floor is the caller's)
    # latest raw one-way delay (egress clock - ingress clock): the two edges' clock offset is
    # the same for every path between them, so differences between paths are real delays
    owd_raw_ms: float | None = None
    # the egress edge's cumulative counters (what a policy measures its own outcome with)
    counters: PathCounters | None = None
    # a fabric path's configured bottleneck rate; its capacity_mbps is then what the other
    # pairs' load leaves of it (src/mpsched/controller/telemetry/sharing.py). None: capacity is the
    # rate
    bottleneck_mbps: float | None = None

    def bdp_bytes(self) -> float | None:
        """capacity * srtt in bytes (1 Mbit/s * 1 ms = 125 bytes); None when either is None."""
        if self.capacity_mbps is None or self.srtt_ms is None:
            return None
        return self.capacity_mbps * self.srtt_ms * 125.0


class Mode(str, Enum):
    HASH = "hash"  # per flow: 5-tuple hash over the weights (ECMP/WCMP), no flowlets
    FLOWLET = "flowlet"  # per flowlet: a new flowlet draws a path by the weights
    RR = "rr"  # per packet: round robin over the paths with nonzero weight
    VQ = "vq"  # per flowlet: argmin of the data plane's MVQS time factor (FD-MVQS)
    CA = "ca"  # per flowlet: least live cost in the switch (congestion-aware, `CaCost`)


@dataclass(frozen=True)
class VqPathParams:
    """FD-MVQS parameters the data plane needs per path (mode VQ)."""

    pad_us: int  # predicted arrival delay PAD_p
    bdp_bytes: int
    us_per_kbyte: int  # srtt_p / (w_p * bdp_p) in µs per 1024 bytes of VQ above bdp
    drain_bytes_per_ms: int  # cap_p


@dataclass(frozen=True)
class CaPath:
    """What the congestion-aware data plane (mode CA) needs per path from the controller."""

    offset_us: float  # per-path cost offset (>= 0), µs-equivalent: added to the live cost
    capacity_mbps: float | None  # for the utilisation term; None: no util term on this path


@dataclass(frozen=True)
class CaCost:
    """The cost a mode-CA switch computes per path for each new flowlet, in µs-equivalent:

        cost = offset + qdelay_coef * qdelay_us + loss_coef_us * loss_% + util_coef_us * util

    with the switch's own live measurements (queueing delay above the path's minimum one-way
    delay, loss fraction, delivered rate / capacity), counted only while younger than
    `max_age_ms`. A new flowlet draws uniformly among the alive weighted paths whose cost is
    within `epsilon_us` of the least. `controller.policies.ca.ca_fixed_point` turns this into
    the set_ca action parameters; `ca.live_cost` is the controller's estimate of the same cost.

    Defaults, chosen so the three terms weigh comparably for TCP traffic:
    - qdelay_coef 1: queueing delay is the unit of cost (1 µs per µs): it is what a flowlet
      actually waits on the path.
    - loss_coef_us 20000 (20 ms per 1 % loss): a loss costs a TCP sender about a retransmission
      and a halved window; at 1 % the goodput loss of a typical 10-100 ms RTT flow is worth
      tens of ms of extra delay, so 1 % loss weighs as much as a 20 ms standing queue.
    - util_coef_us 10000 (10 ms at 100 % utilisation): a full path will build a queue soon, so
      utilisation steers flowlets away before the queue shows; at 50 % it adds 5 ms, less than
      the queue a saturated path of a few Mbit/s builds, so measured delay still dominates.
    - epsilon_us 2000: paths within 2 ms of the least cost are equivalent; the random draw
      among them spreads the flowlets (LetFlow-like) instead of herding them onto one path
      between two feedback rounds, and 2 ms is above the jitter of the one-way-delay samples.
    - max_age_ms 500: feedback arrives with reverse traffic (data or probes, each few ms);
      metrics older than half a second describe a path no flowlet has used lately, so they
      count 0 and the path gets tried (and measured) again rather than shunned forever.
    """

    qdelay_coef: float = 1.0  # µs of cost per µs of queueing delay
    loss_coef_us: float = 20000.0  # µs of cost per 1 % of loss
    util_coef_us: float = 10000.0  # µs of cost at 100 % utilisation
    epsilon_us: float = 2000.0  # candidates within best + epsilon
    max_age_ms: float = 500.0  # live metrics older than this count 0
    paths: dict[int, CaPath] = field(default_factory=dict)  # path id -> offset, capacity


@dataclass(frozen=True)
class Decision:
    weights: dict[int, float]  # path id -> weight >= 0 (0: not used); the caller quantises
    mode: Mode
    scores: dict[int, float]  # the policy's per-path score (for the decision log)
    reason: str  # one human-readable line: why these weights
    vq: dict[int, VqPathParams] = field(default_factory=dict)  # mode VQ only
    ca: CaCost | None = None  # mode CA only (None in mode CA: the switch's all-zero no_ca)
    syn_copy: bool = False  # a TCP SYN also goes, as a copy, onto another usable path


@dataclass(frozen=True)
class NoParams:
    """A policy without parameters."""


P = TypeVar("P")


class Policy(ABC, Generic[P]):
    """A scheduling policy; `decide` is called once per control period.

    Stateful policies keep their history in the instance. `P` is the type of `params`, which
    is `Params` (a class variable cannot name a type variable, so the two are kept in step
    by hand: ``class Llhd(Policy[LlhdParams]): Params = LlhdParams``).
    """

    name: ClassVar[str]
    Params: ClassVar[type[Any]] = NoParams
    # True: `decide` keeps no state, so on equal paths it decides as it did (the control loop
    # may then skip a pair whose inputs did not change, src/mpsched/controller/scheduling/due.py);
    # False (the default, what a stateful policy must say): stepped every control period.
    repeats: ClassVar[bool] = False
    params: P

    def __init__(self, params: P | None = None) -> None:
        if params is None:
            params = self.Params()
        if not isinstance(params, self.Params):
            raise TypeError(f"{self.name}: params must be {self.Params.__name__}")
        self.params = params

    @abstractmethod
    def decide(self, paths: Sequence[PathState], now: float) -> Decision: ...

    # Hooks for policies that use their class's QoS target or learn across periods (`adaptive`);
    # the others ignore them.

    def set_target(self, target: QosTarget | None) -> None:
        """The class's QoS target (None: the class has none); called when it is set."""
        return None

    def learned(self) -> dict[str, Any] | None:
        """What the policy learned, as JSON to keep in the controller's state (None: nothing)."""
        return None

    def restore_learned(self, data: Any, where: str) -> None:
        """Take over `learned()` of an earlier instance; FieldError names the bad field."""
        raise FieldError(where, f"policy {self.name!r} keeps no learned state")

    def sub_policies(self) -> list[Policy]:
        """The policies this one may delegate a decision to (their modes count as its own)."""
        return []


# -- helpers shared by the policies --------------------------------------------


def quantise(weights: Mapping[int, float], max_weight: int = MAX_WEIGHT) -> dict[int, int]:
    """Integer weights 0..max_weight: the largest -> max_weight, others proportional
    (rounded), and a nonzero weight never rounds to 0."""
    for pid, w in weights.items():
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"weight of path {pid} must be finite and >= 0, got {w!r}")
    top = max(weights.values(), default=0.0)
    if top <= 0:
        return {pid: 0 for pid in weights}
    return {
        pid: 0 if w == 0 else min(max_weight, max(1, round(w / top * max_weight)))
        for pid, w in weights.items()
    }


def alive_ids(paths: Iterable[PathState]) -> list[int]:
    return [p.path_id for p in paths if p.alive]


def equal_weights(paths: Iterable[PathState], chosen: Iterable[int]) -> dict[int, float]:
    """1.0 for the chosen ids, 0.0 for every other path."""
    keep = set(chosen)
    return {p.path_id: 1.0 if p.path_id in keep else 0.0 for p in paths}


def no_alive_decision(paths: Sequence[PathState], mode: Mode) -> Decision:
    """Equal weights over all paths: the data plane's failover decides."""
    return Decision(
        weights={p.path_id: 1.0 for p in paths},
        mode=mode,
        scores={p.path_id: 0.0 for p in paths},
        reason="no path alive: equal weights over all paths (data-plane failover decides)",
    )


def jitter_indicator(values: Sequence[float]) -> float:
    """J = (x_now - x_avg) / (x_max - x_min) over `values` (oldest first, x_now the last);
    0 with fewer than two values or when the range is 0 (CMT-LA)."""
    if len(values) < 2:
        return 0.0
    lo, hi = min(values), max(values)
    if hi - lo <= 0:
        return 0.0
    return (values[-1] - sum(values) / len(values)) / (hi - lo)


def fmt_scores(scores: Mapping[int, float], digits: int = 3) -> str:
    """'1=0.5 2=0.25' for reason lines."""
    return " ".join(f"{pid}={value:.{digits}g}" for pid, value in sorted(scores.items()))
