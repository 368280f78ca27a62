"""src/mpsched/controller/scheduling/mptcp_placement.py: subflow placement on its own: `assign`, the
path
order, expected costs, the choice of a path and of a replacement (the tracker over time:
test_mptcp.py)."""

from __future__ import annotations

from collections import Counter

from mpsched.controller.model.decision import CaCost
from mpsched.controller.scheduling.mptcp_placement import (
    MptcpParams,
    assign,
    choose_path,
    expected_costs,
    occupancy,
    path_order,
    path_overlaps,
    pin_cost,
    replace_target,
)
from tests.unit.controller.scheduling.helpers import (
    INITIAL,
    JOIN_1,
    JOIN_2,
    JOIN_3,
    MPTCP_DEFAULTS,
    rank,
    sub,
)


def test_expected_cost_remembers_what_a_path_cost_while_the_connection_used_it():
    costs = {1: 1_000.0, 2: 5_000.0, 3: 2_000.0}
    seen = {1: (30_000.0, 10.0), 2: (4_000.0, 10.0), 3: (9_000.0, 0.0), 4: (50_000.0, 10.0)}
    out = expected_costs(costs, seen, now=20.0, memory_s=15.0)
    # path 1: its old (loaded) cost; 2: the live one is higher; 3: remembered too long ago;
    # 4: not usable now, so not in the result
    assert out == {1: 30_000.0, 2: 5_000.0, 3: 2_000.0}
    assert list(out) == [1, 2, 3]  # the mapping's order (assign's tie-break) is kept


def test_choose_path_takes_the_fewest_subflows_then_the_cheapest():
    order = {1: 300.0, 2: 100.0, 3: 200.0}
    assert choose_path(order, Counter()) == 2
    assert choose_path(order, Counter({2: 1})) == 3
    assert choose_path(order, Counter({1: 1, 2: 1, 3: 1})) == 2


def test_choose_path_ties_within_tie_us_go_to_the_first_in_order():
    order = {1: 1_400.0, 2: 1_000.0, 3: 5_000.0}
    assert choose_path(order, Counter(), tie_us=0.0) == 2
    assert choose_path(order, Counter(), tie_us=500.0) == 1  # 1400 is within 500 of 1000
    assert choose_path(order, Counter(), tie_us=300.0) == 2


PARAMS = MptcpParams(replace_margin=0.25, replace_margin_us=2_000.0)


def test_replace_target_needs_a_path_with_fewer_subflows_that_beats_the_margin():
    costs = {1: 100_000.0, 2: 60_000.0, 3: 70_000.0}
    counts = Counter({1: 1})
    # the cheapest free path, 40 % below path 1's cost (margin 25 %)
    assert replace_target(1, costs, costs, counts, PARAMS) == 2
    # expected costs decide among the candidates, the live cost of the current path the margin
    expected = {**costs, 2: 90_000.0}
    assert replace_target(1, costs, expected, counts, PARAMS) == 3
    # 20 % better is not enough
    assert replace_target(1, {1: 100_000.0, 2: 80_000.0}, {1: 0.0, 2: 80_000.0}, counts,
                          PARAMS) is None
    # a path holding as many of the connection's subflows is no target
    assert replace_target(1, costs, costs, Counter({1: 1, 2: 1, 3: 1}), PARAMS) is None


def test_replace_target_absolute_margin_on_near_idle_paths():
    counts = Counter({1: 1})
    assert replace_target(1, {1: 2_500.0, 2: 1_000.0}, {1: 2_500.0, 2: 1_000.0}, counts,
                          PARAMS) is None  # 1500 µs better: under replace_margin_us
    assert replace_target(1, {1: 3_500.0, 2: 1_000.0}, {1: 3_500.0, 2: 1_000.0}, counts,
                          PARAMS) == 2


def test_pin_cost_is_the_class_s_cost_or_the_default_when_it_weighs_nothing():
    own = CaCost(qdelay_coef=2.0)
    assert pin_cost(own) is own
    assert pin_cost(None) == CaCost()
    nothing = CaCost(qdelay_coef=0.0, loss_coef_us=0.0, util_coef_us=0.0)
    assert pin_cost(nothing) == CaCost()


def test_assign_puts_each_subflow_on_its_own_path_best_first():
    subs = [sub(INITIAL, None, True), sub(JOIN_1, None), sub(JOIN_2, None)]
    assert assign(subs, rank([3, 1, 2])) == {INITIAL: 3, JOIN_1: 1, JOIN_2: 2}


