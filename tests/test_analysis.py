"""Per-run analysis on synthetic raw reports: goodput window, capacity, FCT, RTT, Jain."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from mpsched.lab.analysis import _interp, analyse, capacity_mbps
from mpsched.lab.runner import RunRaw, sender_args
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


def test_interp_clamps_and_interpolates():
    s = [(1.0, 10.0), (3.0, 30.0)]
    assert _interp(s, 0.0) == 10.0
    assert _interp(s, 2.0) == 20.0
    assert _interp(s, 9.0) == 30.0
    assert _interp([], 1.0) == 0.0


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
    args = sender_args(sc.workload[1], 1, "10.0.2.1", 8.0, 7)
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
