"""src/mpsched/bench/scale_feed.py: the feeder's share of the reports per tick."""

from __future__ import annotations

import pytest


def test_each_tick_hands_over_its_share_of_the_cells_carrying_the_fraction():
    from mpsched.bench.scale_feed import quota

    # 252 cells every 252 ms: one report per ms, 10 per 10 ms tick
    assert quota(0.0, 252, 0.010, 0.252) == (10, pytest.approx(0.0))
    # 30 cells every 100 ms over 10 ms ticks: 3 per tick; 7 cells: 0.7, then 1.4
    n, credit = quota(0.0, 7, 0.010, 0.100)
    assert (n, credit) == (0, pytest.approx(0.7))
    n, credit = quota(credit, 7, 0.010, 0.100)
    assert (n, credit) == (1, pytest.approx(0.4))
    # a late tick (the feeder was behind) owes the whole elapsed time's reports
    assert quota(0.0, 100, 0.050, 0.100)[0] == 50
    # over one interval every cell falls due once
    total, credit = 0, 0.0
    for _ in range(25):
        n, credit = quota(credit, 63, 0.010, 0.250)
        total += n
    assert total == 63


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

    tel = SimpleNamespace(report_interval_us=20_000, rtt_interval_us=20_000)
    ctl = SimpleNamespace(net=SimpleNamespace(path_ids=lambda: [1, 2]),
                          intake=SimpleNamespace(switch_telemetry={"leaf1": tel}),
                          on_report=take, on_rtt=take)
    feeder = Feeder(ctl, 3)  # type: ignore[arg-type]
    feeder.start()
    time.sleep(0.2)
    feeder.halt.set()
    feeder.join()
    assert feeder.sent == len(handled) > 0
    # at least the half millisecond of each hand-over, and never more than the thread's CPU
    assert len(handled) * 0.0005 <= feeder.ingest_s <= feeder.cpu_s
