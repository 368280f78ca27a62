"""An emulated link's parameters per direction (`Segment`) and a two-edge testbed path
(`PathSpec`): pure descriptions, shared by the scenario files, the fabric model and the
testbeds that build them (src/mpsched/topo/testbed.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpsched.emu.params import LinkParams
from mpsched.emu.schedule import Event, params_at

# Paths the two-edge testbed joins s1 and s2 by, and the default paths per ordered pair of a
# fabric's edges: the default build's MAX_PATHS (p4src/include/defines.p4, `make p4`).
MAX_PATHS = 4


@dataclass(frozen=True)
class Segment:
    """One emulated link: parameters and schedules per direction (forward = towards s2)."""

    forward: LinkParams = field(default_factory=LinkParams)
    reverse: LinkParams = field(default_factory=LinkParams)
    forward_events: tuple[Event, ...] = ()
    reverse_events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class PathSpec(Segment):
    """One path (forward = s1 -> s2). Its own parameters are those of the link at s1; with
    `core`, the path continues through a core switch c<i> and a second emulated link (the
    core segment) to s2, e.g. a wireless access link followed by a wired core."""

    cross_traffic: bool = False
    core: Segment | None = None

    def segments(self) -> list[Segment]:
        return [self] if self.core is None else [self, self.core]

    def rate_at(self, t: float) -> float:
        """Forward capacity at time t: the slowest segment's rate, 0 while any segment is
        down (an unlimited rate counts as 0 when no segment has a rate)."""
        rates = []
        for seg in self.segments():
            params = params_at(seg.forward, seg.forward_events, t)
            if not params.up:
                return 0.0
            if params.rate_mbps is not None:
                rates.append(params.rate_mbps)
        return min(rates, default=0.0)
