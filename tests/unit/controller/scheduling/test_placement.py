"""A decision becomes one class's table contents on one switch
(src/mpsched/controller/scheduling/placement.py)."""

from __future__ import annotations

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode, VqPathParams
from mpsched.controller.model.paths import PathState
from mpsched.controller.scheduling.classes import ClassPolicy, TrafficClass
from mpsched.controller.scheduling.placement import AUTO_GAP_MIN_US, auto_gap_us, ca_dict, place

PATH_IDS = [1, 2, 3]
PATHS = [PathState(p, True, srtt_ms=10.0 * p) for p in PATH_IDS]


def klass(gap_us: int = 0) -> TrafficClass:
    return TrafficClass(0, "default", policy=ClassPolicy("ecmp", flowlet_gap_us=gap_us))


def decision(mode: Mode, weights: dict[int, float] | None = None, **kw) -> Decision:
    return Decision(weights or {1: 1.0, 2: 0.5, 3: 0.0}, mode, {}, "test", **kw)


def test_weights_are_quantised_with_admin_down_paths_at_zero():
    pl = place(klass(), decision(Mode.HASH), PATHS, PATH_IDS, admin_down={1})
    # path 1 (the heaviest) is down: path 2 becomes the largest weight, 255
    assert pl.weight_map() == {1: 0, 2: 255, 3: 0}
    assert pl.weights == ((1, 0), (2, 255), (3, 0))  # by path id


def test_no_weight_left_gives_all_zero():
    pl = place(klass(), decision(Mode.FLOWLET, {1: 1.0}), PATHS, PATH_IDS, admin_down={1})
    assert pl.weight_map() == {1: 0, 2: 0, 3: 0}


def test_hash_and_rr_carry_no_flowlet_gap():
    for mode in (Mode.HASH, Mode.RR):
        assert place(klass(gap_us=5000), decision(mode), PATHS, PATH_IDS, set()).flowlet_gap_us == 0


def test_flowlet_gap_is_the_class_s_or_automatic_over_the_weighted_paths():
    own = place(klass(gap_us=5000), decision(Mode.FLOWLET), PATHS, PATH_IDS, set())
    assert own.flowlet_gap_us == 5000
    auto = place(klass(), decision(Mode.FLOWLET), PATHS, PATH_IDS, set()).flowlet_gap_us
    # weighted paths 1 and 2: srtt 10 and 20 ms, half the spread 5 ms + 500 µs -> 6 ms
    assert auto == auto_gap_us(PATHS, [1, 2]) == 6000


def test_vq_parameters_drain_per_1024_us():
    vq = {1: VqPathParams(100, 2000, 30, 1000), 2: VqPathParams(0, 4000, 10, 250)}
    pl = place(klass(), decision(Mode.VQ, vq=vq), PATHS, PATH_IDS, set())
    assert pl.mode == "vq"
    assert pl.vq_map() == {1: (100, 2000, 30, 1024), 2: (0, 4000, 10, 256)}


def test_ca_without_a_cost_is_the_switch_s_all_zero_default():
    pl = place(klass(), decision(Mode.CA), PATHS, PATH_IDS, set())
    assert pl.ca == CaCost(qdelay_coef=0.0, loss_coef_us=0.0, util_coef_us=0.0, epsilon_us=0.0,
                           max_age_ms=0.0)
    assert pl.flowlet_gap_us >= AUTO_GAP_MIN_US


def test_ca_cost_is_quantised_so_that_noise_does_not_rewrite_the_switch():
    def pl(offset: float, capacity: float):
        cost = CaCost(paths={1: CaPath(offset_us=offset, capacity_mbps=capacity)})
        return place(klass(), decision(Mode.CA, ca=cost), PATHS, PATH_IDS, set())

    assert pl(1001.0, 10.01) == pl(1002.0, 10.02)
    assert pl(1000.0, 10.0) != pl(9000.0, 10.0)
    data = ca_dict(pl(1001.0, 10.01).ca)
    assert set(data["paths"]) == {"1"} and set(data["paths"]["1"]) == {"offset_us", "capacity_mbps"}


def test_a_reroute_withdraws_the_weight_of_the_vanished_paths_only():
    from mpsched.controller.model.placement import Placement
    from mpsched.controller.scheduling.placement import withdrawn

    pl = Placement(((1, 255), (2, 128), (3, 64)), "flowlet", 1000)
    assert withdrawn(pl, {1, 2, 3}, ()) is None  # nothing vanished
    assert withdrawn(Placement(((1, 255), (2, 0)), "hash", 0), {1}, ()) is None  # unweighted
    off1 = withdrawn(pl, {2, 3}, ())
    assert off1 is not None and off1.weights == ((1, 0), (2, 255), (3, 128))  # re-quantised
    assert (off1.mode, off1.flowlet_gap_us) == ("flowlet", 1000)
    # the only weighted path vanished: equal over the kept ones not administratively down
    only = withdrawn(Placement(((1, 255), (2, 0), (3, 0)), "hash", 0), {2, 3}, {3})
    assert only is not None and only.weights == ((1, 0), (2, 255), (3, 0))


def test_the_decisions_syn_copy_is_the_placements():
    assert place(klass(), decision(Mode.CA), PATHS, PATH_IDS, set()).syn_copy is False
    pl = place(klass(), decision(Mode.CA, syn_copy=True), PATHS, PATH_IDS, set())
    assert pl.syn_copy is True
