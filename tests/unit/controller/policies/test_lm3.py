"""LM3: R_p, halving, one after three, reset, re-admission; hand-computed."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import Decision, Mode, VqPathParams
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.lm3 import Lm3, Lm3Params, quality

# window stand-in bdp = capacity * srtt * 125: 12500, 25000, 10000 -> H_min 10000, H_max 25000
# srtt 10, 20, 40 -> Pi_min 10, Pi_max 40
#   R_1 = 0.5 * (12500 - 10000) / 15000 + 0.5 * (40 - 10) / 30 = 0.08333 + 0.5 = 0.58333
#   R_2 = 0.5 * 1 + 0.5 * (40 - 20) / 30 = 0.5 + 0.33333 = 0.83333
#   R_3 = 0.5 * 0 + 0.5 * 0 = 0
THREE = [
    PathState(1, True, srtt_ms=10.0, capacity_mbps=10.0),
    PathState(2, True, srtt_ms=20.0, capacity_mbps=10.0),
    PathState(3, True, srtt_ms=40.0, capacity_mbps=2.0),
]


def equal(ids):
    return Decision(weights={i: 1.0 for i in ids}, mode=Mode.FLOWLET, scores={}, reason="policy")


def test_quality():
    assert quality(THREE, Lm3Params()) == pytest.approx({1: 7 / 12, 2: 5 / 6, 3: 0.0})
    # inflight as the stand-in: 1000 / 3000 / 2000 -> cwnd_norm 0, 1, 0.5
    paths = [
        PathState(1, True, srtt_ms=10.0, inflight_bytes=1000),
        PathState(2, True, srtt_ms=10.0, inflight_bytes=3000),
        PathState(3, True, inflight_bytes=2000),
    ]
    # srtt range 0 or unknown -> rtt_norm 0.5
    r = quality(paths, Lm3Params(window_source="inflight"))
    assert r == pytest.approx({1: 0.25, 2: 0.75, 3: 0.5})


def test_no_blocking_keeps_all():
    lm3 = Lm3()
    d = lm3.apply(THREE, equal([1, 2, 3]), 0, 0.0)
    assert lm3.active == {1, 2, 3}
    assert d.weights == {1: 1.0, 2: 1.0, 3: 1.0}
    assert d.reason.startswith("policy | lm3: active [1, 2, 3]")


def test_halving_then_one_after_three_and_reset():
    lm3 = Lm3()
    # event 1: 3 paths -> keep ceil(3/2) = 2, the better half by R: 2 (0.83), 1 (0.58)
    d = lm3.apply(THREE, equal([1, 2, 3]), 1, 0.0)
    assert lm3.active == {1, 2} and lm3.buf_bloc_count == 1
    assert d.weights == {1: 1.0, 2: 1.0, 3: 0.0}
    # event 2: 2 -> 1 (path 2)
    lm3.apply(THREE, equal([1, 2, 3]), 1, 1.0)
    assert lm3.active == {2} and lm3.buf_bloc_count == 2
    # event 3: one path, count reset to 0
    lm3.apply(THREE, equal([1, 2, 3]), 5, 2.0)
    assert lm3.active == {2} and lm3.buf_bloc_count == 0


def test_one_after_three_with_four_paths():
    four = [*THREE, PathState(4, True, srtt_ms=15.0, capacity_mbps=10.0)]
    lm3 = Lm3()
    # the period of an event does not re-admit, so the set only shrinks: 4 -> 2 -> 1 -> 1
    for expected_len, count in ((2, 1), (1, 2), (1, 0)):
        lm3.apply(four, equal([1, 2, 3, 4]), 1, 0.0)
        assert (len(lm3.active), lm3.buf_bloc_count) == (expected_len, count)


def test_readmission():
    lm3 = Lm3()
    lm3.apply(THREE, equal([1, 2, 3]), 1, 0.0)
    lm3.apply(THREE, equal([1, 2, 3]), 1, 1.0)
    assert lm3.active == {2}
    # no event: mean R of {2} = 0.833; R_1 = 0.583 and R_3 = 0 stay out
    lm3.apply(THREE, equal([1, 2, 3]), 0, 2.0)
    assert lm3.active == {2}
    # path 1 becomes fast and wide: bdp 30 * 10 * 125 = 37500 -> H 10000..37500
    #   R_1 = 0.5 * 1 + 0.5 * 1 = 1.0; R_2 = 0.5 * 15000 / 27500 + 0.5 * 20 / 30 = 0.606
    better = [PathState(1, True, srtt_ms=10.0, capacity_mbps=30.0), *THREE[1:]]
    d = lm3.apply(better, equal([1, 2, 3]), 0, 3.0)
    assert lm3.active == {1, 2}
    assert "re-admitted [1]" in d.reason


def test_dead_paths_removed_and_reset():
    lm3 = Lm3()
    lm3.apply(THREE, equal([1, 2, 3]), 1, 0.0)
    lm3.apply(THREE, equal([1, 2, 3]), 1, 1.0)
    assert lm3.active == {2}
    # path 2 dies: no active path alive -> all alive paths again, count reset
    dead2 = [THREE[0], PathState(2, False, srtt_ms=20.0, capacity_mbps=10.0), THREE[2]]
    d = lm3.apply(dead2, equal([1, 2, 3]), 0, 2.0)
    assert lm3.active == {1, 3} and lm3.buf_bloc_count == 0
    assert d.weights[2] == 0.0


def test_weights_when_policy_chose_a_removed_path_and_vq_filtered():
    lm3 = Lm3()
    lm3.apply(THREE, equal([1, 2, 3]), 1, 0.0)
    lm3.apply(THREE, equal([1, 2, 3]), 1, 1.0)  # active {2}
    vqp = VqPathParams(pad_us=0, bdp_bytes=1, us_per_kbyte=1, drain_bytes_per_ms=1)
    winner = Decision(
        weights={1: 1.0, 2: 0.0, 3: 0.0},
        mode=Mode.VQ,
        scores={},
        reason="policy",
        vq={1: vqp, 2: vqp, 3: vqp},
    )
    d = lm3.apply(THREE, winner, 0, 2.0)
    assert d.weights == {1: 0.0, 2: 1.0, 3: 0.0}
    assert set(d.vq) == {2}
    assert d.mode == Mode.VQ


def test_blocking_events_from_out_of_order_count():
    lm3 = Lm3(Lm3Params(blocking_threshold=16))
    assert lm3.blocking_events(40) == 2
    assert lm3.blocking_events(15) == 0


def test_no_path_alive_passes_through():
    dead = [PathState(1, False), PathState(2, False)]
    d = equal([1, 2])
    assert Lm3().apply(dead, d, 3, 0.0) is d


def test_a_path_that_dies_and_returns_is_active_again():
    """Flowlets: a path LM3 had active when it died comes back with its
    weight when it returns, even if its R is below the active paths' mean (path 3, R 0):
    liveness removed it, not LM3's halving."""
    lm3 = Lm3()
    assert lm3.apply(THREE, equal([1, 2, 3]), 0, 0.0).weights == {1: 1.0, 2: 1.0, 3: 1.0}
    dead3 = [*THREE[:2], PathState(3, False, srtt_ms=40.0, capacity_mbps=2.0)]
    d = lm3.apply(dead3, equal([1, 2, 3]), 0, 1.0)
    assert lm3.active == {1, 2} and d.weights[3] == 0.0
    d = lm3.apply(THREE, equal([1, 2, 3]), 0, 2.0)
    assert lm3.active == {1, 2, 3}
    assert d.weights == {1: 1.0, 2: 1.0, 3: 1.0}
    assert "returned [3]" in d.reason