def test_more_subflows_than_paths_spread_evenly():
    subs = [sub(INITIAL, None, True), sub(JOIN_1, None), sub(JOIN_2, None), sub(JOIN_3, None)]
    got = assign(subs, rank([2, 1]))
    assert got == {INITIAL: 2, JOIN_1: 1, JOIN_2: 2, JOIN_3: 1}


def test_pins_stick_while_their_path_stays_usable():
    # the order changed (1 is now best) but both paths are still usable and within the
    # re-placement margin of each other: nobody moves
    subs = [sub(INITIAL, 2, True), sub(JOIN_1, 1)]
    assert assign(subs, rank([1, 2])) == {INITIAL: 2, JOIN_1: 1}
    assert assign(subs, {1: 10_000.0, 2: 11_000.0}) == {INITIAL: 2, JOIN_1: 1}


def test_a_subflow_whose_path_left_is_repinned_and_rebalanced_when_it_returns():
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, 2), sub(JOIN_2, 3)]
    # path 2 died: its subflow goes to the best of the least-loaded survivors
    assert assign(subs, rank([1, 3])) == {INITIAL: 1, JOIN_1: 1, JOIN_2: 3}
    # the two on one path: when path 2 returns, one moves back (share 1 per path)
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, 1), sub(JOIN_2, 3)]
    assert assign(subs, rank([1, 2, 3])) == {INITIAL: 1, JOIN_1: 2, JOIN_2: 3}


def test_no_usable_path_keeps_the_pins():
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, None)]
    assert assign(subs, {}) == {INITIAL: 1, JOIN_1: None}


def test_path_order_by_weight_then_id_alive_only():
    assert path_order({1: 10, 2: 30, 3: 30, 4: 5}, alive=[1, 2, 3]) == [2, 3, 1]
    assert path_order({1: 0, 2: 0}, alive=[2, 1]) == [1, 2]




def test_a_failed_paths_subflow_takes_the_cheapest_free_path_not_the_first_in_order():
    # 4 paths, two subflows on 1 and 2; path 1 dies. Paths 3 and 4 are both free; 3 comes
    # first in the weight/id order, but 4 costs less now: the subflow goes to 4.
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, 2)]
    costs = {2: 90_000.0, 3: 80_000.0, 4: 20_000.0}
    assert assign(subs, costs, params=MPTCP_DEFAULTS) == {INITIAL: 4, JOIN_1: 2}


def test_new_subflows_take_distinct_paths_cheapest_first():
    subs = [sub(INITIAL, None, True), sub(JOIN_1, None), sub(JOIN_2, None)]
    costs = {1: 50_000.0, 2: 0.0, 3: 700.0, 4: 9_000.0}
    assert assign(subs, costs) == {INITIAL: 2, JOIN_1: 3, JOIN_2: 4}
    # costs within replace_margin_us (2000) of the cheapest are noise: the order decides
    idle = {1: 1_500.0, 2: 0.0, 3: 40.0, 4: 9_000.0}
    assert assign(subs, idle) == {INITIAL: 1, JOIN_1: 2, JOIN_2: 3}


def test_replacement_needs_the_margin_and_the_dwell():
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, 2)]
    subs[1].pinned_at = 10.0
    # path 3 (free) beats path 2 by 20 %: under the 25 % margin, nobody moves
    costs = {1: 10_000.0, 2: 100_000.0, 3: 80_000.0}
    assert assign(subs, costs, now=20.0, params=MPTCP_DEFAULTS)[JOIN_1] == 2
    # by 40 %: JOIN_1 moves, but not before min_dwell_s after its last move
    costs[3] = 60_000.0
    assert assign(subs, costs, now=14.9, params=MPTCP_DEFAULTS)[JOIN_1] == 2
    assert assign(subs, costs, now=15.0, params=MPTCP_DEFAULTS)[JOIN_1] == 3
    # the absolute margin: 1000 µs better is noise on a near-idle path
    small = {1: 0.0, 2: 2_500.0, 3: 1_500.0}
    assert assign(subs, small, now=20.0, params=MPTCP_DEFAULTS)[JOIN_1] == 2
    # a target must hold fewer of the connection's subflows: path 1 is cheaper but taken
    assert assign(subs, {1: 0.0, 2: 100_000.0}, now=20.0, params=MPTCP_DEFAULTS)[JOIN_1] == 2


# ---- shared links (a fabric's paths of one pair) ------------------------------------------

