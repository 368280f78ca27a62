"""Per-port transmit rates from the data plane's port counters, and a fabric link's load per
direction from them (GET /links; docs/fabric-controller.md, "The controller").

The egress pipeline counts every packet leaving a port (p4src/include/port_counters.p4,
`port_tx`). Each switch's agent reads the counter with its poll and keeps a `PortMeter`: the
rate of each port between its two latest reads. A link a-b's forward direction is a's port
towards b (`mpsched.fabric.ports.port_map`), its reverse b's port towards a. Pure, no I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from mpsched.fabric.model import Fabric, Link
from mpsched.fabric.ports import Ports
from mpsched.p4rt.client import CounterValue

T = TypeVar("T")


@dataclass(frozen=True)
class PortRate:
    """A port's transmit rate between two reads of its counter."""

    mbps: float  # Mbit/s of frames (the bytes BMv2 counts), 0 after a counter reset
    pps: float


class PortMeter:
    """The latest rate of each port from successive reads of the port counter."""

    def __init__(self) -> None:
        self._last: tuple[float, Mapping[int, CounterValue]] | None = None
        self.rates: dict[int, PortRate] = {}

    def update(self, now: float, values: Mapping[int, CounterValue]) -> dict[int, PortRate]:
        """Take a read at `now` (UNIX s): the rates since the previous read (none at the first,
        or when the clock did not advance); a port whose count went back (the switch
        restarted) has rate 0."""
        last, self._last = self._last, (now, dict(values))
        if last is None or now <= last[0]:
            return self.rates
        dt = now - last[0]
        rates = {}
        for port, value in values.items():
            before = last[1].get(port)
            if before is None:
                continue
            dbytes = max(0, value.bytes - before.bytes)
            dpackets = max(0, value.packets - before.packets)
            rates[port] = PortRate(mbps=dbytes * 8 / dt / 1e6, pps=dpackets / dt)
        self.rates = rates
        return rates


@dataclass(frozen=True)
class DirectionLoad:
    """One direction of a link: leaving `src` towards `dst` by `src`'s `port`."""

    src: str
    dst: str
    port: int
    rate_mbps: float | None  # configured rate (None: not limited)
    mbps: float | None  # measured (None: no two reads of the port yet)

    @property
    def utilisation(self) -> float | None:
        """mbps as a fraction of the configured rate, at most 1 (None without either).

        The port counter counts what the switch handed to the link, not what the link
        carried: over a poll the switch can send more than the link's rate while the link's
        queue fills (a 100-packet queue holds 1.2 Mbit, an eighth of a second at 10 Mbit/s)
        and whatever the queue then drops. The link itself carries at most its rate, so its
        utilisation is clamped at 1; `mbps` keeps the measured rate."""
        if self.mbps is None or not self.rate_mbps:
            return None
        return min(1.0, self.mbps / self.rate_mbps)


def read_at(read: Callable[[], T], clock: Callable[[], float] = time.time) -> tuple[float, T]:
    """`read()`'s value and when it was taken: the middle of the call. A counter read takes
    its snapshot during its RPC; a time taken before other reads of the same poll is off by
    their durations, which vary from poll to poll, and so is the rate over two polls."""
    start = clock()
    value = read()
    return (start + clock()) / 2, value


def direction_load(link: Link, src: str, ports: Mapping[str, Ports],
                   rates: Mapping[str, Mapping[int, PortRate]]) -> DirectionLoad:
    """The load of `link` leaving switch `src` (an end of it), from each switch's port
    rates (`PortMeter.rates` by switch name)."""
    dst = link.other(src)
    port = ports[src].neighbours[dst]
    rate = rates.get(src, {}).get(port)
    return DirectionLoad(src, dst, port, link.params(src).rate_mbps,
                         None if rate is None else rate.mbps)


def link_loads(fabric: Fabric, ports: Mapping[str, Ports],
               rates: Mapping[str, Mapping[int, PortRate]]
               ) -> dict[str, tuple[DirectionLoad, DirectionLoad]]:
    """{link name: (forward a -> b, reverse b -> a)} for every link of `fabric`."""
    return {
        link.name: (direction_load(link, link.a, ports, rates),
                    direction_load(link, link.b, ports, rates))
        for link in fabric.links
    }
