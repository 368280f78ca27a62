"""telemetry/regimes.py: which pairs of edges are active, the idle pairs' probe gating, and
the order in which a pair changes regime."""

from __future__ import annotations

import pytest

from mpsched.controller.telemetry.regimes import (
    ACTIVE,
    IDLE,
    ProbeRegimes,
    RegimeState,
    Transition,
    active_pairs,
    applied,
    edge_pair,
    plan,
    probe_due,
)

NOW = 1_000.0
SETTLE = 0.05
ALL = frozenset({1, 2, 3})


def test_a_pair_of_edges_is_unordered():
    assert edge_pair(3, 1) == edge_pair(1, 3) == (1, 3)


def test_a_pair_is_active_while_either_direction_was_busy_within_idle_after():
    busy = {(1, 2): NOW - 1.0, (3, 1): NOW - 1.9, (2, 3): NOW - 2.5}
    assert active_pairs(busy, NOW, 2.0) == {(1, 2), (1, 3)}
    # (2, 3) went idle 0.5 s ago; (1, 3) only by its 3 -> 1 direction
    assert active_pairs(busy, NOW, 3.0) == {(1, 2), (1, 3), (2, 3)}
    assert active_pairs({(2, 1): NOW - 2.0}, NOW, 2.0) == {(1, 2)}  # the boundary counts
    assert active_pairs({}, NOW, 2.0) == frozenset()


def test_an_idle_path_is_due_an_interval_after_its_last_probe_less_half_a_tick():
    assert probe_due(None, NOW, 0.2, 0.01)
    assert not probe_due(NOW - 0.19, NOW, 0.2, 0.01)
    assert probe_due(NOW - 0.195, NOW, 0.2, 0.01)  # the 20th 10 ms tick, not the 21st
    assert probe_due(NOW - 0.3, NOW, 0.2, 0.01)


def test_a_pair_that_becomes_active_is_probed_fast_first_then_gets_the_fast_dead_after():
    state = RegimeState()
    t = plan(state, frozenset({(1, 2)}), NOW, SETTLE, ALL)
    assert t == Transition(probe_fast=frozenset({(1, 2)}))  # no liveness written yet
    state = applied(state, t, t.writes, NOW)
    assert state.probed_fast == {(1, 2)} and state.live_fast == frozenset()
    # before the fast probes ran for settle_s: nothing; after: the fast dead_after
    assert not plan(state, frozenset({(1, 2)}), NOW + SETTLE / 2, SETTLE, ALL)
    t = plan(state, frozenset({(1, 2)}), NOW + 1.5 * SETTLE, SETTLE, ALL)
    assert t == Transition(live_fast=frozenset({(1, 2)}))
    state = applied(state, t, t.writes, NOW + 1.5 * SETTLE)
    assert state.live_fast == {(1, 2)}
    assert not plan(state, frozenset({(1, 2)}), NOW + 1, SETTLE, ALL)


def test_a_pair_that_becomes_idle_gets_the_slow_dead_after_before_its_probes_slow_down():
    state = RegimeState(frozenset({(1, 2)}), frozenset({(1, 2)}), {(1, 2): NOW})
    t = plan(state, frozenset(), NOW + 5, SETTLE, ALL)
    assert t == Transition(live_slow=frozenset({(1, 2)}))  # still probed fast
    state = applied(state, t, t.writes, NOW + 5)
    assert state.probed_fast == {(1, 2)} and state.live_fast == frozenset()
    t = plan(state, frozenset(), NOW + 5.1, SETTLE, ALL)
    assert t == Transition(probe_slow=frozenset({(1, 2)}))
    state = applied(state, t, t.writes, NOW + 5.1)
    assert state == RegimeState(frozenset(), frozenset(), {})


def test_a_write_not_acknowledged_is_planned_again():
    state = RegimeState(frozenset({(1, 2), (1, 3)}), frozenset(), {(1, 2): NOW, (1, 3): NOW})
    active = frozenset({(1, 2), (1, 3)})
    t = plan(state, active, NOW + 1, SETTLE, ALL)
    assert t.live_fast == {(1, 2), (1, 3)}
    state = applied(state, t, {(1, 2)}, NOW + 1)  # edge 3 did not acknowledge
    assert state.live_fast == {(1, 2)}
    assert plan(state, active, NOW + 1.1, SETTLE, ALL).live_fast == {(1, 3)}


