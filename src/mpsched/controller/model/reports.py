"""The switches' digests as typed reports: the egress edge's `PathReport` (`path_report_t`)
and the ingress edge's `RttReport` (`rtt_report_t`). The southbound decodes them
(src/mpsched/controller/southbound/reports.py); telemetry takes them in
(src/mpsched/controller/telemetry/windows.py explains the fields)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PathReport:
    """One `path_report_t` digest; the data fields are named like the P4 struct's members."""

    switch: str
    path_id: int
    seq: int
    tx_ts: int  # µs, the ingress edge's clock (when it tagged the packet)
    rx_ts: int  # µs, the egress edge's clock (when it received the packet)
    rx_packets: int
    rx_bytes: int
    lost: int
    reordered: int
    flow_ooo: int  # packets of this path overtaken within their flow (cumulative, wraps)
    received_at: float  # controller's monotonic clock
    src_edge: int = 0  # the ingress edge of the path (the tag's; 0: not known, the peer)


@dataclass(frozen=True)
class RttReport:
    """One `rtt_report_t` digest of an ingress edge switch; the data fields are named like
    the P4 struct's members."""

    switch: str  # the ingress edge that measured (its traffic towards the other edge)
    path_id: int  # path the sampled data segment was placed on
    peer_edge: int  # the edge it was placed towards (path ids are per pair of edges)
    rtt_us: int  # data segment -> the ACK covering it (µs, the switch's clock)
    retrans: int  # retransmitted data segments seen on the path, cumulative, wraps at 2^32
    inflight_bytes: int  # bytes sent and not yet acknowledged on the path (approximation)
    received_at: float  # controller's clock
