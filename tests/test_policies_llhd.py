"""LLHD: gamma_p = GP_p / GP_max + beta * RTT_max / RTT_p, hand-computed."""

from __future__ import annotations

import pytest

from mpsched.controller.policies import make_policy
from mpsched.controller.policies.base import Mode, PathState
from mpsched.controller.policies.llhd import best_path, gammas

# GP (Mbit/s), srtt (ms): GP_max = 10, RTT_max = 40, beta = 0.001
#   gamma_1 = 10/10 + 0.001 * 40/20 = 1.002
#   gamma_2 =  5/10 + 0.001 * 40/10 = 0.504
#   gamma_3 =  8/10 + 0.001 * 40/40 = 0.801
THREE = [
    PathState(1, True, goodput_mbps=10.0, srtt_ms=20.0),
    PathState(2, True, goodput_mbps=5.0, srtt_ms=10.0),
    PathState(3, True, goodput_mbps=8.0, srtt_ms=40.0),
]


def test_gamma_three_paths():
    g = gammas({1: 10.0, 2: 5.0, 3: 8.0}, {1: 20.0, 2: 10.0, 3: 40.0}, beta=0.001)
    assert g == pytest.approx({1: 1.002, 2: 0.504, 3: 0.801})


def test_gamma_two_paths_large_beta():
    # beta = 1: gamma_1 = 10/10 + 10/10 = 2; gamma_2 = 5/10 + 10/5 = 2.5
    g = gammas({1: 10.0, 2: 5.0}, {1: 10.0, 2: 5.0}, beta=1.0)
    assert g == pytest.approx({1: 2.0, 2: 2.5})
    assert best_path(g) == 2


def test_best_is_the_max_not_the_last():
    # as printed (gamma_curr = gamma_max), gamma_max stays 0 and the last path (3) would win
    assert best_path({1: 1.002, 2: 0.504, 3: 0.801}) == 1
    assert best_path({1: 0.5, 2: 0.9, 3: 0.7}) == 2
    assert best_path({2: 0.7, 1: 0.7}) == 1  # tie: lowest id


def test_decide_weighted_and_winner_takes_all():
    d = make_policy("llhd").decide(THREE, 0.0)
    assert d.mode == Mode.FLOWLET
    assert d.weights == pytest.approx({1: 1.002, 2: 0.504, 3: 0.801})
    assert d.scores == pytest.approx(d.weights)
    d = make_policy("llhd", {"weighted": False}).decide(THREE, 0.0)
    assert d.weights == {1: 1.0, 2: 0.0, 3: 0.0}


def test_dead_and_unmeasured():
    # path 1 dead; path 3 unmeasured: GP = 0, RTT = min known (10) ; RTT_max = 10
    #   gamma_2 = 5/5 + 0.001 * 10/10 = 1.001 ; gamma_3 = 0 + 0.001 * 10/10 = 0.001
    paths = [
        PathState(1, False, goodput_mbps=10.0, srtt_ms=20.0),
        PathState(2, True, goodput_mbps=5.0, srtt_ms=10.0),
        PathState(3, True),
    ]
    d = make_policy("llhd").decide(paths, 0.0)
    assert d.weights == pytest.approx({1: 0.0, 2: 1.001, 3: 0.001})
