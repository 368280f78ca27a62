"""Flowlets, traffic classes, round robin, weights and the active set, MVQS virtual queues.

Run: make ptf    (or: python -m mpsched.ptfrun scheduling.FlowletGapTest)
"""

from __future__ import annotations

import time

import ptf.testutils as testutils
from base import (
    HOST_IP,
    HOST_MAC,
    HOST_PORT,
    PEER_EDGE,
    REMOTE_IP,
    SWITCH_MAC,
    EdgeSwitchTest,
)
from forwarding import path_of
from pinning import to_host
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched import addressing as ap
from mpsched.p4rt.pipeline import COUNTER_TX

EQUAL = {1: 1, 2: 1, 3: 1}
LONG_GAP_US = 10_000_000  # no flowlet ends during a test
SPORT = 33000


def flow_paths(test, n: int, sport: int = SPORT, gap_s: float = 0.0) -> list[int]:
    """The paths of n packets of one flow, gap_s apart."""
    out = []
    for _ in range(n):
        out.append(path_of(test, to_host(REMOTE_IP, sport)))
        if gap_s:
            time.sleep(gap_s)
    return out


class FlowletStickyTest(EdgeSwitchTest):
    """Mode flowlet, equal weights on 3 paths and a long gap: every packet of a flow stays
    on its first packet's path, while 48 different flows spread over all three paths."""

    def runTest(self) -> None:
        self.set_weights(EQUAL, insert=True, mode="flowlet", gap_us=LONG_GAP_US)
        for sport in (SPORT, SPORT + 1):
            paths = flow_paths(self, 12, sport)
            assert len(set(paths)) == 1, paths
        spread = {path_of(self, to_host(REMOTE_IP, 34000 + i)) for i in range(48)}
        assert spread == {1, 2, 3}, spread


class FlowletGapTest(EdgeSwitchTest):
    """A packet more than the gap after its flow's previous one starts a new flowlet,
    which draws a path afresh: with a 50 ms gap and packets 150 ms apart one flow visits
    several paths (all on one: probability 3 * 3^-16); the same flow with the gap
    raised at run time to 10 s (one MODIFY) keeps one path."""

    def runTest(self) -> None:
        self.set_weights(EQUAL, insert=True, mode="flowlet", gap_us=50_000)
        paths = flow_paths(self, 16, gap_s=0.15)
        assert len(set(paths)) >= 2, paths
        self.set_weights(EQUAL, mode="flowlet", gap_us=LONG_GAP_US)
        paths = flow_paths(self, 12, sport=SPORT + 7, gap_s=0.05)
        assert len(set(paths)) == 1, paths


class FlowletWeightChangeTest(EdgeSwitchTest):
    """The active set applies to flowlets in progress: a flowlet whose path loses its
    weight moves to a weighted path at its next packet, gap or not; flowlets whose path
    keeps its weight stay."""

    def runTest(self) -> None:
        self.set_weights(EQUAL, insert=True, mode="flowlet", gap_us=LONG_GAP_US)
        first = {s: path_of(self, to_host(REMOTE_IP, s)) for s in range(35000, 35024)}
        assert set(first.values()) == {1, 2, 3}, first
        self.set_weights({1: 1, 2: 1, 3: 0}, mode="flowlet", gap_us=LONG_GAP_US)
        after = {s: path_of(self, to_host(REMOTE_IP, s)) for s in first}
        for sport, path in first.items():
            if path == 3:
                assert after[sport] in (1, 2), (sport, after[sport])
            else:
                assert after[sport] == path, (sport, path, after[sport])


class HashWeightsTest(EdgeSwitchTest):
    """Mode hash (ECMP/WCMP): a path with weight 0 gets no flow; all weight on one path
    moves every flow there at once; equal weights again give back the same placement."""

    def runTest(self) -> None:
        flows = range(36000, 36032)
        self.set_weights({1: 1, 2: 0, 3: 1}, insert=True)
        before = {s: path_of(self, to_host(REMOTE_IP, s)) for s in flows}
        assert set(before.values()) == {1, 3}, before
        self.set_weights({1: 0, 2: 1, 3: 0})
        assert {path_of(self, to_host(REMOTE_IP, s)) for s in flows} == {2}
        self.set_weights({1: 1, 2: 0, 3: 1})
        assert {s: path_of(self, to_host(REMOTE_IP, s)) for s in flows} == before


class RoundRobinTest(EdgeSwitchTest):
    """Mode rr: consecutive packets of one flow take the weighted paths in turn (path 2,
    weight 0, is skipped), and the turn continues across flows of the class."""

    def runTest(self) -> None:
        self.set_weights({1: 1, 2: 0, 3: 5}, insert=True, mode="rr")
        paths = flow_paths(self, 6) + flow_paths(self, 2, sport=SPORT + 1)
        assert paths in ([1, 3] * 4, [3, 1] * 4), paths


