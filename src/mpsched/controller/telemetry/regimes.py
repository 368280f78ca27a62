"""Probe regimes of a fabric's pairs of edges (docs/fabric-controller.md, "Probe regimes").

A pair of edges {a, e} is unordered: a's liveness of its paths to e is refreshed by e's
feedback in the tags e sends to a (p4src/include/liveness.p4), and e's of its paths to a by
a's, so both of its directions are probed alike. A pair is *active* while traffic beyond
probes crossed it, either way, on any of its paths within `idle_after_s` (`active_pairs`, from
the estimators' busy_at), else *idle*. An active pair's paths are probed every probe interval
(busy ones skipped: config.probe_needed), an idle pair's every idle interval
(TelemetryConfig.idle_interval_s: `probe_due`), by the same prober ticks. The data plane's
dead_after of the pair's paths (liveness_config, per peer edge and path) follows the regime:
the fast one only where the fast probes run, else a path would look dead between slow probes.

So a change goes in the order that never leaves a working path looking dead (`plan`): a pair
that becomes active is probed fast at once and gets the fast dead_after once the fast probes
have run for `settle_s` (the fast dead_after: every working path has been heard of since); a
pair that becomes idle gets the slow dead_after first, and is probed slowly from a later
update on, once both its edges acknowledged that write. At start every pair is idle; without
regimes (two edges, or no idle interval) every pair is active for good.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

EdgePair = tuple[int, int]  # an unordered pair of edge ids, the lower first
ACTIVE = "active"
IDLE = "idle"


def edge_pair(a: int, b: int) -> EdgePair:
    """The unordered pair of edges `a` and `b`."""
    return (a, b) if a < b else (b, a)


def active_pairs(busy_at: Mapping[tuple[int, int], float], now: float,
                 idle_after_s: float) -> frozenset[EdgePair]:
    """The pairs of edges that carried traffic beyond probes within `idle_after_s` before
    `now`: `busy_at` maps a direction (ingress edge, egress edge) to when a report last showed
    one of its paths busy (PathWindows.busy_at, on `now`'s clock). Either direction makes the
    pair active."""
    return frozenset(edge_pair(*d) for d, at in busy_at.items() if now - at <= idle_after_s)


def probe_due(last_sent: float | None, now: float, interval_s: float, tick_s: float) -> bool:
    """Whether an idle pair's path, last probed at `last_sent` (None: never), is due for its
    next probe on a prober tick at `now`: `interval_s` after the last, less half a tick of
    `tick_s` (the prober's ticks come every probe interval: 200 ms at 10 ms ticks is every
    20th tick, not every 21st)."""
    return last_sent is None or now - last_sent >= interval_s - tick_s / 2


@dataclass(frozen=True)
class RegimeState:
    """Which pairs run fast: probed every probe interval (`probed_fast`, since `fast_since`)
    and holding the fast dead_after in the data plane (`live_fast`, within `probed_fast`).
    Replaced whole, never changed in place: the probers read it without the lock."""

    probed_fast: frozenset[EdgePair] = frozenset()
    live_fast: frozenset[EdgePair] = frozenset()
    fast_since: Mapping[EdgePair, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Transition:
    """One update's changes: pairs probed fast from now on (`probe_fast`), pairs whose
    dead_after is written fast (`live_fast`) or slow (`live_slow`), pairs probed slowly from
    now on (`probe_slow`)."""

    probe_fast: frozenset[EdgePair] = frozenset()
    live_fast: frozenset[EdgePair] = frozenset()
    live_slow: frozenset[EdgePair] = frozenset()
    probe_slow: frozenset[EdgePair] = frozenset()

    @property
    def writes(self) -> frozenset[EdgePair]:
        """The pairs whose liveness entries are written (MODIFY on both edges)."""
        return self.live_fast | self.live_slow

    def __bool__(self) -> bool:
        return bool(self.probe_fast or self.writes or self.probe_slow)


def plan(state: RegimeState, active: frozenset[EdgePair], now: float, settle_s: float,
         writable: Collection[int]) -> Transition:
    """The changes that move `state` towards `active` (the pairs that should run fast) in the
    safe order (module docstring). A pair's dead_after is written only where both its edges
    are `writable` (their agents ready); the others wait for a later update."""

    def both(pair: EdgePair) -> bool:
        return pair[0] in writable and pair[1] in writable

    fast = state.probed_fast
    settled = frozenset(p for p in (active & fast) - state.live_fast
                        if now - state.fast_since.get(p, now) >= settle_s and both(p))
    return Transition(
        probe_fast=active - fast,
        live_fast=settled,
        live_slow=frozenset(p for p in state.live_fast - active if both(p)),
        probe_slow=(fast - active) - state.live_fast,
    )


def applied(state: RegimeState, change: Transition, written: Collection[EdgePair],
            now: float) -> RegimeState:
    """`state` after `change`, of whose dead_after writes those of the pairs `written` were
    acknowledged by both edges (the others are planned again at the next update)."""
    probed = (state.probed_fast | change.probe_fast) - change.probe_slow
    since = {p: t for p, t in state.fast_since.items() if p in probed}
    since.update({p: now for p in change.probe_fast})
    live = (state.live_fast | (change.live_fast & frozenset(written))) - frozenset(
        p for p in change.live_slow if p in written)
    return RegimeState(probed, live & probed, since)


class ProbeRegimes:
    """The regimes of a network's pairs of edges, read by the routing (each switch's liveness
    entries), the telemetry intake (which probes go, the estimators' busy judgement) and the
    views; changed by the controller's updates (src/mpsched/controller/southbound/regime_ops.py).
    `enabled` False (two edges, no idle interval): every pair active, for good."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled
        self.state = RegimeState()
        # when each (switch, destination edge, path id) was last probed (`idle_probe_wanted`;
        # written by that switch's prober thread only)
        self.last_sent: dict[tuple[str, int, int], float] = {}

    def probing_fast(self, a: int, b: int) -> bool:
        """Whether the pair of edges `a` and `b` is probed every probe interval."""
        return not self.enabled or edge_pair(a, b) in self.state.probed_fast

    def regime(self, a: int, b: int) -> str:
        """The probe regime of the pair of edges `a` and `b`: ACTIVE or IDLE."""
        return ACTIVE if self.probing_fast(a, b) else IDLE

    def idle_peers(self, edge: int, peers: Iterable[int]) -> frozenset[int]:
        """The peers of `edge` whose pair with it holds the slow (idle) dead_after."""
        if not self.enabled:
            return frozenset()
        live = self.state.live_fast
        return frozenset(e for e in peers if edge_pair(edge, e) not in live)

    def idle_probe_wanted(self, switch: str, edge: int, dst_edge: int, path_id: int,
                          now: float, interval_s: float, tick_s: float) -> bool | None:
        """For a probe of `switch` (edge `edge`) onto its path `path_id` towards `dst_edge`
        on a tick at `now`: None when the pair is probed fast (the caller decides), else
        whether the idle pair's path is due (`probe_due`, every `interval_s`), noted as sent
        if so. A fast pair's probe is noted as sent when asked (its busy skip aside), so that
        the pair's first slow probe comes an idle interval after its last fast one. Without
        regimes nothing is noted."""
        if not self.enabled:
            return None
        key = (switch, dst_edge, path_id)
        if edge_pair(edge, dst_edge) in self.state.probed_fast:
            self.last_sent[key] = now
            return None
        if not probe_due(self.last_sent.get(key), now, interval_s, tick_s):
            return False
        self.last_sent[key] = now
        return True

    def update(self, change: Transition, written: Collection[EdgePair], now: float) -> None:
        """Apply an update (`applied`); under the controller's lock."""
        self.state = applied(self.state, change, written, now)


__all__ = [
    "ACTIVE", "IDLE", "EdgePair", "ProbeRegimes", "RegimeState", "Transition", "active_pairs",
    "applied", "edge_pair", "plan", "probe_due",
]
