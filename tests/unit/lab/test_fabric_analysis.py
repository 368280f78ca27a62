"""A fabric run's metrics on synthetic reports: flows to their pairs, FCT per size bucket,
goodput and reordering per ordered pair of edges and overall, the report's per-pair table."""

from __future__ import annotations

import math

import pytest

from mpsched.lab import fabric_analysis as fa
from mpsched.lab import metrics
from mpsched.lab.fabric_workload import host_edges, plan_hosts, sender_plans
from mpsched.lab.reorder import ReorderStats
from mpsched.lab.report import RunResult
from mpsched.lab.runner import RunRaw
from mpsched.lab.scenario import parse

T0 = 1_000_000.0
FABRIC = {"leaf_spine": {"leaves": 3, "spines": 2, "link": {"rate_mbps": 10, "delay_ms": 1},
                         "overrides": [{"link": "leaf1-spine2", "rate_mbps": 2}]}}
INCAST = {"kind": "incast", "receiver": "leaf2", "size_kb": 50, "period_ms": 1000}
BULK = {"kind": "bulk", "pairs": [{"src": "leaf3", "dst": "leaf1"}]}


def scenario():
    doc = {"name": "fab", "duration_s": 12, "warmup_s": 2, "fabric": FABRIC,
           "workload": [INCAST, BULK]}
    return parse(doc, fabric=True)


def flat(_pair, _size) -> float:
    return 0.1  # every flow's ideal FCT


def test_flows_go_to_the_pair_of_their_source_host_and_destination_address():
    sc = scenario()
    plans = sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, 1)
    reports = {
        "send0_h1_1": {"ended": T0 + 12, "transfers": [
            {"dst": "10.0.2.1", "size": 50_000, "fct_s": 0.3, "arrival": T0},
            {"dst": "10.0.2.1", "size": 50_000, "error": "timed out", "arrival": T0 + 1},
            {"dst": "10.0.2.1", "size": 50_000, "incomplete": True, "arrival": T0 + 11.5}]},
        "send0_h3_1": {"transfers": [{"dst": "10.0.2.1", "size": 2_000_000, "fct_s": 2.0}]},
    }
    got = fa.flow_records(reports, plans, host_edges(plan_hosts(sc.fabric)))
    assert got == [fa.FlowRecord((1, 2), 50_000, 0.3), fa.FlowRecord((1, 2), 50_000, None),
                   fa.FlowRecord((1, 2), 50_000, 0.5, censored=True),
                   fa.FlowRecord((3, 2), 2_000_000, 2.0)]


def test_pair_metrics_per_bucket_goodput_and_reordering():
    flows = [fa.FlowRecord((1, 2), 10_000, 0.2), fa.FlowRecord((1, 2), 20_000, 0.4),
             fa.FlowRecord((1, 2), 500_000, None), fa.FlowRecord((1, 2), 2_000_000, 3.0, True),
             fa.FlowRecord((3, 2), 50_000, 1.0)]
    reorder = {(1, 2): [ReorderStats(100, 0, 5, [1, 1, 2, 2, 4]),
                        ReorderStats(100, 0, 0)]}
    got = fa.pair_metrics(flows, {(1, 2): 1_000_000, (2, 3): 500_000}, reorder, 10, flat)
    assert list(got) == [(1, 2), (2, 3), (3, 2)]
    a = got[(1, 2)]
    assert a["goodput_mbps"] == pytest.approx(0.8)
    assert a["fct_lt100k_mean_s"] == pytest.approx(0.3) and a["flows_lt100k"] == 2
    assert a["slowdown_lt100k_mean"] == pytest.approx(3.0)
    assert a["completed_frac_100k_1m"] == 0 and math.isnan(a["fct_100k_1m_mean_s"])
    assert a["fct_gt1m_mean_s"] == 3.0 and a["completed_frac_gt1m"] == 0  # censored
    assert a["completed_frac"] == 0.5 and a["failed_transfers"] == 1
    assert (a["ooo_packets"], a["reorder_ratio"], a["reorder_degree"]) == (5, 0.025, 2.0)
    assert got[(2, 3)] == {"goodput_mbps": pytest.approx(0.4)}  # bytes, no flows of its own
    assert got[(3, 2)]["fct_mean_s"] == 1.0 and "ooo_packets" not in got[(3, 2)]


