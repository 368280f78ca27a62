"""What a policy decides for one class on one switch (`Decision`): the paths' weights, the data
plane's path-choice `Mode`, and the parameters of modes vq (`VqPathParams`) and ca
(`CaCost`, `CaPath`); src/mpsched/controller/policies/base.py says how a policy makes one."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


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
