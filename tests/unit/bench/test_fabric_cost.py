"""The CPU keys of `make bench-fabric` from runs' records (src/mpsched/bench/fabric_cost.py)."""

from __future__ import annotations

import math

from mpsched.bench import fabric_cost as cost
from mpsched.lab.fct import paired_ratios
from mpsched.lab.report import RunResult

SWITCHES = ("leaf1", "spine1")


def run(policy: str, seed: int, shares: dict[str, float], goodput: float = 8.0,
        idle: float = 40.0, cores: float = 2.0) -> RunResult:
    return RunResult("fabric-asymmetric", policy, seed, seed, 60.0,
                     metrics={"goodput_mbps": goodput, "cpu_idle_pct": idle,
                              "cpu_cores": cores},
                     cpu_shares=shares)


def test_the_controller_share_is_of_one_core_and_averaged_over_the_policys_runs():
    results = [run("ca", 1, {"controller": 2.0}), run("ca", 2, {"controller": 3.0}),
               run("ecmp", 1, {"controller": 40.0})]
    assert cost.controller_core_pct(results, "ca") == 5.0  # (4 + 6) / 2


def test_without_a_controller_the_share_is_nan():
    assert math.isnan(cost.controller_core_pct([run("ca", 1, {})], "ca"))


def test_the_lowest_idle_of_any_run():
    results = [run("ca", 1, {}, idle=40.0), run("ecmp", 1, {}, idle=31.5),
               run("ecmp", 2, {}, idle=math.nan)]
    assert cost.idle_min_pct(results) == 31.5
    assert math.isnan(cost.idle_min_pct([]))


def test_switch_cost_per_mbit_pairs_by_seed_against_the_plain_program():
    results = cost.with_switch_cost([
        run("ca", 1, {"leaf1": 10.0, "spine1": 5.0}, goodput=6.0),   # 30 % of a core / 6
        run("plain-ecmp", 1, {"leaf1": 4.0, "spine1": 1.0}, goodput=5.0),  # 10 / 5
    ], SWITCHES)
    assert results[0].metrics[cost.SWITCH_COST] == 5.0
    stat, n = paired_ratios(results, cost.SWITCH_COST, "plain-ecmp")[
        ("fabric-asymmetric", "ca")]
    assert n == 1 and stat[0] == 2.5


def test_a_run_missing_a_switchs_share_or_goodput_has_no_switch_cost():
    results = cost.with_switch_cost([run("ca", 1, {"leaf1": 10.0}),
                                     run("ca", 2, {"leaf1": 1.0, "spine1": 1.0}, goodput=0.0)],
                                    SWITCHES)
    assert all(math.isnan(r.metrics[cost.SWITCH_COST]) for r in results)