def test_slowdown_is_against_each_flows_own_pair():
    flows = [fa.FlowRecord((1, 2), 10_000, 1.0), fa.FlowRecord((2, 1), 10_000, 1.0)]
    got = fa.fct_metrics(flows, lambda pair, _s: {(1, 2): 0.5, (2, 1): 0.25}[pair])
    assert got["slowdown_lt100k_mean"] == pytest.approx(3.0)  # (2 + 4) / 2
    assert got["slowdown_mean"] == pytest.approx(3.0) and got["slowdown_lt100k_p99"] > 3.9


def test_pair_bytes_count_the_window_per_peer_address():
    edges = {"10.0.1.1": 1, "10.0.3.1": 3}
    reports = {"sink0_h2_1": {"peers": {
        "10.0.1.1": [[T0 + 1, 0], [T0 + 3, 2000], [T0 + 11, 10_000]],
        "10.0.3.1": [[T0 + 5, 100], [T0 + 6, 200]],
        "10.9.9.9": [[T0 + 5, 100], [T0 + 6, 900]]}}}
    got = fa.pair_bytes(reports, {"sink0_h2_1": 2}, edges, T0, 2, 10)
    assert got == {(1, 2): pytest.approx(9000 - 1000), (3, 2): pytest.approx(100)}


def test_the_ideal_fct_is_on_the_pairs_best_path():
    sc = scenario()
    ideal = fa.ideal_fct(sc.fabric)
    # leaf1 -> leaf2: through spine1 at 10 Mbit/s or spine2 at 2; 2 links of 1 ms each way
    assert ideal((1, 2), 3_000_000) == pytest.approx(metrics.ideal_fct_s(3_000_000, 10, 4))
    assert ideal((1, 2), 3_000_000) == ideal((2, 3), 3_000_000)


def test_a_fabric_run_has_overall_and_per_pair_metrics(tmp_path):
    sc = scenario()
    r = RunRaw(sc, "ecmp", 0, 1, tmp_path, t0=T0)
    r.reports = {
        "send0_h1_1": {"transfers": [{"dst": "10.0.2.1", "size": 50_000, "fct_s": 0.3}]},
        "send0_h3_1": {"transfers": [{"dst": "10.0.2.1", "size": 50_000, "fct_s": 0.5}]},
        "sink0_h2_1": {"peers": {"10.0.1.1": [[T0, 0], [T0 + 12, 120_000]],
                                 "10.0.3.1": [[T0, 0], [T0 + 12, 60_000]]}},
        "sink1_h1_1": {"peers": {"10.0.3.1": [[T0, 0], [T0 + 12, 1_200_000]]}},
    }
    res = fa.analyse(r)
    m = res.metrics
    assert set(res.pairs) == {"leaf1->leaf2", "leaf3->leaf2", "leaf3->leaf1"}
    assert res.pairs["leaf3->leaf1"]["goodput_mbps"] == pytest.approx(0.8)
    assert res.warnings == []  # every pair carried something
    assert res.pairs["leaf1->leaf2"]["fct_lt100k_mean_s"] == 0.3
    assert m["goodput_mbps"] == pytest.approx(0.8 + 0.08 + 0.04)
    assert m["goodput_frac"] == pytest.approx(0.92 / (12 + 20 + 20))
    assert m["fct_lt100k_mean_s"] == pytest.approx(0.4) and m["completed_frac"] == 1
    assert sorted(res.fct) == [(50_000, 0.3), (50_000, 0.5)]
    back = RunResult.from_dict(res.to_dict())
    assert back.pairs == res.pairs
    table = fa.pair_table([res, back])
    assert table.splitlines()[0].startswith("| scenario | pair | policy | runs | goodput Mbit/s")
    row = next(line for line in table.splitlines() if "leaf1->leaf2" in line)
    assert "| fab | leaf1->leaf2 | ecmp | 2 |" in row and "0.3" in row
    assert fa.pair_table([RunResult("s", "p", 0, 1, 10)]) == ""


