"""A path's state as the estimators give it to the policies (`PathState`), with the egress
edge's cumulative counters (`PathCounters`): what telemetry produces and scheduling reads
(docs/control-loop.md, "The loop around a policy")."""

from __future__ import annotations

from dataclasses import dataclass


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
