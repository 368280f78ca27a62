"""Per-path traffic counters and rates, from successive counter snapshots."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sample:
    """One reading of a switch's counters for one path."""

    time: float
    tx_packets: int
    tx_bytes: int
    rx_packets: int
    rx_bytes: int


@dataclass
class PathSwitchStats:
    """Counters of one path at one edge switch, and the rates of the last interval."""

    last: Sample | None = None
    tx_rate_bps: float = 0.0
    rx_rate_bps: float = 0.0
    tx_pps: float = 0.0

    def update(self, sample: Sample) -> None:
        prev = self.last
        if prev is not None and sample.time > prev.time:
            dt = sample.time - prev.time
            # Counters only grow; a drop means the switch restarted.
            dtx = max(0, sample.tx_bytes - prev.tx_bytes)
            drx = max(0, sample.rx_bytes - prev.rx_bytes)
            dpk = max(0, sample.tx_packets - prev.tx_packets)
            self.tx_rate_bps = 8 * dtx / dt
            self.rx_rate_bps = 8 * drx / dt
            self.tx_pps = dpk / dt
        self.last = sample

    def to_dict(self) -> dict:
        s = self.last or Sample(0.0, 0, 0, 0, 0)
        return {
            "tx_packets": s.tx_packets,
            "tx_bytes": s.tx_bytes,
            "rx_packets": s.rx_packets,
            "rx_bytes": s.rx_bytes,
            "tx_rate_bps": round(self.tx_rate_bps, 1),
            "rx_rate_bps": round(self.rx_rate_bps, 1),
            "updated": s.time or None,
        }


@dataclass
class PathStats:
    """A path seen from every edge switch (one entry per direction of use)."""

    path_id: int
    by_switch: dict[str, PathSwitchStats] = field(default_factory=dict)

    def update(self, switch: str, sample: Sample) -> None:
        self.by_switch.setdefault(switch, PathSwitchStats()).update(sample)

    def totals(self) -> dict:
        """What all edge switches placed onto this path: packets, bytes, rate."""
        packets = sum(s.last.tx_packets for s in self.by_switch.values() if s.last)
        nbytes = sum(s.last.tx_bytes for s in self.by_switch.values() if s.last)
        rate = sum(s.tx_rate_bps for s in self.by_switch.values())
        return {"packets": packets, "bytes": nbytes, "rate_bps": round(rate, 1)}
