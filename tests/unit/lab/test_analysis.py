"""Per-run analysis on synthetic raw reports: goodput window, capacity, FCT, RTT, Jain."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from mpsched import addressing as ap
from mpsched.lab.analysis import analyse, capacity_mbps
from mpsched.lab.edge_launch import poisson_args, sender_args
from mpsched.lab.metrics import best_ideal_fct_s, bucket_stats, ideal_fct_s, size_bucket
from mpsched.lab.runner import RunRaw
from mpsched.lab.scenario import parse

DOC = {
    "name": "t",
    "duration_s": 10,
    "warmup_s": 2,
    "paths": [
        {"rate_mbps": 10, "schedule": [{"down_s": 5, "up_s": 7.5}]},
        {"rate_mbps": 5},
    ],
    "workload": [
        {"kind": "bulk", "streams": 2},
        {"kind": "files", "sizes_kb": [100], "count": 3},
    ],
}
T0 = 1000.0


def raw(tmp_path: Path) -> RunRaw:
    sc = parse(yaml.safe_load(yaml.safe_dump(DOC)))
    r = RunRaw(sc, "ecmp", 0, 1, tmp_path, t0=T0)
    # sink 0 receives 1 MB/s (8 Mbit/s) steadily from t=0 to t=10
    r.reports["sink0"] = {
        "total": [(T0 + t, t * 1e6) for t in range(11)],
        "connections": [
            {"peer": "a", "start": T0, "end": T0 + 10, "bytes": 6e6},
            {"peer": "b", "start": T0, "end": T0 + 10, "bytes": 2e6},
        ],
    }
    r.reports["sink1"] = {"total": [(T0, 0), (T0 + 10, 0)], "connections": []}
    r.reports["send0"] = {"streams": [{"rtt_ms": [10, 20, 30], "retrans": 2}, {"retrans": 1}]}
    r.reports["send1"] = {
        "transfers": [
            {"size": 100_000, "fct_s": 0.5, "rtt_ms": 40, "retrans": 0},
            {"size": 100_000, "fct_s": 1.5},
            {"size": 100_000, "error": "refused"},
        ]
    }
    r.link_tx = [(T0 + t, {1: int(t * 0.5e6), 2: int(t * 0.25e6)}) for t in range(11)]
    r.path_counters = [(T0 + t, {1: int(t * 0.6e6), 2: int(t * 0.3e6)}) for t in range(11)]
    return r


def test_capacity_counts_only_paths_that_are_up(tmp_path):
    r = raw(tmp_path)
    # window 2..10: path 2 always (5), path 1 up for 5.5 of the 8 s (10)
    assert capacity_mbps(r, 2, 10) == pytest.approx(5 + 10 * 5.5 / 8, rel=0.02)


def test_metrics_of_a_run(tmp_path):
    res = analyse(raw(tmp_path))
    m = res.metrics
    assert m["goodput_mbps"] == pytest.approx(8.0)
    assert m["goodput_frac"] == pytest.approx(8.0 / (5 + 10 * 5.5 / 8), rel=0.02)
    assert m["path1_mbps"] == pytest.approx(4.0)
    assert m["path2_offered_mbps"] == pytest.approx(2.4)
    assert m["fct_mean_s"] == pytest.approx(1.0)
    assert m["transfers"] == 2 and m["failed_transfers"] == 1
    assert sorted(res.fct) == [(100_000, 0.5), (100_000, 1.5)]
    assert sorted(res.rtt_ms) == [10, 20, 30, 40]
    assert m["rtt_p50_ms"] == pytest.approx(25.0)
    assert m["retrans"] == 3
    # Jain over 4.8 and 1.6 Mbit/s: (6.4)^2 / (2 * (4.8^2 + 1.6^2)) = 0.8
    assert m["jain"] == pytest.approx(0.8)
    assert "ooo_packets" not in m  # no capture
    assert [round(v, 3) for _, v in res.series["total"]][:3] == [8.0, 8.0, 8.0]
    assert set(res.series) == {"total", "path1", "path2"}


def test_one_connection_has_no_jain(tmp_path):
    r = raw(tmp_path)
    r.reports["sink0"]["connections"] = r.reports["sink0"]["connections"][:1]
    assert math.isnan(analyse(r).metrics["jain"])


def test_sender_arguments():
    sc = parse(yaml.safe_load(yaml.safe_dump(DOC)))
    args = sender_args(sc.workload[1], 1, ap.H2_IP, 8.0, 7)
    assert args[0] == "files"
    assert args[args.index("--port") + 1] == "5001"
    assert args[args.index("--sizes-kb") + 1] == "100"
    assert "--mptcp" not in args


def test_reaction_time_after_a_failure(tmp_path):
    r = raw(tmp_path)
    # path 1 (10 of 15 Mbit/s) goes down at 5 s: capacity 15 -> 5; goodput 8 Mbit/s before,
    # so the target is 0.9 * 8 * 5/15 = 2.4 Mbit/s; it dips to 1 and is back at 3 from t=7
    steps = {t: 8.0 for t in range(5)} | {5: 1.0, 6: 1.0} | {t: 3.0 for t in range(7, 11)}
    cum, total = 0.0, []
    for t in range(11):
        total.append((T0 + t, cum))
        cum += steps[t] * 1e6 / 8
    r.reports["sink0"]["total"] = total
    m = analyse(r).metrics
    # rate points sit at bin midpoints: the dip shows at 5.5, recovery at 7.5
    assert m["reaction_time_s"] == pytest.approx(2.5)


def test_no_failure_no_reaction_time(tmp_path):
    r = raw(tmp_path)
    doc = yaml.safe_load(yaml.safe_dump(DOC))
    del doc["paths"][0]["schedule"]
    r.scenario = parse(doc)
    assert "reaction_time_s" not in analyse(r).metrics


# -- FCT per size bucket and slowdown ---------------------------------------------------------


def test_size_buckets_and_their_edges():
    assert [size_bucket(s) for s in (0, 99_999, 100_000, 1_000_000, 1_000_001, 10**9)] == [
        "lt100k", "lt100k", "100k_1m", "100k_1m", "gt1m", "gt1m",
    ]  # fmt: skip
    with pytest.raises(ValueError):
        size_bucket(-1)


def test_ideal_fct_without_slow_start_rounds():
    # 8 Mbit/s, 10 ms: BDP 9.6 kB < the initial window, so handshake + size/rate + one RTT
    rate = 8e6 / 8 * 1448 / 1514
    assert ideal_fct_s(50_000, 8, 10) == pytest.approx(0.01 + 50_000 / rate + 0.01)
    # unlimited rate: only round trips, two slow-start rounds (14480 + 28960 B) before the rest
    assert ideal_fct_s(50_000, None, 10) == pytest.approx(0.04)


def test_ideal_fct_counts_the_slow_start_rounds():
    # 100 Mbit/s, 20 ms: BDP 239 kB; windows 14480, 28960, 57920, 115840, 231680 B are below it
    # (five rounds of one RTT), then 463360 B >= BDP: the remaining bytes at the rate
    rate = 100e6 / 8 * 1448 / 1514
    left = 1_000_000 - 1448 * 10 * (1 + 2 + 4 + 8 + 16)
    assert ideal_fct_s(1_000_000, 100, 20) == pytest.approx(0.02 + 5 * 0.02 + left / rate + 0.02)
    # a flow that fits in a window-limited round: one round trip less than a full round
    assert ideal_fct_s(20_000, 100, 20) == pytest.approx(0.02 + 0.02 + (20_000 - 14_480) / rate
                                                         + 0.02)
    with pytest.raises(ValueError):
        ideal_fct_s(1000, 0, 10)


def test_best_ideal_is_the_fastest_path_for_the_size():
    paths = [(2.0, 2.0), (100.0, 40.0)]
    # a one-packet flow is fastest on the short slow path, a big one on the fast long one
    assert best_ideal_fct_s(1000, paths) == pytest.approx(ideal_fct_s(1000, 2.0, 2.0))
    assert best_ideal_fct_s(10_000_000, paths) == pytest.approx(ideal_fct_s(10_000_000, 100, 40))
    assert math.isnan(best_ideal_fct_s(1000, []))


def test_bucket_stats_mean_p99_slowdown_and_completion():
    records = [(50_000, 0.1), (50_000, 0.3), (60_000, None), (500_000, 2.0), (2_000_000, None)]
    got = bucket_stats(records, lambda size: size / 500_000)  # ideal: 0.1 s per 50 kB
    small = got["lt100k"]
    assert (small.started, small.completed) == (3, 2)
    assert small.completed_frac == pytest.approx(2 / 3)
    assert small.fct_mean == pytest.approx(0.2)
    assert small.fct_p99 == pytest.approx(0.1 + 0.99 * 0.2)
    assert small.slowdown_mean == pytest.approx(2.0)  # 0.1/0.1 and 0.3/0.1
    assert got["100k_1m"].slowdown_p99 == pytest.approx(2.0)
    big = got["gt1m"]
    assert big.completed == 0 and math.isnan(big.fct_mean) and math.isnan(big.slowdown_p99)


def test_poisson_run_reports_buckets_slowdown_and_load(tmp_path):
    doc = yaml.safe_load(yaml.safe_dump(DOC))
    doc["workload"][1] = {"kind": "poisson", "sizes": "websearch", "load_pct": 50}
    r = raw(tmp_path)
    r.scenario = parse(doc)
    r.reports["send1"] = {
        "transfers": [
            {"size": 20_000, "fct_s": 0.2, "arrival": T0 + 1, "wait_s": 0.0},
            {"size": 20_000, "fct_s": 0.4, "arrival": T0 + 2, "wait_s": 0.0},
            {"size": 3_000_000, "fct_s": 6.0, "arrival": T0 + 3, "wait_s": 0.0},
            {"size": 3_000_000, "arrival": T0 + 9, "incomplete": True},
        ]
    }
    m = analyse(r).metrics
    assert m["offered_load_pct"] == 50
    assert m["fct_lt100k_mean_s"] == pytest.approx(0.3)
    assert m["flows_lt100k"] == 2 and m["completed_frac_gt1m"] == 0.5
    # the reference of a 3 MB flow is path 1 (10 Mbit/s, no delay): 3e6 B at 10 Mbit/s of frames
    ideal = ideal_fct_s(3_000_000, 10, 0)
    assert m["slowdown_gt1m_mean"] == pytest.approx(6.0 / ideal)
    assert "fct_100k_1m_mean_s" not in m  # no flow of that size
    assert m["completed_frac"] == 0.75 and m["slowdown_mean"] > 1


def test_poisson_arguments_carry_the_offered_rate_and_the_drain():
    doc = yaml.safe_load(yaml.safe_dump(DOC))
    doc["workload"][1] = {"kind": "poisson", "sizes": "datamining", "load_pct": 40,
                          "max_kb": 500, "drain_s": 3}
    sc = parse(doc)
    w = sc.workload[1]
    args = poisson_args(w, 1, ap.H2_IP, 10.0, 7, sc.offered_mbps(w))
    assert args[0] == "poisson"
    value = {k: args[args.index(k) + 1] for k in
             ("--port", "--sizes", "--rate-mbps", "--max-kb", "--arrivals-s", "--max-concurrent")}
    assert value == {"--port": "5001", "--sizes": "datamining", "--rate-mbps": "6",
                     "--max-kb": "500", "--arrivals-s": "7", "--max-concurrent": "0"}
    with pytest.raises(ValueError):
        sender_args(w, 1, ap.H2_IP, 10.0, 7)


def test_paired_ratios_pair_runs_by_seed():
    from mpsched.lab.fct import paired_ratios
    from mpsched.lab.report import RunResult

    def run(policy: str, seed: int, value: float) -> RunResult:
        return RunResult("s", policy, seed, seed, 30.0, metrics={"m": value})

    results = [run("ref", 1, 2.0), run("ref", 2, 4.0), run("ref", 3, 0.0),
               run("a", 1, 1.0), run("a", 2, 2.0), run("a", 3, 1.0), run("a", 4, 1.0)]
    out = paired_ratios(results, "m", "ref")
    (mean, ci), n = out[("s", "a")]
    assert n == 2 and mean == 0.5 and ci == 0.0  # seeds 3 (ref 0) and 4 (no ref) left out
    assert out[("s", "ref")][0][0] == 1.0


def test_senders_count_completed_failed_and_censored_transfers():
    from mpsched.lab.analysis import Senders

    s = Senders()
    s.add(0, {"ended": 110.0, "streams": [{"rtt_ms": [0, 5.0], "retrans": 2}],
              "transfers": [{"size": 1000, "fct_s": 0.5, "rtt_ms": 4.0, "retrans": 1},
                            {"size": 2000, "error": "refused"},
                            {"size": 3000, "arrival": 100.0}]})
    assert (s.started, s.failed_transfers) == (3, 1)
    assert s.fct == [(1000, 0.5)] and s.censored == [10.0]
    assert s.flows == [(1000, 0.5, False), (2000, None, False), (3000, 10.0, True)]
    assert s.rtt == [5.0, 4.0] and s.retrans == 3
