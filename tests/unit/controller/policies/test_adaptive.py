"""The `adaptive` policy (QoS-MPTCP; docs/scheduling.md): Gaussian context memberships, Beta
posteriors against hand-computed values, the choice with bounded exploration and damping, the
dwell's outcome, delegation to the arms, learned tables kept across changes and restarts."""

from __future__ import annotations

import math
import random

import pytest

from mpsched.controller.errors import FieldError
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.adaptive import (
    Adaptive,
    AdaptiveParams,
    Measured,
    PathTally,
    parse_arms,
    score,
    summarise,
)
from mpsched.controller.policies.adaptive_bayes import BetaTable, choose
from mpsched.controller.policies.adaptive_context import (
    Level,
    context,
    discretise,
    parse_levels,
)
from mpsched.controller.policies.base import Mode, PathCounters, PathState, QosTarget
from mpsched.controller.scheduling.classes import (
    ClassPolicy,
    TrafficClass,
    class_from_dict,
    class_to_dict,
)
from mpsched.controller.scheduling.scheduler import Scheduler, SwitchView

# -- context: Gaussian memberships (eq. 6) ----------------------------------------------------

LOSS = parse_levels("low:0:0.003,mid:0.01:0.005,high:0.05:0.03", "loss_levels")


def test_membership_is_eq_6():
    lv = Level("mid", 0.01, 0.005, 0.5)
    # g(x) = k · exp(-((x - mu) / sigma)^2): at x = 0.015, ((0.005) / 0.005)^2 = 1
    assert lv.membership(0.015) == pytest.approx(0.5 * math.exp(-1))
    assert lv.membership(0.01) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("x", "level"),
    [
        (0.0, "low"),
        (0.002, "low"),  # low exp(-0.444) = 0.64 > mid exp(-2.56) = 0.077
        (0.005, "mid"),  # low exp(-2.78) = 0.062 < mid exp(-1) = 0.37
        (0.02, "high"),  # mid exp(-4) = 0.018 < high exp(-1) = 0.37
        (0.9, "high"),  # far from every centre: still the nearest (log memberships)
        (None, "low"),  # not measured: the lowest level
    ],
)
def test_discretise_takes_the_largest_membership(x, level):
    assert discretise(x, LOSS) == level


def test_k_is_normalised_by_the_largest_and_weighs_in():
    levels = parse_levels("a:0:1:0.5,b:2:1:0.25", "f")
    assert [lv.k for lv in levels] == [1.0, 0.5]
    # at x = 1 both exponents are -1: k decides (a)
    assert discretise(1.0, levels) == "a"


JITTER = parse_levels("low:0:1,mid:3:2,high:10:6", "jitter_levels")


@pytest.mark.parametrize(
    ("x", "held", "level"),
    [
        # ln g: mid -((x - 3) / 2)², high -((x - 10) / 6)²; argmax changes at 4.75 ms
        (5.0, "mid", "mid"),  # high by 1 - 0.694 = 0.31 <= 1: held
        (5.8, "mid", "high"),  # mid -1.96, high -0.49: by 1.47 > 1
        (4.0, "high", "high"),  # mid -0.25, high -1.0: by 0.75 <= 1
        (3.5, "high", "mid"),  # mid -0.0625, high -1.174: by 1.11 > 1
        (5.0, None, "high"),  # nothing held: the argmax
        (5.0, "gone", "high"),  # a level the parameters no longer have
    ],
)
def test_hysteresis_keeps_the_held_level_near_a_boundary(x, held, level):
    assert discretise(x, JITTER, held, hysteresis=1.0) == level
    assert discretise(x, JITTER, held) == ("mid" if x < 4.75 else "high")  # h = 0: argmax


def test_the_context_moves_its_levels_with_hysteresis():
    def paths(jitter_ms: float) -> list[PathState]:
        return [PathState(1, True, rttvar_ms=jitter_ms), PathState(2, True, rttvar_ms=0.0)]

    first = context(paths(6.0), _levels(), "set", None, 1.0)
    assert first.levels["jitter"] == "high" and first.paths[1]["jitter"] == "high"
    near = context(paths(4.2), _levels(), "set", first, 1.0)  # argmax mid, by 0.57
    assert near.key == first.key and near.paths[1]["jitter"] == "high"
    assert context(paths(4.2), _levels(), "set", first).levels["jitter"] == "mid"  # no h
    assert context(paths(3.0), _levels(), "set", near, 1.0).levels["jitter"] == "mid"


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ("", "at least one level"),
        ("low:0", "name:centre:width"),
        ("low:x:1", "numbers expected"),
        ("low:0:0", "width must be > 0"),
        ("low:0:1:2", "k must be in (0, 1]"),
        ("low:0:1,low:1:1", "given twice"),
        ("low:nan:1", "finite"),
    ],
)
def test_bad_levels_name_the_field(text, piece):
    with pytest.raises(FieldError) as err:
        make_policy("adaptive", {"loss_levels": text})
    assert err.value.field == "params.loss_levels"
    assert piece in err.value.message


