"""The control loop's decisions (src/mpsched/controller/scheduling/scheduler.py): placements, writes
only
on change, admin state, FD-MVQS parameters, LM3, per-switch state, the automatic flowlet gap
(class and parameter changes: test_scheduler_changes.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.model.paths import PathState
from mpsched.controller.model.placement import Change, Placement
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.policies import REGISTRY
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.scheduler import DECISION_LOG, Scheduler
from tests.unit.controller.scheduling.sched_helpers import (
    ALL_255,
    ALL_UP,
    LM3_PATHS,
    PATH_IDS,
    SWITCHES,
    default_class,
    only,
    sched,
    view,
)

# -- placements and writes only on change ---------------------------------------


def test_first_step_places_the_default_class():
    s = Scheduler(SWITCHES, [3, 1, 2])  # path ids in any order
    assert s.path_ids == [1, 2, 3]
    assert list(s.classes) == [DEFAULT_CLASS_ID]
    assert s.placement_of("s1", 0) is None
    changes = s.step(view(ALL_UP), 1.0)
    # hash mode uses no gap: 0 (flowlet modes get the automatic gap)
    assert changes == [Change("s1", 0, Placement(ALL_255, "hash", 0))]
    assert s.placement_of("s1", 0) == changes[0].placement
    assert s.placement_of("s2", 0) is None  # only the stepped switch
    assert s.placement_of("s1", 7) is None  # no such class
    assert len(s.log) == 1


def test_identical_step_writes_nothing_then_a_change_writes_again():
    s = sched()
    assert s.step(view(ALL_UP), 1.0)
    assert s.step(view(ALL_UP), 2.0) == []
    assert len(s.log) == 1  # no log entry without a change
    dead2 = [PathState(1, True), PathState(2, False), PathState(3, True)]
    pl = only(s.step(view(dead2), 3.0))
    assert pl.weight_map() == {1: 255, 2: 0, 3: 255}
    assert len(s.log) == 2
    assert s.step(view(dead2), 4.0) == []


def test_withdraw_takes_a_rerouted_units_weight_off_its_vanished_paths_without_a_step():
    s = sched()
    assert s.withdraw("s1", {1, 2}) == []  # never placed: nothing to withdraw
    s.step(view(ALL_UP), 1.0)
    (change,) = s.withdraw("s1", {1, 2})  # path 3 vanished
    assert change.previous is not None and change.previous.weights == ALL_255
    assert change.placement.weight_map() == {1: 255, 2: 255, 3: 0}
    assert s.placement_of("s1", 0) == change.placement
    assert s.withdraw("s1", {1, 2}) == []  # already off it
    assert len(s.log) == 1  # no policy step, no decision logged
    assert only(s.step(view(ALL_UP), 2.0)).weights == ALL_255  # the next step decides anew


def test_ecmp_equal_weights_hash_mode():
    pl = only(sched().step(view(ALL_UP), 0.0))
    assert pl.weights == ALL_255
    assert pl.mode == "hash"
    assert pl.vq == ()
    assert pl.vq_map() == {}


def test_dead_path_gets_weight_zero():
    paths = [PathState(1, False), PathState(2, True), PathState(3, True)]
    pl = only(sched().step(view(paths), 0.0))
    assert pl.weight_map() == {1: 0, 2: 255, 3: 255}


def test_path_missing_from_view_gets_weight_zero():
    pl = only(sched().step(view(ALL_UP[:2]), 0.0))
    assert pl.weight_map() == {1: 255, 2: 255, 3: 0}


def test_flowlet_gap_of_the_class_is_in_the_placement():
    s = sched([default_class(ClassPolicy("letflow", flowlet_gap_us=1234))])
    pl = only(s.step(view(ALL_UP), 0.0))
    assert pl.flowlet_gap_us == 1234
    assert pl.mode == "flowlet"


def test_classes_are_stepped_in_id_order():
    classes = [
        TrafficClass(5, "five", policy=ClassPolicy("rr")),
        default_class(),
        TrafficClass(2, "two", policy=ClassPolicy("letflow")),
    ]
    changes = sched(classes).step(view(ALL_UP), 0.0)
    assert [(c.class_id, c.placement.mode) for c in changes] == [
        (0, "hash"),
        (2, "flowlet"),
        (5, "rr"),
    ]


# -- admin state --------------------------------------------------------------------


def test_admin_down_path_gets_weight_zero():
    s = sched()
    s.admin_down.add(2)
    pl = only(s.step(view(ALL_UP), 0.0))
    assert pl.weight_map() == {1: 255, 2: 0, 3: 255}
    assert s.log[-1]["active"] == [1, 3]
    s.admin_down.discard(2)
    assert only(s.step(view(ALL_UP), 1.0)).weights == ALL_255


def test_admin_down_overrides_policy_weights():
    # wcmp's operator weights put everything on path 2; admin down takes it away
    s = sched([default_class(ClassPolicy("wcmp", params={"weights": "2:5,1:1"}))])
    assert only(s.step(view(ALL_UP), 0.0)).weight_map() == {1: 51, 2: 255, 3: 0}
    s.admin_down.add(2)
    pl = only(s.step(view(ALL_UP), 1.0))
    assert pl.weight_map()[2] == 0
    assert pl.weight_map() == {1: 255, 2: 0, 3: 0}


def test_admin_down_masks_the_no_path_alive_fallback():
    # path 1 is up but admin down, 2 and 3 are dead: the policy sees no alive path and
    # returns equal weights over all paths; the admin mask still zeroes path 1
    s = sched()
    s.admin_down.add(1)
    paths = [PathState(1, True), PathState(2, False), PathState(3, False)]
    pl = only(s.step(view(paths), 0.0))
    assert pl.weight_map() == {1: 0, 2: 255, 3: 255}
    assert "no path alive" in s.log[-1]["reason"]


@pytest.mark.parametrize("policy", sorted(REGISTRY))
def test_all_admin_down_gives_all_zero_for_every_policy(policy):
    s = sched([default_class(ClassPolicy(policy))])
    s.admin_down.update(PATH_IDS)
    pl = only(s.step(view(LM3_PATHS), 0.0))
    assert pl.weight_map() == {1: 0, 2: 0, 3: 0}
    assert s.log[-1]["active"] == []


def test_no_path_alive_without_admin_down_keeps_all_paths():
    paths = [PathState(i, False) for i in PATH_IDS]
    pl = only(sched().step(view(paths), 0.0))
    assert pl.weights == ALL_255


# -- FD-MVQS ---------------------------------------------------------------------


def test_fdmvqs_vq_mode_and_params_per_alive_path():
    s = sched([default_class(ClassPolicy("fdmvqs"))])
    paths = [
        PathState(1, True, srtt_ms=10.0, capacity_mbps=10.0),
        PathState(2, True, srtt_ms=20.0, capacity_mbps=40.0),
        PathState(3, False, srtt_ms=5.0, capacity_mbps=100.0),
    ]
    pl = only(s.step(view(paths), 0.0))
    assert pl.mode == "vq"
    assert pl.weight_map() == {1: 255, 2: 255, 3: 0}
    vq = pl.vq_map()
    assert sorted(vq) == [1, 2]
    assert [p for p, _ in pl.vq] == [1, 2]  # by path id
    for params in vq.values():
        assert len(params) == 4
        assert all(isinstance(x, int) and x >= 0 for x in params)
    # (pad_us, bdp_bytes, us_per_kbyte, drain_bytes_per_ms); PAD = srtt/2 relative to the
    # smallest (no OWD series): 5 ms and 10 ms -> 0 and 5000 us; bdp = cap * srtt * 125
    assert vq[1][0] == 0 and vq[2][0] == 5000
    assert vq[1][1] == 12500 and vq[2][1] == 100000
    # drain per 1024 µs (mvqs.p4): bytes per ms * 1.024
    assert vq[1][3] == 1280 and vq[2][3] == 5120
    assert s.log[-1]["mode"] == "vq"


def test_fdmvqs_admin_down_path_has_no_vq_entry():
    s = sched([default_class(ClassPolicy("fdmvqs"))])
    s.admin_down.add(1)
    pl = only(s.step(view(LM3_PATHS), 0.0))
    assert pl.weight_map() == {1: 0, 2: 255, 3: 255}
    assert sorted(pl.vq_map()) == [2, 3]


# -- LM3 -------------------------------------------------------------------------


def test_lm3_shrinks_the_active_set_on_blocking():
    t = 16  # default blocking_threshold
    s = sched([default_class(ClassPolicy("ecmp", lm3=True))])
    pl = only(s.step(view(LM3_PATHS, ooo={1: 100, 2: 7}), 0.0))  # first totals: no delta
    assert pl.weights == ALL_255
    assert s.log[-1]["policy"] == "ecmp+lm3"
    assert "lm3" in s.log[-1]["reason"]
    # fewer than a threshold's worth of new out-of-order arrivals: no event
    assert s.step(view(LM3_PATHS, ooo={1: 100 + t - 1, 2: 7}), 1.0) == []
    # one event: keep ceil(3/2) = 2 by R (paths 2 and 1); the counts add over paths
    pl = only(s.step(view(LM3_PATHS, ooo={1: 100 + t + 4, 2: 7 + 12}), 2.0))
    assert pl.weight_map() == {1: 255, 2: 255, 3: 0}
    entry = s.log[-1]
    assert entry["active"] == [1, 2]
    assert "lm3" in entry["reason"] and "buffer blocking" in entry["reason"]
    # second event: keep 1 (path 2)
    pl = only(s.step(view(LM3_PATHS, ooo={1: 100 + 3 * t, 2: 7 + 12}), 3.0))
    assert pl.weight_map() == {1: 0, 2: 255, 3: 0}
    assert s.log[-1]["active"] == [2]
    assert "lm3" in s.log[-1]["reason"]
    # no new out-of-order arrivals: path 1's R is below the mean of {2}, stays out
    assert s.step(view(LM3_PATHS, ooo={1: 100 + 3 * t, 2: 7 + 12}), 4.0) == []


def test_lm3_counter_reset_is_not_blocking():
    s = sched([default_class(ClassPolicy("ecmp", lm3=True))])
    s.step(view(LM3_PATHS, ooo={1: 1000}), 0.0)
    # the egress counter restarted (total fell): not counted as out-of-order arrivals
    assert s.step(view(LM3_PATHS, ooo={1: 0}), 1.0) == []
    # growth from the new base counts again
    assert only(s.step(view(LM3_PATHS, ooo={1: 16}), 2.0)).weight_map()[3] == 0


def test_lm3_state_is_per_switch_and_class():
    classes = [default_class(ClassPolicy("ecmp", lm3=True)), TrafficClass(1, "plain")]
    s = sched(classes)
    for sw in SWITCHES:
        s.step(view(LM3_PATHS, sw, ooo={1: 0}), 0.0)
    changes = s.step(view(LM3_PATHS, "s1", ooo={1: 32}), 1.0)
    assert [c.class_id for c in changes] == [0]  # class 1 has no LM3
    assert changes[0].placement.weight_map()[3] == 0
    # s2 never saw the out-of-order arrivals
    assert s.step(view(LM3_PATHS, "s2", ooo={1: 0}), 1.0) == []
    assert s.placement_of("s2", 0).weights == ALL_255


# -- switches ----------------------------------------------------------------------


def test_switches_are_independent():
    s = sched([default_class(ClassPolicy("minrtt"))])
    s1_paths = [PathState(1, True, srtt_ms=10.0), PathState(2, True, srtt_ms=5.0),
                PathState(3, True, srtt_ms=20.0)]
    s2_paths = [PathState(1, True, srtt_ms=10.0), PathState(2, False, srtt_ms=5.0),
                PathState(3, True, srtt_ms=20.0)]
    c1 = s.step(view(s1_paths, "s1"), 0.0)
    c2 = s.step(view(s2_paths, "s2"), 0.0)
    assert [c.switch for c in c1] == ["s1"] and [c.switch for c in c2] == ["s2"]
    assert c1[0].placement.weight_map() == {1: 0, 2: 255, 3: 0}
    assert c2[0].placement.weight_map() == {1: 255, 2: 0, 3: 0}
    assert s.placement_of("s1", 0) != s.placement_of("s2", 0)
    # each switch compares with its own last placement
    assert s.step(view(s1_paths, "s1"), 1.0) == []
    assert s.step(view(s2_paths, "s2"), 1.0) == []
    assert only(s.step(view(s1_paths, "s2"), 2.0)).weight_map() == {1: 0, 2: 255, 3: 0}
    assert [e["switch"] for e in s.log] == ["s1", "s2", "s2"]


def test_unknown_switch_raises():
    with pytest.raises(KeyError):
        sched().step(view(ALL_UP, "s9"), 0.0)


def test_decision_log_is_bounded():
    s = sched()
    dead = [PathState(1, False), PathState(2, True), PathState(3, True)]
    for i in range(DECISION_LOG + 10):
        assert s.step(view(ALL_UP if i % 2 else dead), float(i))
    assert len(s.log) == DECISION_LOG
    assert s.log[-1]["t"] == float(DECISION_LOG + 9)


# -- the automatic flowlet gap and the change count ----------------------------------


def test_auto_flowlet_gap_follows_the_one_way_delay_spread():
    """Gap 0 = automatic: spread of the raw one-way delays of the alive weighted paths
    + 500 µs, rounded up to whole ms; srtt spread / 2 without OWDs; at least 500 µs."""
    from mpsched.controller.scheduling.scheduler import auto_gap_us

    owd = [PathState(1, True, owd_raw_ms=1005.0), PathState(2, True, owd_raw_ms=1012.2)]
    # 7.2 ms spread + 0.5 ms = 7.7 ms -> 8 ms
    assert auto_gap_us(owd, [1, 2]) == 8000
    assert auto_gap_us(owd, [1]) == 1000  # one path: 0.5 ms rounded up to 1 ms
    rtt = [PathState(1, True, srtt_ms=10.0), PathState(2, True, srtt_ms=30.0)]
    assert auto_gap_us(rtt, [1, 2]) == 11000  # 20 ms / 2 + 0.5 ms -> 11 ms
    dead = [PathState(1, True, srtt_ms=10.0), PathState(2, False, srtt_ms=300.0)]
    assert auto_gap_us(dead, [1, 2]) == 1000
    s = Scheduler(["s1"], [1, 2], [TrafficClass(0, "d", policy=ClassPolicy("letflow"))])
    (change,) = s.step(SwitchView("s1", owd, {}), 1.0)
    assert change.placement.flowlet_gap_us == 8000


def test_a_change_of_classes_policies_or_parameters_counts_and_repeats_follows_policies():
    default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("llhd", lm3=True))
    s = Scheduler(["s1"], [1, 2], [default])
    other = Scheduler(["s1"], [1, 2], [default])
    assert s.instance != other.instance
    assert s.repeats()
    before = s.generation
    s.set_params({"control_period_ms": 50})
    s.set_class_policy(DEFAULT_CLASS_ID, {"name": "ecmp"})
    assert s.generation == before + 2 and s.repeats()
    s.set_classes([TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("fdmvqs"))])
    assert s.generation == before + 3
    assert not s.repeats()  # fdmvqs keeps its trends between periods
