"""The pieces of subflow placement on their own (controller/scheduling/mptcp_placement.py);
`assign` and the tracker over time are in tests/test_mptcp.py."""

from __future__ import annotations

from collections import Counter

from mpsched.controller.policies.base import CaCost
from mpsched.controller.scheduling.mptcp_placement import (
    MptcpParams,
    choose_path,
    expected_costs,
    pin_cost,
    replace_target,
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