def _levels() -> dict:
    p = AdaptiveParams()
    return {f: parse_levels(getattr(p, f"{f}_levels"), f) for f in ("loss", "delay", "jitter",
                                                                    "load")}


def test_context_of_the_path_set_and_per_path():
    paths = [
        PathState(1, True, loss_rate=0.0, owd_ms=2.0, goodput_mbps=4.0, capacity_mbps=10.0),
        PathState(2, True, loss_rate=0.06, owd_ms=1.0, goodput_mbps=1.0, capacity_mbps=10.0,
                  owd_series_ms=(1.0, 3.0)),  # pstdev 1.0 ms
        PathState(3, False, loss_rate=0.5),
    ]
    ctx = context(paths, _levels())
    # worst loss 0.06 -> high; worst queueing delay 2 ms -> low; worst jitter 1 ms: low
    # exp(-1) = 0.37 vs mid exp(-1) = 0.37 -> tie, the first level; load 5/20 = 0.25: low
    # exp(-0.69) = 0.50 > mid exp(-1.56) = 0.21; 2 of 3 paths alive
    assert ctx.key == "loss=high delay=low jitter=low load=low alive=2/3"
    assert ctx.paths[2] == {"loss": "high", "delay": "low", "jitter": "low", "load": "low"}
    assert ctx.paths[3] == {}
    per_path = context(paths, _levels(), "paths")
    assert per_path.key.startswith("1:loss=low,delay=low,jitter=low,load=mid 2:loss=high")
    assert per_path.key.endswith("3:dead")
    assert ctx.to_dict()["paths"]["2"]["loss"] == {"level": "high", "value": 0.06}


# -- the mapping: Beta posteriors ----------------------------------------------------------


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


def test_the_policy_discounts_with_its_parameter_and_checks_its_range():
    assert make_policy("adaptive", {}).table.discount == 1.0
    assert make_policy("adaptive", {"discount": 0.9}).table.discount == 0.9
    for bad in (0.2, 1.5, "x"):
        with pytest.raises(FieldError) as err:
            make_policy("adaptive", {"discount": bad})
        assert err.value.field == "params.discount"


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


class Rigged(random.Random):
    """random() and betavariate() answer from lists (exploration made deterministic)."""

    def __init__(self, uniforms=(), betas=None):
        super().__init__(0)
        self.uniforms = list(uniforms)
        self.betas = dict(betas or {})

    def random(self):
        return self.uniforms.pop(0)

    def randrange(self, n):
        return 0

    def betavariate(self, alpha, beta):
        return self.betas[(alpha, beta)]


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


# -- the outcome of a dwell --------------------------------------------------------------


def test_summarise_weighs_loss_by_bytes_and_delay_by_delivery():
    tallies = {
        1: PathTally(packets=1000, bytes=1_000_000, lost=0, ooo=10, owd_sum=20.0, owd_n=10),
        2: PathTally(packets=100, bytes=5_000, lost=20, ooo=0, owd_sum=300.0, owd_n=10),
    }
    m = summarise(tallies, seconds=2.0, capacity_mbps=10.0)
    assert m.goodput_mbps == pytest.approx(8 * 1_005_000 / 2 / 1e6)  # 4.02
    assert m.goodput_frac == pytest.approx(0.402)
    # lost bytes: 20 packets * 50 bytes = 1000 -> 1000 / (1_005_000 + 1000)
    assert m.loss == pytest.approx(1000 / 1_006_000)
    assert m.reorder == pytest.approx(10 / 1100)
    # delay: (2 ms * 1e6 + 30 ms * 5e3) / 1.005e6
    assert m.delay_ms == pytest.approx((2 * 1_000_000 + 30 * 5_000) / 1_005_000)


