"""What a fabric path can carry for one pair where other pairs' paths share its links
(docs/control-loop.md, "Shared links: one pair's capacity is not another's").

Every fabric link is one queue per direction, shared by every path crossing it in that
direction (docs/fabric.md, "The model"). A pair's path estimates measure its own traffic: a
path whose spine link another pair fills looks, to a score reading the configured rate (LLHD's
goodput share, the BDPs of CMT-LA, FD-MVQS, QoS and LM3, the congestion-aware utilisation),
as able to carry its whole bottleneck rate, and the score chases capacity another pair
already uses. So a pair's path gets, as its capacity, what the other pairs leave of each of
its links (`available_mbps`), the least over the path (`path_available_mbps`):

    available_d = max(rate_d - others_d, rate_d / (1 + n_d))

- rate_d: the configured rate of link direction d (None: not limited, d does not count);
- others_d: the summed load on d of the other pairs, each pair's the delivered rate
  (`goodput_mbps` at its egress) of its paths crossing d; a pair counts only from ACTIVE_SHARE
  of rate_d and ACTIVE_MIN_MBPS on (its probes alone do not make an idle path look used);
  bounded by what the
  port counter measured leaving d's switch (`measured_mbps`,
  src/mpsched/controller/telemetry/ports.py:
  every pair's traffic, this one's included), which catches a load that stopped while a
  pair's 5 s goodput window still holds it;
- n_d: how many other pairs count on d. The floor rate_d / (1 + n_d) is the share this pair
  would get if it sent there too (TCP's fair share, per pair): a link another pair fills with
  elastic traffic is not worth 0, and two pairs sharing a link at half its rate each see
  each other's half and so their own.

The value is rounded to steps of ACTIVE_SHARE of rate_d (at least one step), so that the
noise of the loads does not rewrite the switches' placements every period. A path no other
pair loads keeps its configured bottleneck: an idle path's estimate is what it was. Pure, no
I/O; telemetry/intake_views.py applies it to a fabric pair's path states once per control step.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

from mpsched.controller.telemetry.config import PROBE_INTERVAL_S
from mpsched.fabric.model import Fabric
from mpsched.fabric.paths import Path

# A pair's load on a link direction counts from this share of its rate on, and from at least
# ACTIVE_MIN_MBPS: twice what one path's probes carry at the default interval, were each a
# minimum Ethernet frame of 64 bytes (0.1 Mbit/s), so that probes never count, even on a slow
# link (a quarter of 2.5 Mbit/s in scenarios/fabric-asymmetric.yaml).
ACTIVE_SHARE = 0.05
ACTIVE_MIN_MBPS = 2 * 64 * 8 / PROBE_INTERVAL_S / 1e6

LinkDir = tuple[str, str]  # (link name, the switch the direction leaves)
PathKey = tuple[str, int]  # (pair key, path id)


def link_directions(path: Path) -> list[LinkDir]:
    """The link directions `path` crosses, from its source edge on."""
    return list(path.directions)


@dataclass(frozen=True)
class LinkShare:
    """One link direction: its configured rate, each pair's load on it (Mbit/s) and what its
    port counter measured (None: not known)."""

    rate_mbps: float | None
    loads: Mapping[str, float] = field(default_factory=dict)
    measured_mbps: float | None = None

    def others(self, pair: str) -> dict[str, float]:
        """The other pairs whose load counts (at least ACTIVE_SHARE of the rate and
        ACTIVE_MIN_MBPS)."""
        return {q: v for q, v in self.active.items() if q != pair}

    @functools.cached_property
    def active(self) -> dict[str, float]:
        """Every pair whose load counts, once per share (a link of a leaf-spine carries
        2 x (leaves - 1) pairs' paths, each asking for the others)."""
        floor = max(ACTIVE_MIN_MBPS, ACTIVE_SHARE * (self.rate_mbps or 0.0))
        return {q: v for q, v in self.loads.items() if v > 0 and v >= floor}

    @functools.cached_property
    def active_mbps(self) -> float:
        return sum(self.active.values())

    def others_load(self, pair: str) -> tuple[float, int]:
        """The others' summed load that counts and how many they are (`others`, in O(1))."""
        own = self.active.get(pair)
        if own is None:
            return self.active_mbps, len(self.active)
        return max(0.0, self.active_mbps - own), len(self.active) - 1


def available_mbps(share: LinkShare, pair: str) -> float | None:
    """What the link direction leaves `pair` (module docstring); None: not limited."""
    rate = share.rate_mbps
    if rate is None or rate <= 0:
        return None
    used, n_others = share.others_load(pair)
    if share.measured_mbps is not None:
        used = min(used, max(0.0, share.measured_mbps))
    step = ACTIVE_SHARE * rate  # in steps of ACTIVE_SHARE: load noise rewrites nothing
    return max(step, round(max(rate - used, rate / (1 + n_others)) / step) * step)


def link_shares(
    fabric: Fabric,
    pair_paths: Mapping[str, Mapping[int, Path]],
    loads: Mapping[PathKey, float | None],
    measured: Mapping[LinkDir, float | None] | None = None,
) -> dict[LinkDir, LinkShare]:
    """Every link direction some pair's path crosses: its rate (`Link.params` at t = 0, as the
    paths' bottlenecks), each pair's load (its paths' `loads` summed: a pair's paths may share
    a link in a graph) and the port counter's `measured` load."""
    per: dict[LinkDir, dict[str, float]] = {}
    for pair, paths in pair_paths.items():
        for pid, path in paths.items():
            load = loads.get((pair, pid))
            load = load if load is not None and load > 0.0 else 0.0
            for d in path.directions:
                cell = per.get(d)
                if cell is None:
                    cell = per[d] = {}
                cell[pair] = cell.get(pair, 0.0) + load
    measured = measured or {}
    return {
        d: LinkShare(fabric.link_by_name[d[0]].params(d[1]).rate_mbps, by_pair, measured.get(d))
        for d, by_pair in per.items()
    }


def path_available_mbps(shares: Mapping[LinkDir, LinkShare], pair: str,
                        path: Path) -> float | None:
    """The least `available_mbps` over the path's links (None: no link limits it)."""
    values = [available_mbps(shares[d], pair) for d in path.directions if d in shares]
    limited = [v for v in values if v is not None]
    return min(limited) if limited else None


__all__ = [
    "ACTIVE_MIN_MBPS",
    "ACTIVE_SHARE",
    "LinkDir",
    "LinkShare",
    "PathKey",
    "available_mbps",
    "link_directions",
    "link_shares",
    "path_available_mbps",
]