def test_a_returning_path_does_not_undo_a_halving_made_while_it_was_dead():
    lm3 = Lm3()
    lm3.apply(THREE, equal([1, 2, 3]), 0, 0.0)
    dead3 = [*THREE[:2], PathState(3, False, srtt_ms=40.0, capacity_mbps=2.0)]
    lm3.apply(dead3, equal([1, 2, 3]), 0, 1.0)
    # blocking: {1, 2} -> {1} (over paths 1 and 2 alone R_1 = R_2 = 0.5: the lower id)
    lm3.apply(dead3, equal([1, 2, 3]), 1, 2.0)
    assert lm3.active == {1}
    # path 3 returns: LM3 chose the set since, so it must earn re-admission (R_3 0 < mean)
    lm3.apply(THREE, equal([1, 2, 3]), 0, 3.0)
    assert 3 not in lm3.active


def test_a_path_removed_by_halving_that_dies_and_returns_stays_removed():
    lm3 = Lm3()
    lm3.apply(THREE, equal([1, 2, 3]), 1, 0.0)  # {1, 2}: 3 removed by halving
    dead3 = [*THREE[:2], PathState(3, False, srtt_ms=40.0, capacity_mbps=2.0)]
    lm3.apply(dead3, equal([1, 2, 3]), 0, 1.0)
    lm3.apply(THREE, equal([1, 2, 3]), 0, 2.0)
    assert lm3.active == {1, 2}


@pytest.mark.parametrize("name", ["ecmp", "rr", "letflow", "wcmp", "minrtt"])
def test_baselines_give_a_returning_path_its_weight_back(name):
    """The baselines keep no state: a path that died and returned gets the weight it had."""
    from mpsched.controller.policies import REGISTRY

    policy = REGISTRY[name]()
    four = [*THREE, PathState(4, True, srtt_ms=5.0, capacity_mbps=20.0)]
    before = policy.decide(four, 0.0).weights
    assert before[4] > 0  # the fastest: every baseline uses it
    dead4 = [*THREE, PathState(4, False, srtt_ms=5.0, capacity_mbps=20.0)]
    assert policy.decide(dead4, 1.0).weights[4] == 0.0
    assert policy.decide(four, 2.0).weights == before