def test_score_graded_and_met():
    m = Measured(2.0, 8.0, 0.8, 30.0, 0.02, 0.0)
    target = QosTarget(min_goodput_frac=0.9, max_delay_ms=20.0, max_loss=0.01, max_reorder=0.01)
    u, met, terms = score(m, target, graded=True)
    assert terms == pytest.approx(
        {"goodput_frac": 0.8 / 0.9, "delay_ms": 20 / 30, "loss": 0.5, "reorder": 1.0}
    )
    assert u == pytest.approx(0.8 / 0.9 * 2 / 3 * 0.5) and met is False
    assert score(m, target, graded=False)[0] == 0.0
    easy = QosTarget(min_goodput_frac=0.5, max_loss=0.05)
    assert score(m, easy, graded=False)[:2] == (1.0, True)
    # an unmeasured metric does not count
    assert score(Measured(2.0, 8.0, None, None, None, None), target, True)[0] == 1.0


# -- the policy over periods ----------------------------------------------------------------


class Feed:
    """PathStates of two 10 Mbit/s paths whose egress counters advance each period: `rate`
    packets of 1250 bytes per period on every weighted path (in mode ca, as the switch
    would choose: only on the weighted paths of least loss), and `loss` of them lost."""

    def __init__(self):
        self.t = 1000.0
        self.totals = {1: [0, 0, 0, 0], 2: [0, 0, 0, 0]}
        self.loss = {1: 0.0, 2: 0.0}

    def step(self, decision=None, rate: int = 100):
        self.t += 0.1
        used = {1, 2} if decision is None else {p for p, w in decision.weights.items() if w > 0}
        if decision is not None and decision.mode == Mode.CA:
            least = min(self.loss[p] for p in used)
            used = {p for p in used if self.loss[p] == least}
        out = []
        for pid in (1, 2):
            tot = self.totals[pid]
            if pid in used:
                lost = round(rate * self.loss[pid])
                tot[0] += rate - lost
                tot[1] += (rate - lost) * 1250
                tot[2] += lost
            out.append(PathState(
                pid, True, srtt_ms=20.0, capacity_mbps=10.0, goodput_mbps=5.0,
                loss_rate=self.loss[pid], owd_ms=1.0,
                counters=PathCounters(self.t, tot[0], tot[1], tot[2], tot[3]),
            ))
        return out


def run(policy: Adaptive, feed: Feed, periods: int, rate: int = 100):
    decision = None
    for _ in range(periods):
        paths = feed.step(decision, rate)
        decision = policy.decide(paths, feed.t)
    return decision


PARAMS = {"arms": "ecmp,ca", "exploration": "epsilon", "epsilon": 0.0, "dwell_periods": 4,
          "settle_periods": 1, "min_dwell_periods": 2, "context_hold_periods": 2, "pool": 0.0,
          "target_min_goodput_frac": None, "target_max_reorder": None, "target_max_loss": 0.01,
          "outcome": "met", "prior": "flat"}


def test_the_class_switches_arm_when_a_path_turns_lossy():
    policy = make_policy("adaptive", PARAMS)
    feed = Feed()
    d = run(policy, feed, 1)
    assert d.mode == Mode.HASH and "arm ecmp (greedy; dwell 0/4)" in d.reason
    assert "P(met) ecmp=0.5 ca=0.5" in d.reason and "| ecmp:" in d.reason
    clean = "loss=low delay=low jitter=low load=mid alive=2/2"
    run(policy, feed, 8)  # two scored dwells of ecmp, both met: Beta(3, 1)
    assert policy.table.posterior(clean, "ecmp") == (3.0, 1.0)
    assert policy.dwell.arm.label == "ecmp"
    feed.loss[2] = 0.2  # path 2 turns lossy: 20 of its 100 packets per period
    lossy = "loss=high delay=low jitter=low load=mid alive=2/2"
    # the context holds after 2 periods; the dwell ends early (not scored), ecmp is tried in
    # the new context (0.5 = 0.5, arm order), loses 20 / 200 by bytes > 1 %: Beta(1, 2);
    # then ca (0.5 > 1/3) keeps its flowlets off the lossy path and meets it: Beta(2, 1)
    run(policy, feed, 12)
    assert policy.table.posterior(lossy, "ecmp") == (1.0, 2.0)
    assert policy.table.posterior(lossy, "ca") == (2.0, 1.0)
    assert policy.table.posterior(clean, "ecmp") == (3.0, 1.0)  # the old context kept
    d = run(policy, feed, 1)
    assert policy.dwell.arm.label == "ca" and d.mode == Mode.CA
    assert f"context {lossy}" in d.reason
    assert policy.switches == 1
    assert policy.view()["context_changes"] == {"key": 1, "stable": 1}
    history = policy.view()["history"]
    assert any(h.get("why", "").startswith("context changed") for h in history)
    assert [(h["arm"], h["met"]) for h in history if h["scored"]] == [
        ("ecmp", True), ("ecmp", True), ("ecmp", False), ("ca", True)
    ]


