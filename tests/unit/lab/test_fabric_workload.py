"""A fabric's flow schedule: load against capacity, uniform destinations, matrix weights,
incast rounds, bulk pairs, the same seed the same schedule; the scenario keys' errors."""

from __future__ import annotations

import collections
import math

import pytest

from mpsched.lab import fabric_workload as fw
from mpsched.lab.scenario import ScenarioError, parse
from mpsched.traffic import flowsizes

LINK = {"rate_mbps": 10, "delay_ms": 1}
FABRIC = {"leaf_spine": {"leaves": 4, "spines": 2, "hosts_per_leaf": 2, "link": LINK,
                         "overrides": [{"link": "leaf1-spine2", "rate_mbps": 2.5}]}}


def scenario(*workload: dict, duration_s: float = 60, fabric: dict = FABRIC):
    doc = {"name": "f", "duration_s": duration_s, "fabric": fabric, "workload": list(workload)}
    return parse(doc, fabric=True)


def plans(sc, seed: int = 1):
    return fw.sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, seed)


POISSON = {"kind": "poisson", "sizes": "websearch", "load_pct": 50, "max_kb": 300,
           "drain_s": 1}


def test_edge_capacity_is_the_rate_of_the_links_leaving_each_edge():
    sc = scenario(POISSON)
    assert fw.edge_capacity_mbps(sc.fabric) == {1: 12.5, 2: 20.0, 3: 20.0, 4: 20.0}
    hosts = fw.plan_hosts(sc.fabric)
    assert [(h.name, h.address) for h in hosts[3]] == [("h3_1", "10.0.3.1"), ("h3_2", "10.0.3.2")]


def test_all_to_all_offers_each_edge_its_load_over_a_long_horizon():
    sc = scenario(POISSON, duration_s=3600)
    dist = flowsizes.distribution("websearch", 300_000)
    offered = collections.Counter()
    for p in plans(sc):
        offered[p.host.edge] += sum(f.size for f in p.flows) * 8 / (3600 - 1) / 1e6
    expected = {e: 0.5 * c for e, c in fw.edge_capacity_mbps(sc.fabric).items()}
    for e, want in expected.items():
        assert offered[e] == pytest.approx(want, rel=0.05), (e, dist.mean())


def test_all_to_all_keeps_what_each_edge_receives_within_its_load():
    """leaf1's links bring in 12.5 Mbit/s, the others' 20: drawn by hosts alone, the other
    three edges would send leaf1 a third of their 10 Mbit/s each, 80 % of its 12.5 at 50 %."""
    sc = scenario(POISSON, duration_s=3600)
    edges = fw.host_edges(fw.plan_hosts(sc.fabric))
    received = collections.Counter()
    for p in plans(sc):
        for f in p.flows:
            received[edges[f.dst]] += f.size * 8 / (3600 - 1) / 1e6
    assert fw.edge_capacity_in_mbps(sc.fabric) == {1: 12.5, 2: 20.0, 3: 20.0, 4: 20.0}
    for e, cap in fw.edge_capacity_in_mbps(sc.fabric).items():
        assert received[e] == pytest.approx(0.5 * cap, rel=0.06), (e, received)


def test_balance_meets_both_sums_and_keeps_a_prior_that_already_does():
    prior = {(a, b): 1.0 for a in (1, 2, 3) for b in (1, 2, 3) if a != b}
    assert fw.balance(prior, {1: 2, 2: 2, 3: 2}, {1: 5, 2: 5, 3: 5}) == prior
    got = fw.balance(prior, {1: 1, 2: 2, 3: 2}, {1: 1, 2: 2, 3: 2})
    for e, want in {1: 1, 2: 2, 3: 2}.items():
        assert fw._sums(got, 0)[e] == pytest.approx(want)
        assert fw._sums(got, 1)[e] == pytest.approx(want)
    assert got[(2, 3)] == pytest.approx(got[(3, 2)])
    # two edges of different capacities: no rates meet both; the sources keep their rates
    two = fw.balance({(1, 2): 1.0, (2, 1): 3.0}, {1: 1.0, 2: 3.0}, {1: 1.0, 2: 1.0})
    assert two == pytest.approx({(1, 2): 1.0, (2, 1): 3.0})


