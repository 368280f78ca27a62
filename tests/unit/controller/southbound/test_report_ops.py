"""report_ops.py: after each update of the probe regimes a fabric pair's report intervals
follow its probes on both of its edges, and the slow intervals' verdicts come first."""

from __future__ import annotations

from mpsched.controller.telemetry.report_rates import (
    ACTIVE_REPORT_INTERVAL_US,
    IDLE_REPORT_INTERVAL_US,
)
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline import TABLE_REPORT_CONFIG, TABLE_RTT_CONFIG
from tests.unit.controller.southbound.test_regime_ops import NOW, keeper


def intervals(writes: list[list[TableEntry]], table: str = TABLE_REPORT_CONFIG
              ) -> dict[tuple[int, int], int]:
    """(peer edge, path id) -> the interval last written to `table`."""
    return {(e.match["peer_edge"], e.match["path_id"]): e.params["interval_us"]
            for batch in writes for e in batch if e.table == table}


def test_an_active_pair_reports_fast_and_slow_again_once_idle():
    k, agents = keeper()
    rates = k.routes.reports
    assert not k.reports.sync(frozenset({1, 2, 3}))  # at start every pair idle: as installed
    k.intake.busy_at[(3, 1)] = NOW
    k.update(NOW + 0.1)  # probed fast at once: its reports too, on both edges
    fast = {(3, 1): ACTIVE_REPORT_INTERVAL_US, (3, 2): ACTIVE_REPORT_INTERVAL_US}
    assert intervals(agents["leaf1"].writes) == intervals(agents["leaf1"].writes,
                                                          TABLE_RTT_CONFIG) == fast
    assert intervals(agents["leaf3"].writes) == {(1, 1): ACTIVE_REPORT_INTERVAL_US,
                                                 (1, 2): ACTIVE_REPORT_INTERVAL_US}
    assert agents["leaf2"].writes == [] and rates.fast == {(1, 3)}
    # the probers' hold follows the pair's interval in force
    own = k.intake.switch_telemetry["leaf1"]
    assert rates.intervals(own, 1, 3).report_us == ACTIVE_REPORT_INTERVAL_US
    assert rates.intervals(own, 1, 2).report_us == IDLE_REPORT_INTERVAL_US
    k.update(NOW + 0.2)
    k.update(NOW + 2.2)  # idle: the slow dead_after first, the probes and reports later
    assert rates.fast == {(1, 3)}
    k.update(NOW + 2.3)
    assert rates.fast == frozenset()
    assert intervals(agents["leaf3"].writes) == {(1, 1): IDLE_REPORT_INTERVAL_US,
                                                 (1, 2): IDLE_REPORT_INTERVAL_US}
    # the idle pair's estimators bear its slow reports (4 idle intervals)
    est = k.intake.estimator(1, "leaf3->leaf1")
    assert est.settings.dead_after_s == 4 * IDLE_REPORT_INTERVAL_US / 1e6


def test_a_write_not_acknowledged_is_made_again_and_counts_as_slow_meanwhile():
    k, agents = keeper()
    rates = k.routes.reports
    k.intake.busy_at[(1, 2)] = NOW
    agents["leaf2"].fail = True
    k.update(NOW)
    assert rates.fast == frozenset() and rates.is_slow(1, 2)
    agents["leaf2"].fail = False
    k.update(NOW + 0.1)
    assert rates.fast == {(1, 2)}
    assert intervals(agents["leaf2"].writes)[(1, 1)] == ACTIVE_REPORT_INTERVAL_US


def test_a_reprogrammed_edge_gets_the_intervals_in_force():
    k, _ = keeper()
    k.intake.busy_at[(1, 2)] = NOW
    k.update(NOW)
    sw = k.routes.net.switch("leaf1")
    got = intervals([k.routes.forwarding(k.pipeline, sw, k.intake.telemetry)])
    assert got[(2, 1)] == ACTIVE_REPORT_INTERVAL_US and got[(3, 1)] == IDLE_REPORT_INTERVAL_US


def test_without_regimes_every_pair_reports_at_the_active_interval_for_good():
    k, agents = keeper(enabled=False)
    k.intake.busy_at[(1, 2)] = NOW
    k.update(NOW)
    assert all(a.writes == [] for a in agents.values())
    got = intervals([k.routes.forwarding(k.pipeline, k.routes.net.switch("leaf1"))])
    assert set(got.values()) == {ACTIVE_REPORT_INTERVAL_US}