def test_only_pairs_of_writable_edges_change_their_dead_after():
    state = RegimeState(frozenset({(1, 2)}), frozenset({(1, 2)}), {(1, 2): NOW})
    t = plan(state, frozenset({(1, 3)}), NOW, SETTLE, {1, 3})  # edge 2 is not ready
    assert t == Transition(probe_fast=frozenset({(1, 3)}))
    state = applied(state, t, (), NOW)
    assert plan(state, frozenset({(1, 3)}), NOW + 1, SETTLE, {1, 3}).live_fast == {(1, 3)}


def test_a_pair_active_again_before_its_probes_slowed_keeps_them_and_its_fast_dead_after():
    """Idle, its slow dead_after written, active again before the next update: its fast
    probes never stopped, so the fast dead_after comes back at once."""
    state = RegimeState(frozenset({(1, 2)}), frozenset(), {(1, 2): NOW})
    t = plan(state, frozenset({(1, 2)}), NOW + 5, SETTLE, ALL)
    assert t == Transition(live_fast=frozenset({(1, 2)}))


def test_the_fast_dead_after_never_outlives_the_fast_probes():
    state = RegimeState(frozenset({(1, 2)}), frozenset({(1, 2)}), {(1, 2): NOW})
    bad = Transition(probe_slow=frozenset({(1, 2)}))
    assert applied(state, bad, (), NOW).live_fast == frozenset()


def test_without_regimes_every_pair_is_active_and_no_probe_is_gated():
    r = ProbeRegimes(enabled=False)
    assert r.probing_fast(1, 2) and r.regime(2, 1) == ACTIVE
    assert r.idle_peers(1, [2, 3]) == frozenset()
    assert r.idle_probe_wanted("leaf1", 1, 2, 1, NOW, 0.2, 0.01) is None
    assert r.last_sent == {}


def test_an_idle_pairs_paths_are_probed_every_idle_interval_on_the_fast_ticks():
    r = ProbeRegimes(enabled=True)
    assert r.regime(1, 2) == IDLE and r.idle_peers(1, [2, 3]) == {2, 3}
    ticks = [NOW + k * 0.01 for k in range(61)]
    sent = [t for t in ticks if r.idle_probe_wanted("leaf1", 1, 2, 1, t, 0.2, 0.01)]
    assert sent == pytest.approx([NOW, NOW + 0.2, NOW + 0.4, NOW + 0.6])
    # each (switch, destination, path) on its own
    assert r.idle_probe_wanted("leaf1", 1, 2, 2, NOW + 0.01, 0.2, 0.01) is True
    assert r.idle_probe_wanted("leaf2", 2, 1, 1, NOW + 0.01, 0.2, 0.01) is True


def test_a_fast_pairs_probes_are_noted_so_that_its_first_slow_one_waits_an_interval():
    r = ProbeRegimes(enabled=True)
    r.update(Transition(probe_fast=frozenset({(1, 2)})), (), NOW)
    assert r.regime(2, 1) == ACTIVE and r.idle_peers(1, [2, 3]) == {2, 3}
    assert r.idle_probe_wanted("leaf2", 2, 1, 1, NOW, 0.2, 0.01) is None  # the caller decides
    assert r.last_sent[("leaf2", 1, 1)] == NOW
    r.update(Transition(probe_slow=frozenset({(1, 2)})), (), NOW + 0.01)
    assert r.idle_probe_wanted("leaf2", 2, 1, 1, NOW + 0.1, 0.2, 0.01) is False
    assert r.idle_probe_wanted("leaf2", 2, 1, 1, NOW + 0.2, 0.2, 0.01) is True


def test_the_liveness_regime_of_a_peer_follows_the_acknowledged_writes():
    r = ProbeRegimes(enabled=True)
    r.update(Transition(probe_fast=frozenset({(1, 2), (1, 3)})), (), NOW)
    r.update(Transition(live_fast=frozenset({(1, 2), (1, 3)})), {(1, 3)}, NOW + 0.1)
    assert r.idle_peers(1, [2, 3]) == {2} and r.idle_peers(3, [1, 2]) == {2}
