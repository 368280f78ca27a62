"""src/mpsched/controller/telemetry/report_rates.py: each pair of edges' report intervals, and the
writes that move the data plane's towards the pairs' regimes."""

from __future__ import annotations

from mpsched.controller.telemetry.config import TelemetryConfig
from mpsched.controller.telemetry.report_rates import (
    ACTIVE_REPORT_INTERVAL_US,
    IDLE_REPORT_INTERVAL_US,
    Intervals,
    ReportRates,
    Sync,
    pair_intervals,
    plan_sync,
)


def test_two_edges_keep_the_configured_intervals():
    own = TelemetryConfig()
    assert pair_intervals(own, fabric=False, slow=False) == Intervals(10_000, 10_000)
    assert pair_intervals(own, fabric=False, slow=True) == Intervals(10_000, 10_000)
    assert ReportRates().intervals(own, 1, 2) == Intervals(10_000, 10_000)


def test_a_fabric_pair_reports_at_its_regimes_interval_unless_its_switch_is_slower():
    own = TelemetryConfig()
    active = Intervals(ACTIVE_REPORT_INTERVAL_US, ACTIVE_REPORT_INTERVAL_US)
    assert pair_intervals(own, fabric=True, slow=False) == active == Intervals(250_000, 250_000)
    assert pair_intervals(own, fabric=True, slow=True) == Intervals(1_000_000, 1_000_000)
    # a 64-leaf edge's own intervals, stretched by the report cap to 2 s, stay
    wide = TelemetryConfig(report_interval_us=2_016_000, rtt_interval_us=2_016_000)
    assert pair_intervals(wide, fabric=True, slow=False) == Intervals(2_016_000, 2_016_000)
    assert pair_intervals(wide, fabric=True, slow=True) == Intervals(2_016_000, 2_016_000)
    # RTT reports configured apart keep the difference above the floor
    apart = TelemetryConfig(rtt_interval_us=400_000)
    assert pair_intervals(apart, fabric=True, slow=False) == Intervals(250_000, 400_000)


def test_every_pair_is_active_without_regimes_and_idle_at_start_with_them():
    own = TelemetryConfig()
    assert ReportRates(fabric=True).intervals(own, 1, 2).report_us == ACTIVE_REPORT_INTERVAL_US
    rates = ReportRates(fabric=True, regimes=True)
    assert rates.intervals(own, 2, 1).report_us == IDLE_REPORT_INTERVAL_US
    assert rates.slow_peers(1, [2, 3]) == {2, 3}


def test_plan_moves_the_pairs_towards_their_probes_on_writable_edges_only():
    sync = plan_sync(frozenset({(1, 2), (1, 3)}), frozenset({(2, 3)}), frozenset({(3, 4)}),
                     writable={1, 2, 3, 4})
    assert sync == Sync(to_fast=frozenset({(1, 2), (1, 3)}),
                        to_slow=frozenset({(2, 3), (3, 4)}))
    assert not plan_sync(frozenset({(1, 2)}), frozenset({(1, 2)}), frozenset(), {1, 2})
    assert plan_sync(frozenset({(1, 2)}), frozenset(), frozenset(), {1}) == Sync()


def test_a_pair_is_slow_from_its_write_on_and_fast_once_both_edges_acknowledged():
    own = TelemetryConfig()
    rates = ReportRates(fabric=True, regimes=True)
    up = Sync(to_fast=frozenset({(1, 2), (1, 3)}))
    rates.starting(up)
    assert rates.is_slow(1, 2)  # not before the acknowledgement
    rates.written(up, [(1, 2)])  # (1, 3): an edge failed, again at the next update
    assert rates.fast == {(1, 2)} and rates.slow_peers(1, [2, 3]) == {3}
    assert rates.intervals(own, 2, 1).report_us == ACTIVE_REPORT_INTERVAL_US
    down = Sync(to_slow=frozenset({(1, 2)}))
    rates.starting(down)
    assert rates.is_slow(1, 2)  # at once: nothing may count on the fast interval any more
    rates.written(down, [])  # not acknowledged: may still report fast, written again
    assert rates.unsure == {(1, 2)}
    assert plan_sync(frozenset(), rates.fast, rates.unsure, {1, 2}).to_slow == {(1, 2)}
    rates.written(down, [(1, 2)])
    assert rates.unsure == frozenset()
