"""RFC 2285's maximum forwarding rate (3.6.2) as a sweep of offered loads: pure logic over a
function that holds one load and measures it (`make bench-dataplane`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# A load "loses" when more than this fraction of what was sent did not come out.
KNEE_LOSS = 0.01
# The sender kept up with a paced load when it sent at least this fraction of it.
SENDER_OK = 0.95
# No sweep offers more than this (pkt/s); a Python sender tops out well below.
MAX_OFFERED = 1_000_000.0


@dataclass(frozen=True)
class Trial:
    """One offered load held for a measurement window (rates in pkt/s)."""

    offered: float  # asked of the sender; 0: unpaced (as fast as it can)
    sent: float
    delivered: float
    cpu: float  # CPU seconds per second the switch used

    @property
    def loss(self) -> float:
        return max(0.0, 1.0 - self.delivered / self.sent) if self.sent > 0 else 0.0

    @property
    def sender_kept_up(self) -> bool:
        return self.offered == 0 or self.sent >= SENDER_OK * self.offered

    @property
    def cpu_us_per_packet(self) -> float:
        return self.cpu / self.delivered * 1e6 if self.delivered > 0 else float("inf")


@dataclass(frozen=True)
class Sweep:
    """The trials of one sweep and its result: the trial with the highest delivered rate."""

    trials: tuple[Trial, ...]
    best: Trial
    saturated: bool  # some load lost more than KNEE_LOSS: the switch, not the sender, limited


def max_forwarding_rate(
    run: Callable[[float], Trial], start: float, step: float = 1.25, fine: int = 3
) -> Sweep:
    """RFC 2285's maximum forwarding rate: offer start, start*step, ... until two loads in a
    row lose more than KNEE_LOSS (or the sender cannot keep up, or MAX_OFFERED), then `fine`
    loads evenly (geometrically) between the highest load that did not lose and the next step
    (where the knee is); the best is the trial with the highest delivered rate. `run(rate)`
    holds one load and measures it."""
    if start <= 0 or step <= 1 or fine < 0:
        raise ValueError("start must be > 0, step > 1, fine >= 0")
    trials: list[Trial] = []
    rate, losing = start, 0
    while rate <= MAX_OFFERED:
        t = run(rate)
        trials.append(t)
        if not t.sender_kept_up:
            break
        losing = losing + 1 if t.loss > KNEE_LOSS else 0
        if losing == 2:
            break
        rate *= step
    # The knee lies between the highest load that did not lose and the next one.
    kept = [t for t in trials if t.loss <= KNEE_LOSS and t.sender_kept_up]
    base = max(kept or trials, key=lambda t: t.delivered)
    for k in range(1, fine + 1):
        trials.append(run(base.offered * step ** (k / (fine + 1))))
    return Sweep(
        tuple(trials),
        max(trials, key=lambda t: t.delivered),
        any(t.loss > KNEE_LOSS for t in trials),
    )