def test_a_context_flapping_for_less_than_the_hold_keeps_the_dwell():
    """Path 2's loss flips between 0 and 20 % every period: the key changes every period, the
    held key never (context_hold_periods 2), and the dwells run to their end."""
    policy = make_policy("adaptive", PARAMS)
    feed = Feed()
    decision = None
    for i in range(13):
        feed.loss[2] = 0.2 if i % 2 else 0.0
        decision = policy.decide(feed.step(decision), feed.t)
    assert policy.view()["context_changes"] == {"key": 12, "stable": 0}
    assert [h["periods"] for h in policy.view()["history"]] == [4, 4, 4]


def test_an_idle_dwell_is_not_scored():
    policy = make_policy("adaptive", PARAMS)
    feed = Feed()
    run(policy, feed, 9, rate=0)
    assert policy.table.cells == {}
    assert all(not h["scored"] and h["why"].startswith("idle") for h in policy.view()["history"])


def test_lm3_arms_run_lm3_on_the_arms_decision():
    policy = make_policy("adaptive", {**PARAMS, "arms": "llhd+lm3"})
    d = run(policy, Feed(), 2)
    assert "| lm3: active [1, 2]" in d.reason and d.mode == Mode.FLOWLET


def test_arms_parse_with_parameters_and_errors_name_the_arm():
    arms = parse_arms("ecmp, llhd+lm3:beta=0.01;weighted=false, qos-ca:max_loss=0.02")
    assert [a.label for a in arms] == [
        "ecmp", "llhd+lm3:beta=0.01;weighted=false", "qos-ca:max_loss=0.02"
    ]
    assert arms[1].lm3 and dict(arms[1].params) == {"beta": 0.01, "weighted": False}
    policy, lm3 = arms[1].make()
    assert policy.params.beta == 0.01 and lm3 is not None
    for spec, piece in [
        ("nope", "no policy 'nope'"),
        ("adaptive", "no policy 'adaptive'"),
        ("llhd:beta=-1", "arm 'llhd:beta=-1': beta: must be >= 0"),
        ("llhd:beta", "is not key=value"),
        ("ecmp,ecmp", "given twice"),
    ]:
        with pytest.raises(FieldError) as err:
            make_policy("adaptive", {"arms": spec})
        assert err.value.field == "params.arms" and piece in err.value.message
    with pytest.raises(FieldError) as err:
        make_policy("adaptive", {"dwell_periods": 3, "settle_periods": 3})
    assert err.value.field == "params.settle_periods"
    with pytest.raises(FieldError) as err:
        make_policy("adaptive", {"exploration": "greedy"})
    assert err.value.field == "params.exploration"


def test_learned_table_survives_a_new_instance_but_not_another_discretisation():
    policy = make_policy("adaptive", PARAMS)
    run(policy, Feed(), 9)
    data = policy.learned()
    fresh = make_policy("adaptive", {**PARAMS, "epsilon": 0.2})
    fresh.restore_learned(data, "learned.0.s1")
    assert fresh.table.to_json() == policy.table.to_json()
    other = make_policy("adaptive", {**PARAMS, "loss_levels": "low:0:0.01,high:0.1:0.05"})
    other.restore_learned(data, "learned.0.s1")
    assert other.table.cells == {}
    with pytest.raises(FieldError) as err:
        fresh.restore_learned({**data, "table": {"version": 9}}, "learned.0.s1")
    assert err.value.field == "learned.0.s1.table.version"


# -- in the scheduler ----------------------------------------------------------------------


def _adaptive_class(target=None) -> TrafficClass:
    return TrafficClass(0, "default", policy=ClassPolicy("adaptive", PARAMS), qos_target=target)


