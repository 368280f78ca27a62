"""The fabric soak's plan (src/mpsched/bench/soak_plan.py): when policies change, links flap and
the spine restarts; and which samples belong to which life of a process."""

from __future__ import annotations

import math

from mpsched.bench.soak_plan import RESTART_QUIET_S, Event, Lives, plan_events
from mpsched.bench.soak_series import ProcSample

LINKS = ["leaf2-spine1", "leaf1-spine1", "leaf1-spine2"]


def test_policies_change_every_period_from_the_start() -> None:
    events = plan_events(20, 5, 100, 5, LINKS, None, "spine1")
    assert events == [Event(t, "policy") for t in (0.0, 5.0, 10.0, 15.0)]


def test_flaps_take_the_links_in_turn_alternating_linkem_and_admin() -> None:
    events = plan_events(200, 1000, 60, 5, LINKS, None, "spine1")
    flaps = [e for e in events if e.kind != "policy"]
    assert flaps == [
        Event(60, "linkem_down", "leaf1-spine1"), Event(65, "linkem_up", "leaf1-spine1"),
        Event(120, "admin_down", "leaf1-spine2"), Event(125, "admin_up", "leaf1-spine2"),
        Event(180, "linkem_down", "leaf2-spine1"), Event(185, "linkem_up", "leaf2-spine1"),
    ]


def test_a_flap_that_would_outlast_the_run_is_left_out() -> None:
    events = plan_events(64, 1000, 60, 5, LINKS, None, "spine1")
    assert [e.kind for e in events] == ["policy"]


def test_no_flap_near_the_restart() -> None:
    events = plan_events(400, 1000, 60, 5, LINKS, 120, "spine1")
    assert Event(120, "restart", "spine1") in events
    downs = [e.at_s for e in events if e.kind.endswith("_down")]
    assert downs == [60, 180, 240, 300, 360]  # 120 would flap during the restart
    for t in downs:
        assert not 120 - 5 <= t <= 120 + RESTART_QUIET_S
    # the flap after the gap keeps alternating by its number, not by the flaps done
    assert Event(180, "linkem_down", "leaf2-spine1") in events


def test_a_restart_at_or_after_the_end_is_left_out() -> None:
    events = plan_events(100, 1000, 1000, 5, LINKS, 100, "spine1")
    assert [e.kind for e in events] == ["policy"]


def test_a_restarted_process_is_a_new_life_born_at_the_restart() -> None:
    lives = Lives()
    first = lives.series("spine1", 10, 60)
    assert lives.series("spine1", 10, 70) is first and first.born_s == 0
    first.samples.append((60, ProcSample(1000, 10, 3)))
    lives.restarted("spine1", 120)
    second = lives.series("spine1", 11, 130)
    assert (second.name, second.pid, second.born_s) == ("spine1#2", 11, 120)
    # a PID change nobody announced is born when it is seen
    third = lives.series("spine1", 12, 200)
    assert (third.name, third.born_s) == ("spine1#3", 200)
    assert lives.current["spine1"] is third
    assert lives.sampled() == [first]


def test_the_restart_step_counts_nowhere() -> None:
    # the old process at 50 MB, the new one starting at 20 MB and flat: no growth, no
    # slope in either life (the slope window of the new one starts 600 s after its birth)
    lives = Lives()
    old = lives.series("spine1", 10, 60)
    old.samples += [(t, ProcSample(50_000, 12, 4)) for t in (60, 90, 110)]
    lives.restarted("spine1", 120)
    new = lives.series("spine1", 11, 180)
    new.samples += [(t, ProcSample(20_000, 9, 3)) for t in range(180, 1200, 10)]
    assert [s.rss_growth_pct() for s in lives.sampled()] == [0.0, 0.0]
    assert [s.growth("fds") for s in lives.sampled()] == [0, 0]
    assert math.isnan(old.rss_slope_kb_per_min(600))
    assert new.rss_slope_kb_per_min(600) == 0.0