# paths 2 and 3 share link "ax" (20 Mbit/s) ahead of their 10 Mbit/s bottlenecks; path 4
# shares "ay", which is its own bottleneck, with path 5 (5 Mbit/s, slower still); 1 is alone
SHARED_PATHS = {
    1: [("a1", 10.0), ("1c", 10.0)],
    2: [("ax", 20.0), ("x2", 10.0), ("2c", 10.0)],
    3: [("ax", 20.0), ("x3", 10.0), ("3c", 10.0)],
    4: [("ay", 8.0), ("y4", 10.0)],
    5: [("ay", 8.0), ("y5", 5.0), ("5c", None)],
}


def test_overlap_is_the_tightest_shared_link_against_the_path_s_bottleneck():
    got = path_overlaps(SHARED_PATHS)
    assert got == {(2, 3): 0.5, (3, 2): 0.5, (4, 5): 1.0, (5, 4): 5.0 / 8.0}
    # a shared link without a rate limits nothing
    assert path_overlaps({1: [("s", None), ("b", 1.0)], 2: [("s", None)]}) == {}


def test_occupancy_weighs_the_subflows_on_overlapping_paths():
    overlaps = path_overlaps(SHARED_PATHS)
    counts = Counter({2: 1, 4: 2})
    assert occupancy(1, counts, overlaps) == 0.0
    assert occupancy(2, counts, overlaps) == 1.0
    assert occupancy(3, counts, overlaps) == 0.5
    assert occupancy(5, counts, overlaps) == 2 * 5.0 / 8.0
    assert occupancy(3, counts) == 0  # no overlaps: the subflows on the path itself


def test_a_new_subflow_prefers_a_disjoint_path_to_a_cheaper_overlapping_one():
    overlaps = path_overlaps(SHARED_PATHS)
    order = {2: 100.0, 3: 200.0, 1: 50_000.0}
    assert choose_path(order, Counter({2: 1}), overlaps=overlaps) == 1
    # all three taken once: the least occupied again (1: nothing shared), then the cheapest
    assert choose_path(order, Counter({1: 1, 2: 1, 3: 1}), overlaps=overlaps) == 1
    subs = [sub(INITIAL, None, True), sub(JOIN_1, None), sub(JOIN_2, None)]
    costs = {2: 100.0, 3: 200.0, 1: 50_000.0}
    assert assign(subs, costs, overlaps=overlaps) == {INITIAL: 2, JOIN_1: 1, JOIN_2: 3}
    # without overlaps the same costs put the second subflow on path 3 (cost decides)
    assert assign(subs, costs) == {INITIAL: 2, JOIN_1: 3, JOIN_2: 1}


def test_a_clearly_more_distinct_path_takes_a_subflow_whatever_the_costs():
    overlaps = path_overlaps(SHARED_PATHS)
    costs = {1: 90_000.0, 2: 10_000.0, 3: 10_000.0}
    counts = Counter({2: 1, 3: 1})
    # the subflow on 3 shares "ax" with 2's (occupancy 0.5 without itself); 1 is free and
    # disjoint (0): lower by DISTINCT_GAIN, so it moves though 1 costs 9 times as much
    assert replace_target(3, costs, costs, counts, PARAMS, overlaps) == 1
    # path 3 alone (no subflow on 2): no path is more distinct, and 1 is no cheaper
    assert replace_target(3, costs, costs, Counter({3: 1}), PARAMS, overlaps) is None
    # the dwell holds it, as it holds a move for cost
    subs = [sub(INITIAL, 2, True), sub(JOIN_1, 3)]
    for s in subs:
        s.pinned_at = 10.0
    assert assign(subs, costs, now=12.0, params=MPTCP_DEFAULTS, overlaps=overlaps) == {
        INITIAL: 2, JOIN_1: 3}
    # one of the two moves (the first considered), the other stays: both are then alone
    assert assign(subs, costs, now=15.0, params=MPTCP_DEFAULTS, overlaps=overlaps) == {
        INITIAL: 1, JOIN_1: 3}


def test_a_partial_overlap_below_the_gain_moves_only_for_cost():
    overlaps = {(2, 3): 0.4, (3, 2): 0.4}
    counts = Counter({2: 1, 3: 1})
    costs = {1: 10_000.0, 2: 10_000.0, 3: 10_000.0}
    assert replace_target(3, costs, costs, counts, PARAMS, overlaps) is None
    cheaper = {**costs, 1: 5_000.0}
    assert replace_target(3, cheaper, cheaper, counts, PARAMS, overlaps) == 1
