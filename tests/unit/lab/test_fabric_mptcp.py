"""lab/fabric_mptcp.py: an MPTCP bulk connection's goodput against the capacity its paths
can give it: the paths alive over the window, less the larger of the other traffic leaving
its source edge and reaching its destination edge."""

from __future__ import annotations

import pytest

from mpsched.lab import fabric_analysis as fa
from mpsched.lab import fabric_mptcp as fm
from mpsched.lab.runner import RunRaw
from mpsched.lab.scenario import parse

T0 = 1_000.0
# 3 leaves x 2 spines at 10 Mbit/s; leaf1-spine2 down from 10 to 15 s; leaf2-spine1 at 4
FABRIC = {"leaf_spine": {"leaves": 3, "spines": 2, "link": {"rate_mbps": 10, "delay_ms": 1},
                         "overrides": [{"link": "leaf1-spine2",
                                        "schedule": [{"down_s": 10, "up_s": 15}]},
                                       {"link": "leaf2-spine1", "rate_mbps": 4}]}}
BULK = {"kind": "bulk", "mptcp": True, "subflows": 2, "pairs": [{"src": "h1_1", "dst": "h2_1"}]}
SHORT = {"kind": "poisson", "sizes": "websearch", "max_kb": 100, "load_pct": 10, "drain_s": 1}


def scenario():
    doc = {"name": "fm", "duration_s": 25, "warmup_s": 5, "fabric": FABRIC,
           "workload": [BULK, SHORT]}
    return parse(doc, fabric=True)


def test_the_paths_capacity_is_the_alive_paths_bottlenecks_over_the_window():
    fabric = scenario().fabric
    # leaf1->leaf2: spine1's path is limited by leaf2-spine1 (4), spine2's by 10
    assert fm.paths_capacity_mbps(fabric, (1, 2), 0, 10) == pytest.approx(14)
    assert fm.paths_capacity_mbps(fabric, (1, 2), 10, 15) == pytest.approx(4)
    # 5 to 25 s: 5 s of 14, 5 s of 4, 10 s of 14
    assert fm.paths_capacity_mbps(fabric, (1, 2), 5, 25) == pytest.approx((15 * 14 + 5 * 4) / 20)
    assert fm.paths_capacity_mbps(fabric, (3, 2), 0, 20) == pytest.approx(14)  # no failure
    assert fm.paths_capacity_mbps(fabric, (3, 1), 0, 20) == pytest.approx(17.5)  # 5 s of 10


def test_the_others_take_the_larger_of_their_load_at_either_end():
    assert fm.capacity_left_mbps(14.0, 1.0, 2.5) == 11.5
    assert fm.capacity_left_mbps(3.0, 1.0, 5.0) == 0.0


def test_a_run_gives_each_connection_its_fraction(tmp_path):
    sc = scenario()
    r = RunRaw(sc, "ecmp", 0, 1, tmp_path, t0=T0)
    # window 5..25 s; the bulk (workload 0) gets 20 MB from 10.0.1.1 at h2_1, i.e. 8 Mbit/s;
    # short flows: leaf1 -> leaf3 1 MB (0.4 Mbit/s, at the source edge), leaf3 -> leaf2
    # 2.5 MB (1 Mbit/s, at the destination edge) and leaf3 -> leaf1 (neither end)
    r.reports = {
        "sink0_h2_1": {"peers": {"10.0.1.1": [[T0 + 5, 0], [T0 + 25, 20_000_000]]}},
        "sink1_h3_1": {"peers": {"10.0.1.1": [[T0 + 5, 0], [T0 + 25, 1_000_000]]}},
        "sink1_h2_1": {"peers": {"10.0.3.1": [[T0 + 5, 0], [T0 + 25, 2_500_000]]}},
        "sink1_h1_1": {"peers": {"10.0.3.1": [[T0 + 5, 0], [T0 + 25, 9_000_000]]}},
    }
    res = fa.analyse(r)
    paths = (15 * 14 + 5 * 4) / 20
    got = res.pairs["leaf1->leaf2"]
    assert got["mptcp_goodput_mbps"] == pytest.approx(8.0)
    assert got["mptcp_paths_mbps"] == pytest.approx(paths)
    assert got["mptcp_other_mbps"] == pytest.approx(1.0)
    assert got["mptcp_capacity_mbps"] == pytest.approx(paths - 1.0)
    assert got["mptcp_goodput_frac"] == pytest.approx(8.0 / (paths - 1.0))
    m = res.metrics
    assert m["mptcp_goodput_frac"] == pytest.approx(8.0 / (paths - 1.0))
    assert m["mptcp_goodput_mbps"] == pytest.approx(8.0)
    assert "mptcp_goodput_frac" not in res.pairs["leaf3->leaf1"]


def test_no_mptcp_connection_no_figures():
    assert fm.run_metrics([]) == {}
    zero = fm.ConnectionFigures((1, 2), 1.0, 2.0, 3.0, 0.0)
    assert fm.run_metrics([zero])["mptcp_goodput_frac"] != fm.run_metrics([zero])[
        "mptcp_goodput_frac"]  # NaN: no capacity left to refer to
