"""The scenario a run uses (src/mpsched/lab/scenario_spec.py): the offered load, the paths'
baselines and the controller requests computed from a scenario file."""

from __future__ import annotations

import pytest
import yaml

from mpsched.lab.scenario import ScenarioError, parse
from tests.unit.lab.test_scenario import MINIMAL, POISSON


def test_poisson_workload_offers_its_share_of_the_summed_capacity():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["workload"] = [{**POISSON, "max_kb": 1000, "scale": 0.5, "max_concurrent": 8}]
    sc = parse(doc)
    (w,) = sc.workload
    assert (w.kind, w.sizes, w.load_pct, w.max_kb, w.scale, w.max_concurrent, w.drain_s) == (
        "poisson", "datamining", 70, 1000, 0.5, 8, 5.0)
    assert sc.offered_mbps(w) == pytest.approx(0.7 * 15)


def test_path_baselines_sum_the_segments_delays_both_ways():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["paths"][0].update(reverse={"delay_ms": 7}, core={"rate_mbps": 4, "delay_ms": 30})
    del doc["paths"][1]["rate_mbps"]
    doc["paths"][1]["rate_mbps"] = None
    assert parse(doc).path_baselines() == [(4, 5 + 7 + 30 + 30), (None, 0)]


def test_static_policy_request_carries_the_weights_of_the_rates():
    sc = parse(MINIMAL)
    assert sc.policy_request("static") == {
        "name": "wcmp", "params": {"weights": "1:100,2:50"}, "lm3": False,
        "flowlet_gap_us": sc.policy.flowlet_gap_us}
    request = sc.policy_request("llhd+lm3")
    assert (request["name"], request["params"], request["lm3"]) == ("llhd", {}, True)


def test_given_weights_win_over_the_rates():
    sc = parse({**MINIMAL, "policy": {"weights": [1, 3]}})
    assert sc.policy_weights("static") == {1: 1, 2: 3}
    assert sc.policy_weights("ecmp") == {1: 1, 2: 1}


def test_an_unknown_policy_names_the_key():
    with pytest.raises(ScenarioError) as err:
        parse(MINIMAL).policy_request("fastest")
    assert err.value.field == "policy" and "fastest" in str(err.value)
