"""src/mpsched/controller/policies/adaptive_bayes.py: Beta posteriors against hand-computed values
(pooling,
the context prior, discounting), the choice with bounded exploration and damping, the table's
JSON form."""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies.adaptive_bayes import BetaTable, choose
from tests.unit.controller.policies.helpers import Rigged


def test_posterior_is_the_conjugate_update():
    t = BetaTable(alpha0=1.0, beta0=1.0)
    t.update("c", "ecmp", 1.0)
    t.update("c", "ecmp", 0.0)
    t.update("c", "ecmp", 0.5)
    # alpha = 1 + 1 + 0 + 0.5 = 2.5, beta = 1 + 0 + 1 + 0.5 = 2.5
    assert t.posterior("c", "ecmp") == (2.5, 2.5)
    t.update("c", "ecmp", 1.0)
    assert t.mean("c", "ecmp") == pytest.approx(3.5 / 6)
    assert t.posterior("c", "llhd") == (1.0, 1.0)  # untried: the prior
    with pytest.raises(ValueError):
        t.update("c", "ecmp", 1.5)


def test_pooling_borrows_a_fraction_of_the_other_contexts():
    t = BetaTable(alpha0=2.0, beta0=1.0, pool=0.5)
    for u in (1.0, 1.0, 0.0):
        t.update("other", "ca", u)
    t.update("here", "ca", 0.0)
    t.update("third", "ca", 1.0)
    # alpha = 2 + 0 + 0.5 * (2 + 1) = 3.5, beta = 1 + 1 + 0.5 * (1 + 0) = 2.5
    assert t.posterior("here", "ca") == (3.5, 2.5)
    assert t.mean("here", "ca") == pytest.approx(3.5 / 6)


def test_the_context_prior_is_centred_on_the_contexts_mean_outcome():
    t = BetaTable(alpha0=1.0, beta0=1.0, prior="context")
    assert t.posterior("c", "ecmp") == (1.0, 1.0)  # nothing scored in c: (alpha0, beta0)
    t.update("c", "ecmp", 0.2)
    t.update("c", "ca", 0.4)
    # m = (0.2 + 0.4) / 2 = 0.3, strength 2: base (0.6, 1.4)
    assert t.base("c") == pytest.approx((0.6, 1.4))
    assert t.posterior("c", "llhd") == pytest.approx((0.6, 1.4))  # untried: the centred prior
    assert t.posterior("c", "ca") == pytest.approx((1.0, 2.0))  # 0.6 + 0.4, 1.4 + 0.6
    assert t.mean("c", "ca") > t.mean("c", "llhd") > t.mean("c", "ecmp")
    t.update("d", "ecmp", 0.0)  # clamped: m = 0.02
    assert t.base("d") == pytest.approx((0.04, 1.96))
    assert BetaTable(prior="flat", cells=t.cells).base("c") == (1.0, 1.0)


def test_discounting_scales_the_contexts_evidence_before_each_update():
    t = BetaTable(alpha0=1.0, beta0=1.0, discount=0.5)
    t.update("c", "a", 1.0)
    t.update("c", "b", 0.0)  # a: s 1 -> 0.5; b: f = 1
    t.update("c", "a", 1.0)  # a: s 0.5 -> 0.25 + 1 = 1.25; b: f 1 -> 0.5
    t.update("d", "a", 0.0)  # another context: c untouched
    assert t.posterior("c", "a") == pytest.approx((2.25, 1.0))
    assert t.posterior("c", "b") == pytest.approx((1.0, 1.5))
    assert t.cells["c"]["a"].n == 2  # n counts dwells, undiscounted
    # the centred prior uses the discounted outcomes: m = 1.25 / (1.25 + 0.5)
    centred = BetaTable(prior="context", discount=0.5, cells=t.cells)
    assert centred.base("c") == pytest.approx((2 * 1.25 / 1.75, 2 * 0.5 / 1.75))


def test_with_discounting_a_recent_failure_outweighs_an_old_record():
    """Ten good dwells of one arm, then three bad (0.2): stationary, the old record keeps its
    mean above 0.7 and its posterior tight; discounted (gamma = 0.7), the mean follows the recent
    outcomes and the evidence stays below 1 / (1 - gamma) dwells, so Thompson draws spread."""
    for discount, mean_above, strength_max in ((1.0, 0.7, 16.0), (0.7, None, 2 + 1 / 0.3)):
        t = BetaTable(discount=discount)
        for _ in range(10):
            t.update("c", "fd", 1.0)
        for _ in range(3):
            t.update("c", "fd", 0.2)
        alpha, beta = t.posterior("c", "fd")
        assert alpha + beta <= strength_max + 1e-9, discount
        if mean_above is not None:
            assert t.mean("c", "fd") > mean_above
        else:
            # s = (1 - 0.7¹⁰) / 0.3 · 0.7³ + 0.2 (0.49 + 0.7 + 1) = 1.5490, f = 0.8 · 2.19 = 1.752
            assert (alpha, beta) == pytest.approx((2.5490, 2.752), abs=1e-3)
            assert t.mean("c", "fd") < 0.5