def test_the_pairs_sent_on_in_the_window_with_their_senders():
    sc = scenario()
    plans = sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, 1)
    edges = host_edges(plan_hosts(sc.fabric))
    # incast rounds at 0..6 s from leaf1 and leaf3 to leaf2; the bulk leaf3 -> leaf1 all along
    assert fa.window_pairs(plans, edges, 2, 12) == {
        (1, 2): ["send0_h1_1"], (3, 2): ["send0_h3_1"], (3, 1): ["send1_0_h3_1"]}
    assert fa.window_pairs(plans, edges, 7, 12) == {(3, 1): ["send1_0_h3_1"]}
    assert fa.window_pairs(plans, edges, 12, 14) == {}


def test_a_silent_pair_says_what_its_senders_reported():
    planned = {(1, 2): ["a"], (3, 2): ["b"], (3, 1): ["c", "d"], (2, 1): ["e"]}
    reports = {"b": {"error": "connect 10.0.2.1:5000: refused"}, "c": {"streams": []},
               "e": {"streams": [{"bytes": 10}]}}
    got = fa.silent_pairs(planned, {(1, 2): 0.0, (2, 1): 5.0}, reports)
    assert got == {(1, 2): "a wrote no report",
                   (3, 2): "b failed: connect 10.0.2.1:5000: refused",
                   (3, 1): "d wrote no report"}
    assert fa.silent_pairs({(3, 1): ["c"]}, {}, reports) == {(3, 1): "c reported no error"}


def test_a_pair_that_carried_nothing_is_in_the_result_and_named_in_its_warnings(tmp_path):
    sc = scenario()
    r = RunRaw(sc, "ecmp", 0, 1, tmp_path, t0=T0)
    r.reports = {
        "send0_h1_1": {"transfers": [{"dst": "10.0.2.1", "size": 50_000, "fct_s": 0.3}]},
        "send0_h3_1": {"transfers": [{"dst": "10.0.2.1", "size": 50_000, "fct_s": 0.5}]},
        "sink0_h2_1": {"peers": {"10.0.1.1": [[T0, 0], [T0 + 12, 120_000]],
                                 "10.0.3.1": [[T0, 0], [T0 + 12, 60_000]]}},
        "send1_0_h3_1": {"role": "bulk", "error": "connect 10.0.1.1:5001: refused"},
    }  # and no sink1_h1_1 report: nothing reached leaf1
    res = fa.analyse(r)
    assert set(res.pairs) == {"leaf1->leaf2", "leaf3->leaf2", "leaf3->leaf1"}
    assert res.pairs["leaf3->leaf1"] == {"goodput_mbps": 0.0}
    assert res.warnings == [
        "pair leaf3->leaf1 carried nothing: its sinks counted no byte from its sources in the "
        "measured window (2-12 s); send1_0_h3_1 failed: connect 10.0.1.1:5001: refused"]
    assert RunResult.from_dict(res.to_dict()).warnings == res.warnings


def test_an_incast_round_completes_with_its_last_response():
    sc = scenario()
    plans = [p for p in sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, 1)
             if p.kind == "incast"]
    assert [p.name for p in plans] == ["send0_h1_1", "send0_h3_1"] and len(plans[0].flows) == 7
    reports = {
        "send0_h1_1": {"transfers": [{"fct_s": 0.2}, {"fct_s": 0.3}, {"error": "refused"},
                                     {"fct_s": 0.1}]},
        "send0_h3_1": {"transfers": [{"fct_s": 0.5}, {"fct_s": 0.1}, {"fct_s": 0.1},
                                     {"incomplete": True}, {"fct_s": 0.4}]},
    }
    rounds = fa.incast_rounds(reports, plans)
    assert rounds == [0.5, 0.3, None, None, None]  # round 4: h1_1's response never started
    m = fa.incast_metrics(rounds)
    assert m["incast_completed_frac"] == 0.4 and m["incast_qct_mean_s"] == pytest.approx(0.4)
    assert fa.incast_metrics([]) == {}


def test_sender_rtt_and_retransmissions_from_streams_and_transfers():
    sc = scenario()
    plans = sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, 1)
    reports = {"send0_h1_1": {"transfers": [{"rtt_ms": 4.0, "retrans": 1}, {"rtt_ms": 0}]},
               "send1_0_h3_1": {"streams": [{"rtt_ms": [0, 2.0, 3.0], "retrans": 5}]}}
    rtt, retrans = fa.sender_tcp(reports, plans)
    assert (sorted(rtt), retrans) == ([2.0, 3.0, 4.0], 6)
