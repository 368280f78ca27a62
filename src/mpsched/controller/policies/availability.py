"""What a path could deliver, not what the scheduler gave it: the idle-path rule shared by the
policies that rank by goodput or throughput (LLHD's goodput share, CMT-LA's Mathis estimate,
the QoS score's rate target, FD-MVQS's capacity fill) in both their weight-based and their
congestion-aware variants.

In the network the scheduler decides how much traffic a path gets, so a path's measured goodput is
its *demand* until the path is loaded. Ranking by it is self-reinforcing: a path that got little
keeps a small goodput, a small score and so little traffic (docs/control-loop.md, "Idle paths:
demand is not ability": with three 10 Mbit/s paths and one of 2.5 Mbit/s, LLHD left one 10 Mbit/s
path at 0.03 Mbit/s); and once traffic pauses, every goodput is probe-sized and their ratio is noise
(the 2.5 Mbit/s path ranked best, score 1 against 0.01-0.2).

The rule (`availability_mbps`), per alive path:
- a standing queue (`queued`: `owd_ms` >= BUSY_QDELAY_MS) and a goodput: the path delivers
  what it can, so its goodput is its ability (a path whose real rate fell below the
  configured one, or that carries cross traffic, shows it this way);
- else, capacity known: max(goodput, capacity · (1 - loss)): the goodput the path would
  deliver if the scheduler used it (capacity = the configured rate, else the estimator's best
  1 s delivered rate, a lower bound);
- else, neither capacity nor one-way delay known but a goodput: the goodput (all there is);
- else: the neutral prior, the mean of the other paths' values above, and never less than
  its own goodput; with no such value on any path, its goodput (None if unmeasured).

`loaded` (a standing queue, or a goodput of at least LOADED_SHARE of the capacity; None when
nothing tells) says whether a goodput-derived estimate means anything: CMT-LA uses the
Mathis loss estimate only on a path that is not known to be unloaded.

Estimates that only change with samples an idle path does not produce (srtt, rttvar, bytes in
flight) age towards a neutral prior in the estimators (`telemetry/estimators.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from mpsched.controller.model.paths import PathState

# One-way queueing delay above the path's window minimum that counts as a standing queue
# (above the jitter of the emulated paths' one-way-delay samples, below the queue a saturated
# path of a few Mbit/s builds with 100 packets).
BUSY_QDELAY_MS = 10.0
# Goodput share of the capacity at which a path counts as loaded.
LOADED_SHARE = 0.8


def queued(p: PathState) -> bool:
    """A standing queue: one-way queueing delay of at least BUSY_QDELAY_MS."""
    return p.owd_ms is not None and p.owd_ms >= BUSY_QDELAY_MS


def loaded(p: PathState) -> bool | None:
    """True: the path is loaded (its goodput measures its ability); False: it is not (its
    goodput measures the demand); None: no estimate tells."""
    if queued(p):
        return True
    if p.goodput_mbps is not None and p.capacity_mbps:
        return p.goodput_mbps >= LOADED_SHARE * p.capacity_mbps
    if p.owd_ms is not None:
        return False
    return None


def availability_mbps(paths: Sequence[PathState]) -> dict[int, float | None]:
    """Per path (callers pass the alive ones) the goodput it could deliver (Mbit/s), by the
    rule in the module docstring."""
    own: dict[int, float | None] = {}
    for p in paths:
        gp = p.goodput_mbps if p.goodput_mbps is not None and p.goodput_mbps > 0 else None
        loss = min(1.0, max(0.0, p.loss_rate or 0.0))
        if queued(p) and gp is not None:
            own[p.path_id] = gp
        elif p.capacity_mbps is not None and p.capacity_mbps > 0:
            own[p.path_id] = max(gp or 0.0, p.capacity_mbps * (1 - loss))
        elif p.owd_ms is None and gp is not None:
            own[p.path_id] = gp  # neither capacity nor delay: the goodput is all there is
        else:
            own[p.path_id] = None
    known = [v for v in own.values() if v is not None]
    prior = sum(known) / len(known) if known else None
    out: dict[int, float | None] = {}
    for p in paths:
        value = own[p.path_id]
        if value is None:
            gp = p.goodput_mbps if p.goodput_mbps is not None and p.goodput_mbps > 0 else None
            value = gp if prior is None else max(prior, gp or 0.0)
        out[p.path_id] = value
    return out
