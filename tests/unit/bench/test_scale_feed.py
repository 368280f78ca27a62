"""src/mpsched/bench/scale_feed.py: the feeder's reports at the intervals the controller sets."""

from __future__ import annotations

import pytest


def test_a_report_late_by_less_than_an_interval_goes_and_beyond_it_the_missed_are_skipped():
    from mpsched.bench.scale_feed import catch_up

    assert catch_up(10.0, 10.0, 0.25) == (0, pytest.approx(10.25))
    assert catch_up(10.0, 10.2, 0.25) == (0, pytest.approx(10.25))  # late: the next on time
    assert catch_up(10.0, 10.6, 0.25) == (2, pytest.approx(10.75))  # two missed, skipped


def test_each_cell_follows_the_interval_the_controller_sets_for_its_pair():
    from types import SimpleNamespace

    from mpsched.bench.scale_feed import PATH, RTT, Feeder
    from mpsched.controller.telemetry.config import TelemetryConfig
    from mpsched.controller.telemetry.report_rates import (
        ACTIVE_REPORT_INTERVAL_US,
        IDLE_REPORT_INTERVAL_US,
        ReportRates,
        Sync,
    )

    rates = ReportRates(fabric=True, regimes=True)
    tel = {f"leaf{i}": TelemetryConfig() for i in (1, 2, 3)}
    ctl = SimpleNamespace(net=SimpleNamespace(path_ids=lambda: [1, 2]),
                          intake=SimpleNamespace(switch_telemetry=tel),
                          routes=SimpleNamespace(reports=rates))
    feeder = Feeder(ctl, 3)  # type: ignore[arg-type]
    assert feeder.interval_s(PATH, (1, 2, 1)) == IDLE_REPORT_INTERVAL_US / 1e6
    assert feeder.offered_per_s() == pytest.approx(12 * 2 / (IDLE_REPORT_INTERVAL_US / 1e6))
    rates.written(Sync(to_fast=frozenset({(1, 2)})), [(1, 2)])
    assert feeder.interval_s(RTT, (2, 1, 2)) == ACTIVE_REPORT_INTERVAL_US / 1e6
    assert feeder.intervals_ms() == {250: 4, 1000: 8}


def test_the_controllers_handling_of_the_reports_is_counted_apart_from_the_feeders():
    import time
    from types import SimpleNamespace

    from mpsched.bench.scale_feed import Feeder

    handled: list[object] = []

    def take(report: object) -> None:  # the controller's handling: CPU spent in the call
        end = time.thread_time() + 0.0005
        while time.thread_time() < end:
            pass
        handled.append(report)

    from mpsched.controller.telemetry.config import TelemetryConfig
    from mpsched.controller.telemetry.report_rates import ReportRates

    tel = TelemetryConfig(report_interval_us=20_000, rtt_interval_us=20_000)
    ctl = SimpleNamespace(net=SimpleNamespace(path_ids=lambda: [1, 2]),
                          intake=SimpleNamespace(switch_telemetry={f"leaf{i}": tel
                                                                   for i in (1, 2, 3)}),
                          routes=SimpleNamespace(reports=ReportRates()),
                          on_report=take, on_rtt=take)
    feeder = Feeder(ctl, 3)  # type: ignore[arg-type]
    feeder.start()
    time.sleep(0.2)
    feeder.halt.set()
    feeder.join()
    assert feeder.sent == len(handled) > 0
    # at least the half millisecond of each hand-over, and never more than the thread's CPU
    assert len(handled) * 0.0005 <= feeder.ingest_s <= feeder.cpu_s
