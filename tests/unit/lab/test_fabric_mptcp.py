"""lab/fabric_mptcp.py: an MPTCP bulk connection's frames against the capacity its paths can
give it: the paths alive over the window, less the larger of the other traffic leaving its
source edge and reaching its destination edge (link counters less the connection's frames)."""

from __future__ import annotations

import pytest

from mpsched.lab import fabric_analysis as fa
from mpsched.lab import fabric_mptcp as fm
from mpsched.lab.fabric_workload import sender_plans
from mpsched.lab.pcap import PcapPacket
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


def packet(t: float, src: str, dst: str, dport: int, ip_len: int = 1476) -> PcapPacket:
    return PcapPacket(T0 + t, src, dst, 6, 40000, dport, 0, 0, ip_len - 52, ip_len)


def counters(t: float, mbit: dict[str, float]) -> tuple[float, dict[str, int]]:
    """Link counters at t s after T0 of links that have carried `mbit` Mbit/s since T0."""
    return T0 + t, {key: int(rate * 1e6 / 8 * t) for key, rate in mbit.items()}


def test_a_connection_is_measured_in_frames_against_the_capacity_others_leave():
    sc = scenario()
    plans = sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, 1)
    # window 5..25 s. The bulk (workload 0) from h1_1 (10.0.1.1 and 10.0.1.9) to h2_1:5000:
    # 1000 frames of 1476 + 14 + 24 = 1514 bytes a second from each address (24.224 Mbit/s in
    # all), at h2_1; short flows to h2_1:5001 and packets outside the window do not count
    pkts = [packet(t / 10, a, "10.0.2.1", 5000) for t in range(50, 250) for a in
            ("10.0.1.1", "10.0.1.9") for _ in range(100)]
    pkts += [packet(7.0, "10.0.1.1", "10.0.2.1", 5001), packet(26.0, "10.0.1.1", "10.0.2.1",
                                                                5000)]
    frames = 2 * 1000 * 1514 * 8 / 1e6
    # leaf1's links out carry 26 Mbit/s, leaf2's in 25.5: others take 26 - frames at leaf1
    links = [counters(t, {"leaf1-spine1:ab": 13.0, "leaf1-spine2:ab": 13.0,
                          "leaf2-spine1:ba": 12.75, "leaf2-spine2:ba": 12.75,
                          "leaf1-spine1:ba": 99.0}) for t in range(0, 26)]
    sink = {"peers": {"10.0.1.1": [[T0 + 5, 0], [T0 + 25, 50_000_000]]}}  # 20 Mbit/s
    run = fm.RunData({"sink0_h2_1": sink}, {"h2_1": pkts}, links, T0, 5000)
    (got,) = fm.connection_metrics(plans, run, sc.fabric, 5.0, 25.0)
    paths = (15 * 14 + 5 * 4) / 20
    assert got.pair == (1, 2)
    assert got.frames_mbps == pytest.approx(frames)
    assert got.goodput_mbps == pytest.approx(20.0)
    assert got.other_mbps == pytest.approx(26.0 - frames)
    assert got.capacity_mbps == pytest.approx(max(0.0, paths - (26.0 - frames)))
    assert got.frac == pytest.approx(frames / (paths - 26.0 + frames))
    assert got.of_paths == pytest.approx(20.0 / paths)
    m = fm.run_metrics([got])
    assert m["mptcp_goodput_frac"] == pytest.approx(got.frac)
    assert fm.pair_metrics([got])[(1, 2)]["mptcp_frames_mbps"] == pytest.approx(frames)


def test_edge_link_bytes_take_each_links_direction_away_from_or_towards_the_edge():
    fabric = scenario().fabric
    links = [(T0, {"leaf1-spine1:ab": 0, "leaf1-spine1:ba": 0}),
             (T0 + 10, {"leaf1-spine1:ab": 1000, "leaf1-spine1:ba": 300})]
    assert fm.edge_link_bytes(links, fabric, "leaf1", True, T0, 0, 10) == 1000
    assert fm.edge_link_bytes(links, fabric, "leaf1", False, T0, 0, 5) == 150
    assert fm.edge_link_bytes(links, fabric, "spine1", True, T0, 0, 10) == 300


def test_a_fabric_run_without_captures_has_no_frames(tmp_path):
    r = RunRaw(scenario(), "ecmp", 0, 1, tmp_path, t0=T0)
    r.reports = {"sink0_h2_1": {"peers": {"10.0.1.1": [[T0 + 5, 0], [T0 + 25, 20_000_000]]}}}
    res = fa.analyse(r)
    assert res.pairs["leaf1->leaf2"]["mptcp_goodput_mbps"] == pytest.approx(8.0)
    assert res.pairs["leaf1->leaf2"]["mptcp_frames_mbps"] == 0
    assert res.metrics["mptcp_goodput_of_paths"] == pytest.approx(8.0 / ((15 * 14 + 5 * 4) / 20))


def test_no_mptcp_connection_no_figures():
    assert fm.run_metrics([]) == {}
    zero = fm.ConnectionFigures((1, 2), 1.0, 1.1, 2.0, 3.0, 0.0)
    assert fm.run_metrics([zero])["mptcp_goodput_frac"] != fm.run_metrics([zero])[
        "mptcp_goodput_frac"]  # NaN: no capacity left to refer to