def test_the_class_target_reaches_the_policy_and_the_table_outlives_changes():
    target = QosTarget(max_loss=0.05)
    sched = Scheduler(["s1"], [1, 2], [_adaptive_class(target)])
    policy = sched.policy_of("s1", 0)
    assert policy.effective_target() == (target, "class")
    feed = Feed()
    for _ in range(9):
        sched.step(SwitchView("s1", feed.step(None), {}), feed.t)
    learned = sched.learned()
    assert list(learned) == ["0"] and learned["0"]["s1"]["table"]["contexts"]
    # a parameter change makes a new instance; it takes the table over
    sched.set_class_policy(0, {"params": {**PARAMS, "epsilon": 0.3}})
    assert sched.policy_of("s1", 0) is not policy
    assert sched.learned() == learned
    # a new target alone keeps the instance and tells it
    sched.set_classes([_adaptive_class(QosTarget(max_loss=0.2))])
    assert sched.policy_of("s1", 0).effective_target()[0].max_loss == 0.2
    sched.set_classes([_adaptive_class(None)])
    assert sched.policy_of("s1", 0).effective_target()[1] == "default"
    again = Scheduler(["s1"], [1, 2], [_adaptive_class()])
    again.restore_learned(learned)
    assert again.learned() == learned
    bad = {**learned["0"]["s1"], "table": 1}
    with pytest.raises(FieldError) as err:
        again.restore_learned({"0": {"s1": bad}})
    assert err.value.field == "learned.0.s1.table"
    again.restore_learned({"9": {"s1": bad}, "0": {"s7": bad}})  # gone: skipped


def test_a_program_without_congestion_refuses_ca_arms():
    with pytest.raises(FieldError) as err:
        Scheduler(["s1"], [1, 2], [_adaptive_class()], ca_supported=False)
    assert err.value.field == "classes[0].policy.name"
    ok = TrafficClass(0, "default", policy=ClassPolicy("adaptive", {"arms": "ecmp,llhd"}))
    Scheduler(["s1"], [1, 2], [ok], ca_supported=False)


def test_qos_target_is_validated_and_serialised_with_the_class():
    c = class_from_dict({"id": 0, "name": "default",
                         "qos_target": {"max_loss": 0.01, "min_goodput_frac": 1}})
    assert c.qos_target == QosTarget(min_goodput_frac=1.0, max_loss=0.01)
    assert class_to_dict(c)["qos_target"] == {
        "min_goodput_frac": 1.0, "max_delay_ms": None, "max_loss": 0.01, "max_reorder": None
    }
    assert class_from_dict({"id": 0, "name": "d", "qos_target": {}}).qos_target is None
    assert class_to_dict(class_from_dict({"id": 0, "name": "d"}))["qos_target"] is None
    for bad, field in [
        ({"max_loss": 2}, "max_loss"),
        ({"max_loss": True}, "max_loss"),
        ({"max_delay_ms": -1}, "max_delay_ms"),
        ({"min_goodput": 0.5}, "min_goodput"),
    ]:
        with pytest.raises(FieldError) as err:
            class_from_dict({"id": 0, "name": "d", "qos_target": bad}, "classes[0]")
        assert err.value.field == f"classes[0].qos_target.{field}"
    with pytest.raises(FieldError) as err:
        class_from_dict({"id": 0, "name": "d", "qos_target": [1]}, "classes[0]")
    assert err.value.field == "classes[0].qos_target"


def test_no_exploration_while_the_current_arm_meets_the_target():
    t = BetaTable()
    t.stats("x").dwells = 10
    rng = Rigged(betas={(1.0, 1.0): 0.9, (2.0, 1.0): 0.1})
    t.update("x", "ecmp", 1.0)
    c = choose(t, "x", ["ecmp", "llhd"], "ecmp", rng, "thompson", max_explore_frac=1.0,
               explore=False)
    assert (c.arm, c.explored, c.note, c.samples) == ("ecmp", False, "greedy, no exploration",
                                                      {})
    assert (t.stats("x").dwells, t.stats("x").explored) == (11, 0)
    c = choose(t, "x", ["ecmp", "llhd"], "ecmp", rng, "thompson", max_explore_frac=1.0)
    assert (c.arm, c.explored) == ("llhd", True)  # drawn 0.9 > 0.1


@pytest.mark.parametrize(("explore_when", "explored"), [("unmet", False), ("always", True)])
def test_explore_when_unmet_holds_back_after_a_met_dwell(explore_when, explored):
    params = {**PARAMS, "exploration": "epsilon", "epsilon": 1.0, "max_explore_frac": 1.0,
              "explore_when": explore_when}
    policy = make_policy("adaptive", params)
    feed = Feed()
    # the first choice has no evidence: it explores (ε = 1), ca; its dwell meets the target
    run(policy, feed, 5)
    assert [(h["arm"], h["explored"], h["met"]) for h in policy.view()["history"]] == [
        ("ca", True, True)]
    # then "unmet" keeps the greedy ca without exploring; "always" explores ecmp again
    assert policy.dwell.choice.explored is explored
    assert policy.dwell.arm.label == ("ecmp" if explored else "ca")