def test_all_to_all_destinations_are_uniform_over_the_other_edges_hosts():
    symmetric = {"leaf_spine": {**FABRIC["leaf_spine"], "overrides": []}}
    sc = scenario(POISSON, duration_s=3600, fabric=symmetric)
    for p in plans(sc):
        counts = collections.Counter(f.dst for f in p.flows)
        others = {h.address for e, hs in fw.plan_hosts(sc.fabric).items() if e != p.host.edge
                  for h in hs}
        assert set(counts) == others  # never its own edge
        n = len(p.flows)
        for got in counts.values():  # 6 destinations: each within 4 sigma of n / 6
            assert abs(got - n / 6) < 4 * math.sqrt(n / 6), (p.name, counts)


def test_a_matrix_splits_the_summed_capacity_by_weight():
    matrix = [{"src": "leaf1", "dst": "leaf2", "weight": 3}, {"src": "leaf3", "dst": "leaf2"},
              {"src": "leaf1", "dst": "leaf4", "weight": 1}]
    sc = scenario({**POISSON, "matrix": matrix}, duration_s=3600)
    rates = fw.pair_rates_mbps(sc.fabric_workload[0], sc.fabric, fw.plan_hosts(sc.fabric))
    total = 0.5 * 72.5
    assert rates == pytest.approx({(1, 2): 0.6 * total, (3, 2): 0.2 * total,
                                   (1, 4): 0.2 * total})
    edges = fw.host_edges(fw.plan_hosts(sc.fabric))
    offered = collections.Counter()
    for p in plans(sc):
        for f in p.flows:
            offered[(p.host.edge, edges[f.dst])] += f.size * 8 / (3600 - 1) / 1e6
    assert set(offered) == set(rates)
    for pair, want in rates.items():
        assert offered[pair] == pytest.approx(want, rel=0.06), pair
    assert {p.host.edge for p in plans(sc)} == {1, 3}


def test_the_same_seed_gives_the_same_schedule_another_seed_another():
    sc = scenario(POISSON, {"kind": "incast", "receiver": "h2_1", "size_kb": 20})
    assert plans(sc, seed=5) == plans(sc, seed=5)
    assert plans(sc, seed=5) != plans(sc, seed=6)
    assert all(p.flows and p.flows[-1].at < 60 - 1 for p in plans(sc) if p.kind == "poisson")


def test_incast_rounds_are_synchronised_from_every_other_edge():
    sc = scenario({"kind": "incast", "receiver": "leaf2", "size_kb": 64, "period_ms": 500,
                   "drain_s": 2, "start_s": 10}, duration_s=20)
    got = plans(sc)
    assert sorted(p.host.name for p in got) == ["h1_1", "h1_2", "h3_1", "h3_2", "h4_1", "h4_2"]
    times = [0.5 * r for r in range(16)]  # 8 s of rounds: 10 s less the 2 s drain
    for p in got:
        assert (p.start_s, p.seconds) == (10, 10)
        assert [f.at for f in p.flows] == pytest.approx(times)
        assert {(f.dst, f.size) for f in p.flows} == {("10.0.2.1", 64_000)}
    chosen = scenario({"kind": "incast", "receiver": "h2_2", "size_kb": 8,
                       "senders": ["leaf3", "h4_2"]})
    assert [p.host.name for p in plans(chosen)] == ["h3_1", "h3_2", "h4_2"]
    assert fw.receivers(plans(chosen), fw.plan_hosts(chosen.fabric))[0][1].name == "h2_2"