def test_with_the_context_prior_low_outcomes_do_not_walk_the_arm_list():
    """Every arm scores 0.1 (a target nothing meets here): with a flat prior each arm tried
    falls below the untried ones' 0.5 and the greedy choice moves on; centred, it stays."""
    arms = ["ecmp", "llhd", "ca", "wcmp"]
    for prior, expected in (("flat", arms), ("context", ["ecmp"] * 4)):
        t = BetaTable(prior=prior)
        chosen, current = [], None
        for _ in range(4):
            c = choose(t, "x", arms, current, Rigged([0.9]), "epsilon", epsilon=0.0)
            chosen.append(c.arm)
            current = c.arm
            t.update("x", c.arm, 0.1)
        assert chosen == expected, prior


def test_greedy_choice_ties_by_arm_order_and_damping_keeps_the_current_arm():
    t = BetaTable()
    arms = ["ecmp", "llhd", "ca"]
    c = choose(t, "x", arms, None, Rigged([0.9]), "epsilon", epsilon=0.1)
    assert (c.arm, c.explored, c.note) == ("ecmp", False, "greedy")  # all 0.5: first arm
    t.update("x", "llhd", 1.0)  # llhd 2/3
    t.update("x", "ca", 1.0)
    t.update("x", "ca", 0.6)  # ca (1 + 1.6) / 4 = 0.65
    c = choose(t, "x", arms, "ca", Rigged([0.9]), "epsilon", margin=0.05)
    assert (c.arm, c.note) == ("ca", "kept (margin)")  # 0.667 - 0.65 <= 0.05
    c = choose(t, "x", arms, "ca", Rigged([0.9]), "epsilon", margin=0.01)
    assert (c.arm, c.note) == ("llhd", "greedy")
    assert c.means == pytest.approx({"ecmp": 0.5, "llhd": 2 / 3, "ca": 0.65})


def test_epsilon_exploration_is_visible_and_bounded():
    t = BetaTable()
    arms = ["ecmp", "llhd"]
    stats = t.stats("x")
    stats.dwells = 9
    # (0 + 1) <= 0.25 * (9 + 1): within the budget; 0.05 < epsilon 0.1: explore
    c = choose(t, "x", arms, "ecmp", Rigged([0.05]), "epsilon", epsilon=0.1,
               max_explore_frac=0.25)
    assert (c.arm, c.greedy, c.explored, c.note) == ("llhd", "ecmp", True, "epsilon")
    assert (t.stats("x").dwells, t.stats("x").explored) == (10, 1)
    # (1 + 1) <= 0.25 * (10 + 1) = 2.75: once more
    c = choose(t, "x", arms, "ecmp", Rigged([0.05]), "epsilon", max_explore_frac=0.25)
    assert c.explored
    # (2 + 1) <= 0.25 * 12 = 3: still; then (3 + 1) <= 3.25 is not: budget spent
    choose(t, "x", arms, "ecmp", Rigged([0.05]), "epsilon", max_explore_frac=0.25)
    c = choose(t, "x", arms, "ecmp", Rigged([0.05]), "epsilon", max_explore_frac=0.25)
    assert (c.arm, c.explored, c.note) == ("ecmp", False, "budget spent")


def test_thompson_takes_the_largest_draw_from_each_posterior():
    t = BetaTable()
    t.update("x", "ecmp", 1.0)  # Beta(2, 1), mean 2/3: the greedy arm
    rng = Rigged(betas={(2.0, 1.0): 0.6, (1.0, 1.0): 0.8})
    t.stats("x").dwells = 10
    c = choose(t, "x", ["ecmp", "llhd"], "ecmp", rng, "thompson", max_explore_frac=1.0)
    assert (c.arm, c.explored, c.note) == ("llhd", True, "thompson")
    assert c.samples == {"ecmp": 0.6, "llhd": 0.8}


def test_table_json_round_trip_and_errors_name_the_field():
    t = BetaTable()
    t.update("c1", "ecmp", 0.25)
    t.stats("c1").dwells = 3
    t.stats("c2").explored = 0
    again = BetaTable()
    again.load_json(t.to_json(), "learned")
    assert again.posterior("c1", "ecmp") == (1.25, 1.75)
    assert again.stats("c1").dwells == 3 and "c2" in again.contexts
    bad = t.to_json()
    bad["contexts"]["c1"]["arms"]["ecmp"]["s"] = -1
    with pytest.raises(FieldError) as err:
        again.load_json(bad, "learned.0.s1.table")
    assert err.value.field == "learned.0.s1.table.contexts.c1.arms.ecmp.s"
    only = BetaTable()
    only.load_json(t.to_json(), "t", arms=["llhd"])
    assert only.cells == {}