def classified(dscp: int = 0, sport: int = 40000, dport: int = 80, proto: str = "tcp",
               src: str = HOST_IP, dst: str = REMOTE_IP):
    l4 = TCP(sport=sport, dport=dport) if proto == "tcp" else UDP(sport=sport, dport=dport)
    return (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=src, dst=dst, tos=dscp << 2) / l4
            / Raw(b"c" * 24))


class ClassMatchTest(EdgeSwitchTest):
    """Traffic classes: DSCP 46 -> class 1 (path 3 only), TCP destination ports
    5000-5999 -> class 2 (path 2 only), the upper half of the remote /24 -> class 3 (path 1,
    round robin); DSCP 46 to a port in 5000-5999 takes the higher priority (class 1);
    anything else stays in class 0 (path 1 only). A classified packet whose class has
    no weights entry is dropped and counted at path_tx[0]."""

    def runTest(self) -> None:
        p = self.pipeline
        self.set_weights({1: 1}, insert=True)
        self.set_weights({3: 1}, insert=True, class_id=1, mode="flowlet", gap_us=1000)
        self.set_weights({2: 1}, insert=True, class_id=2)
        self.set_weights({1: 1}, insert=True, class_id=3, mode="rr")
        self.client.insert(
            p.traffic_class(1, priority=30, dscp=46),
            p.traffic_class(2, priority=20, protocol=6, dst_port=(5000, 5999)),
            p.traffic_class(3, priority=10, dst=ap.host_prefix(ap.RECEIVER_EDGE, 128, 25)),
            p.traffic_class(4, priority=5, protocol=17, src_port=(7000, 7000)),
        )
        cases = [
            (classified(dscp=46), 1, 3),
            (classified(dport=5000), 2, 2),
            (classified(dport=5999), 2, 2),
            (classified(dport=6000), 0, 1),
            (classified(dport=5500, proto="udp"), 0, 1),
            (classified(dscp=46, dport=5500), 1, 3),
            (classified(dst=ap.host_ip(ap.RECEIVER_EDGE, 200)), 3, 1),
            (classified(dst=ap.host_ip(ap.RECEIVER_EDGE, 100)), 0, 1),
        ]
        for pkt, class_id, expected in cases:
            got = path_of(self, pkt)
            assert got == expected, (class_id, pkt.summary(), got)
        dropped_before = self.client.read_counter(COUNTER_TX)[0].packets
        testutils.send_packet(self, HOST_PORT, classified(proto="udp", sport=7000))
        testutils.verify_no_other_packets(self)
        assert self.client.read_counter(COUNTER_TX)[0].packets == dropped_before + 1


class ClassChangeKeepsFlowsTest(EdgeSwitchTest):
    """Changing a class's policy at run time (hash -> flowlet -> hash, same weights)
    neither drops a packet nor moves a flow whose path keeps its weight in hash mode."""

    def runTest(self) -> None:
        flows = range(37000, 37016)
        self.set_weights({1: 1, 2: 1}, insert=True)
        before = {s: path_of(self, to_host(REMOTE_IP, s)) for s in flows}
        self.set_weights({1: 1, 2: 1}, mode="flowlet", gap_us=LONG_GAP_US)
        for s in flows:
            assert path_of(self, to_host(REMOTE_IP, s)) in (1, 2)
        self.set_weights({1: 1, 2: 1})
        assert {s: path_of(self, to_host(REMOTE_IP, s)) for s in flows} == before


class VirtualQueueTest(EdgeSwitchTest):
    """Mode vq (FD-MVQS): each new flowlet takes the path with the least time factor
    T_p = pad_p + max(0, VQ_p - bdp_p) * k_p / 1024 over the weighted paths.
    pad = 100/50/1000 µs, bdp 0, k = 1024 µs per KiB (1 µs per byte) on paths 1-2, no
    drain: with 100-byte packets of four new flows the choices are 2, 1, 2, 1
    (T = 100/50, 100/150, 200/150, 200/250); a flowlet in progress stays. Then path 2
    drains fast: the next new flow takes path 2 again."""

    def runTest(self) -> None:
        p = self.pipeline
        self.set_weights(EQUAL, insert=True, mode="vq", gap_us=LONG_GAP_US)
        params = {1: (100, 0, 1024, 0), 2: (50, 0, 1024, 0), 3: (1000, 0, 0, 0)}
        self.client.insert(p.mvqs_params(PEER_EDGE, 0, params))
        pkt = to_host(REMOTE_IP, 38000)
        assert len(pkt) == 86, len(pkt)
        pad = b"v" * (100 - len(pkt))
        choices = [path_of(self, to_host(REMOTE_IP, 38000 + i) / Raw(pad)) for i in range(4)]
        assert choices == [2, 1, 2, 1], choices
        assert path_of(self, to_host(REMOTE_IP, 38000) / Raw(pad)) == 2
        params[2] = (50, 0, 1024, 1 << 20)
        self.client.modify(p.mvqs_params(PEER_EDGE, 0, params))
        time.sleep(0.01)
        assert path_of(self, to_host(REMOTE_IP, 38100) / Raw(pad)) == 2