def test_bulk_pairs_name_hosts_or_an_edges_first_host():
    sc = scenario({"kind": "bulk", "streams": 2,
                   "pairs": [{"src": "leaf1", "dst": "h3_2"}, {"src": "h4_2", "dst": "leaf1"}]})
    got = plans(sc)
    assert [(p.name, p.host.name, p.dst and p.dst.name, p.streams) for p in got] == [
        ("send0_0_h1_1", "h1_1", "h3_2", 2), ("send0_1_h4_2", "h4_2", "h1_1", 2)]
    hosts = fw.plan_hosts(sc.fabric)
    assert [(i, h.name) for i, h in fw.receivers(got, hosts)] == [(0, "h1_1"), (0, "h3_2")]


@pytest.mark.parametrize(
    ("workload", "field", "message"),
    [
        ({"kind": "vbr", "path": 1}, "workload[0].kind", "must be one of poisson, incast, bulk"),
        ({"kind": "poisson", "sizes": "websearch"}, "workload[0].load_pct", "missing"),
        ({**POISSON, "path": 1}, "workload[0].path", "unknown key"),
        ({**POISSON, "matrix": []}, "workload[0].matrix", "at least one entry"),
        ({**POISSON, "matrix": [{"src": "leaf1", "dst": "spine1"}]},
         "workload[0].matrix[0].dst", "must be an edge (leaf1, leaf2, leaf3, leaf4)"),
        ({**POISSON, "matrix": [{"src": "leaf1", "dst": "leaf1"}]},
         "workload[0].matrix[0].dst", "another edge"),
        ({**POISSON, "matrix": [{"src": "leaf1", "dst": "leaf2"}] * 2},
         "workload[0].matrix[1]", "listed twice"),
        ({**POISSON, "matrix": [{"src": "leaf1", "dst": "leaf2", "weight": 0}]},
         "workload[0].matrix[0].weight", "must be in"),
        ({**POISSON, "drain_s": 60}, "workload[0].drain_s", "shorter than the workload's time"),
        ({"kind": "incast", "receiver": "h2_3", "size_kb": 1}, "workload[0].receiver",
         "no host h2_3"),
        ({"kind": "incast", "receiver": "h9_1", "size_kb": 1}, "workload[0].receiver",
         "no host h9_1"),
        ({"kind": "incast", "receiver": "h2_1", "size_kb": 1, "senders": ["leaf2"]},
         "workload[0].senders[0]", "another edge than the receiver"),
        ({"kind": "incast", "receiver": "h2_1"}, "workload[0].size_kb", "missing"),
        ({"kind": "bulk", "pairs": [{"src": "leaf1", "dst": "h1_2"}]},
         "workload[0].pairs[0].dst", "another edge than src"),
        ({"kind": "bulk", "pairs": [{"src": "leaf1", "to": "h1_2"}]},
         "workload[0].pairs[0].to", "unknown key"),
    ],
)
def test_bad_fabric_workloads_are_named(workload, field, message):
    with pytest.raises(ScenarioError) as err:
        scenario(workload)
    assert (err.value.field, message in err.value.message) == (field, True), err.value


def test_a_poisson_load_needs_rates_at_its_sources():
    down = {"rate_mbps": 10, "schedule": [{"down_s": 0, "up_s": 30}]}  # down at t = 0
    fabric = {"leaf_spine": {"leaves": 2, "spines": 1, "link": down}}
    with pytest.raises(ScenarioError) as err:
        scenario(POISSON, fabric=fabric)
    assert err.value.field == "workload[0].load_pct"


def test_a_load_sweep_sets_a_fabrics_poisson_loads():
    from mpsched.lab.experiment import load_variants

    sc = scenario(POISSON, {"kind": "incast", "receiver": "h2_1", "size_kb": 20})
    low, high = load_variants(sc, [20, 80])
    assert (low.name, high.name) == ("f-load20", "f-load80")
    assert [w.load_pct for w in high.fabric_workload] == [80, 0]
    assert high.fabric_workload[1] == sc.fabric_workload[1]
    offered = [sum(f.size for p in plans(v) for f in p.flows) for v in (low, high)]
    assert offered[1] > 2 * offered[0]
