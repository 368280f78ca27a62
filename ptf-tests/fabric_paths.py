"""Fabrics, per destination (docs/fabric.md): probes, liveness and local failover are kept
per (peer edge, path), and a path towards an edge is judged by that edge's feedback about it
once the edge sends any (p4src/include/liveness.p4), not by what arrives on the path of the
same id in the other direction.

Run: make ptf    (or: python -m mpsched.ptfrun fabric_paths.ProbePerDestinationTest)
"""

from __future__ import annotations

import time

import ptf.testutils as testutils
from base import HOST_PORT, PATH_PORTS, PEER_EDGE, PEER_MAC, REMOTE_IP, EdgeSwitchTest
from fabric import THIRD_EDGE, THIRD_IP, THIRD_NET
from failover import DEAD_AFTER_US, PROBE_GAP_S
from path_tag import PathTag
from pinning import to_host
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import (
    COUNTER_PROBE_SKIPPED,
    COUNTER_TX,
    ETHERTYPE_PATH_TAG,
    PATH_FLAG_PROBE,
)

N_FLOWS = 16


def probe_from(src_edge: int, path_id: int, seq: int, fb_path: int = 0):
    """A probe as edge src_edge sends it to the switch under test on path path_id, with
    feedback about this switch's path fb_path to src_edge (measured just now) unless 0."""
    return (Ether(dst="00:00:00:00:00:00", src=PEER_MAC, type=ETHERTYPE_PATH_TAG)
            / PathTag(path_id=path_id, flags=PATH_FLAG_PROBE, seq=seq, tx_ts=1000,
                      src_edge=src_edge, next_type=0, fb_path=fb_path)
            / Raw(b"mpsP"))


def leaves(test, port: int) -> PathTag:
    """The tag of the next frame on `port` (which must come)."""
    result = testutils.dp_poll(test, port_number=port, timeout=2)
    assert isinstance(result, test.dataplane.PollSuccess), f"nothing on port {port}"
    return Ether(result.packet)[PathTag]


class FabricPathsTest(EdgeSwitchTest):
    """Edges 2 (REMOTE_IP) and 3 (THIRD_IP) both over paths 1 and 2 (ports 2 and 3: one
    uplink carries both destinations), weights 1:1 towards each."""

    def setUp(self) -> None:
        super().setUp()
        p = self.pipeline
        self.set_weights({1: 1, 2: 1}, insert=True)
        self.client.insert(p.route_to_paths(THIRD_NET, THIRD_EDGE),
                           p.weights(THIRD_EDGE, 0, {1: 1, 2: 1}),
                           *[p.path_nexthop(THIRD_EDGE, pid, PATH_PORTS[pid]) for pid in (1, 2)])
        self.seq: dict[tuple[int, int], int] = {}

    def probe_in(self, src_edge: int, path_id: int, fb_path: int = 0) -> None:
        """A probe from edge src_edge arrives on path path_id's port; nothing leaves."""
        seq = self.seq.get((src_edge, path_id), 0)
        testutils.send_packet(self, PATH_PORTS[path_id],
                              probe_from(src_edge, path_id, seq, fb_path))
        self.seq[src_edge, path_id] = seq + 1

    def flows_after_silence(self, live: list[tuple[int, int]], sport0: int
                            ) -> tuple[set[int], set[int]]:
        """Every (edge, path) of edges 2 and 3 heard from once, then only the cells `live`
        for 2.5 dead_after (of edge 2's paths), and while N_FLOWS flows from port `sport0`
        on go out: the paths they took towards edge 2 and towards edge 3."""
        for edge in (PEER_EDGE, THIRD_EDGE):
            for path_id in (1, 2):
                self.probe_in(edge, path_id)
        end = time.monotonic() + 2.5 * DEAD_AFTER_US / 1e6
        while time.monotonic() < end:
            for cell in live:
                self.probe_in(*cell)
            time.sleep(PROBE_GAP_S)
        to_peer, to_third = set(), set()
        for sport in range(sport0, sport0 + N_FLOWS):
            for cell in live:  # keep the live paths live however slow this is
                self.probe_in(*cell)
            to_peer.add(self.path_towards(REMOTE_IP, PEER_EDGE, sport))
            to_third.add(self.path_towards(THIRD_IP, THIRD_EDGE, sport))
        return to_peer, to_third

    def path_towards(self, dst_ip: str, dst_edge: int, sport: int) -> int:
        """A flow's packet from h1 to dst_ip: the path it leaves on (its tag's, which must be
        the path of the port, towards dst_edge)."""
        testutils.send_packet(self, HOST_PORT, to_host(dst_ip, sport))
        result = testutils.dp_poll(self, timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "no packet left the switch"
        t = Ether(result.packet)[PathTag]
        assert (t.dst_edge, PATH_PORTS[t.path_id]) == (dst_edge, result.port), t
        return t.path_id


class ProbePerDestinationTest(FabricPathsTest):
    """A probe PacketOut towards edge e on path p leaves on p's port towards e with dst_edge
    e and e's sequence numbers: probes towards 3 and 2 on path 2 both start at 0. Only e's
    cells count it: path_tx at (3, 2) only; after a packet towards 3 on path 2 the next probe
    there is skipped (probe_skipped at (3, 2)), while the probe towards 2 on path 2 goes."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.packet_out(*p.probe(2, THIRD_EDGE))
        t = leaves(self, PATH_PORTS[2])
        assert (t.dst_edge, t.path_id, t.flags, t.seq) == (THIRD_EDGE, 2, PATH_FLAG_PROBE, 0), t
        testutils.verify_no_other_packets(self)
        tx = self.client.read_counter(COUNTER_TX)
        counted = {cell: v.packets for cell, v in tx.items() if v.packets}
        assert counted == {self.cell(2, THIRD_EDGE): 1}, counted
        self.client.insert(p.route_via_path(f"{THIRD_IP}/32", THIRD_EDGE, 2))
        testutils.send_packet(self, HOST_PORT, to_host(THIRD_IP, 30000))
        assert leaves(self, PATH_PORTS[2]).seq == 1
        self.client.packet_out(*p.probe(2, THIRD_EDGE))
        testutils.verify_no_other_packets(self, timeout=0.5)
        self.client.packet_out(*p.probe(2, PEER_EDGE))
        t = leaves(self, PATH_PORTS[2])
        assert (t.dst_edge, t.path_id, t.seq) == (PEER_EDGE, 2, 0), t
        testutils.verify_no_other_packets(self)
        skipped = self.client.read_counter(COUNTER_PROBE_SKIPPED)
        counted = {cell: v.packets for cell, v in skipped.items() if v.packets}
        assert counted == {self.cell(2, THIRD_EDGE): 1}, counted


class FailoverPerDestinationTest(FabricPathsTest):
    """Liveness per destination: path 1 is silent from edge 2 but not from edge 3. After
    dead_after, flows towards edge 2 all move to path 2, while flows towards edge 3 keep
    using path 1 (and 2)."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.liveness_config(edge, pid, DEAD_AFTER_US)
                             for edge in (PEER_EDGE, THIRD_EDGE) for pid in (1, 2)])
        to_peer, to_third = self.flows_after_silence(
            [(PEER_EDGE, 2), (THIRD_EDGE, 1), (THIRD_EDGE, 2)], 31000)
        assert (to_peer, to_third) == ({2}, {1, 2}), (to_peer, to_third)


class DeadAfterPerPeerTest(FabricPathsTest):
    """dead_after is per (peer edge, path) (liveness_config's key): edge 3's paths get twenty
    times edge 2's, as the controller gives an idle pair's slow probes. Path 1 goes silent
    from both edges for 2.5 of edge 2's dead_after: flows towards edge 2 all move to path 2,
    while path 1 towards edge 3, within its own dead_after, keeps its flows."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.liveness_config(PEER_EDGE, pid, DEAD_AFTER_US) for pid in (1, 2)],
                           *[p.liveness_config(THIRD_EDGE, pid, 20 * DEAD_AFTER_US)
                             for pid in (1, 2)])
        to_peer, to_third = self.flows_after_silence([(PEER_EDGE, 2), (THIRD_EDGE, 2)], 36000)
        assert (to_peer, to_third) == ({2}, {1, 2}), (to_peer, to_third)


class LivenessByFeedbackTest(FabricPathsTest):
    """Edge 2's feedback judges this switch's paths to edge 2, once edge 2 sends any
    (liveness.p4): its first probes report paths 1 and 2 delivered; from then on it keeps
    reporting path 2 only, in probes that arrive on path 1 (the path of the same id in the
    other direction works) and never on path 2. After dead_after, path 1 counts as dead
    (flows towards edge 2 all take path 2) and path 2, armed by a probe this switch sent,
    as alive; once edge 2 reports path 1 again, the flows return to where they were."""

    def flows(self, fb_paths: tuple[int, ...]) -> dict[int, int]:
        out = {}
        for sport in range(32000, 32000 + N_FLOWS):
            for fb_path in fb_paths:  # feedback right before each flow, however slow this is
                self.probe_in(PEER_EDGE, 1, fb_path)
            out[sport] = self.path_towards(REMOTE_IP, PEER_EDGE, sport)
        return out

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.liveness_config(PEER_EDGE, pid, DEAD_AFTER_US) for pid in (1, 2)])
        for pid in (1, 2):  # the agent's probes arm both paths' timers (dead_after)
            self.client.packet_out(*p.probe(pid, PEER_EDGE))
            leaves(self, PATH_PORTS[pid])
        before = self.flows((1, 2))
        assert set(before.values()) == {1, 2}, before
        end = time.monotonic() + 2.5 * DEAD_AFTER_US / 1e6
        while time.monotonic() < end:
            self.probe_in(PEER_EDGE, 1, fb_path=2)
            time.sleep(PROBE_GAP_S)
        during = self.flows((2,))
        assert set(during.values()) == {2}, during
        after = self.flows((1, 2))
        assert after == before, (before, after)


class FeedbackCadenceTest(FabricPathsTest):
    """The feedback to an edge rotates over the path ids measured from it, 1 up to the
    highest (congestion.p4, fb_span), not over all MAX_PATHS, and each path the tags ride on
    has its own rotation, starting at its own id: after probes from edge 2 on paths 1 and 2,
    tags towards edge 2 on path 1 carry fb_path 1, 2, 1, and those on path 2 fb_path 2, 1,
    2. Each path's news thus travels on every path, and comes every second tag of each."""

    def runTest(self) -> None:
        p = self.pipeline
        for path_id in (1, 2):
            self.probe_in(PEER_EDGE, path_id)
        pinned = {1: "10.0.2.201", 2: "10.0.2.202"}
        self.client.insert(*[p.route_via_path(f"{ip}/32", PEER_EDGE, pid)
                             for pid, ip in pinned.items()])
        got: dict[int, list[int]] = {1: [], 2: []}
        for sport in range(33000, 33003):
            for pid, ip in pinned.items():
                testutils.send_packet(self, HOST_PORT, to_host(ip, sport))
                got[pid].append(leaves(self, PATH_PORTS[pid]).fb_path)
        testutils.verify_no_other_packets(self)
        assert got == {1: [1, 2, 1], 2: [2, 1, 2]}, got


class UnreportedPathDiesTest(FabricPathsTest):
    """Once edge 2 feeds back at all, a path it never reports is dead however much arrives
    on the path of the same id in the other direction: edge 2's probes all arrive on path 2
    and report path 1 only (this switch's path 2 never reached edge 2). Path 2, armed by a
    probe this switch sent, dies after dead_after: flows towards edge 2 all take path 1."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.liveness_config(PEER_EDGE, pid, DEAD_AFTER_US) for pid in (1, 2)])
        for pid in (1, 2):
            self.client.packet_out(*p.probe(pid, PEER_EDGE))
            leaves(self, PATH_PORTS[pid])
        end = time.monotonic() + 2.5 * DEAD_AFTER_US / 1e6
        while time.monotonic() < end:
            self.probe_in(PEER_EDGE, 2, fb_path=1)
            time.sleep(PROBE_GAP_S)
        paths = set()
        for sport in range(34000, 34000 + N_FLOWS):
            self.probe_in(PEER_EDGE, 2, fb_path=1)
            paths.add(self.path_towards(REMOTE_IP, PEER_EDGE, sport))
        assert paths == {1}, paths


class LeastDeadTest(FabricPathsTest):
    """When no weighted path towards an edge is alive, new traffic takes the least dead one,
    the path whose last sign of life is the latest (path_select.p4), not any weighted path:
    edge 2 reports path 1 for 2.5 dead_after after its last word on path 2 (path 2 failed),
    then goes silent (its news about path 1 stuck behind congestion on the way back), so
    both paths are dead, path 2 for longer. Every flow (hash mode: half of them hash to path
    2) leaves on path 1. Before, they spread over both, half of them onto the failed path."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.liveness_config(PEER_EDGE, pid, DEAD_AFTER_US) for pid in (1, 2)])
        for pid in (1, 2):  # the agent's probes arm both paths' timers (dead_after)
            self.client.packet_out(*p.probe(pid, PEER_EDGE))
            leaves(self, PATH_PORTS[pid])
        self.probe_in(PEER_EDGE, 1, fb_path=2)
        end = time.monotonic() + 2.5 * DEAD_AFTER_US / 1e6
        while time.monotonic() < end:
            self.probe_in(PEER_EDGE, 1, fb_path=1)
            time.sleep(PROBE_GAP_S)
        time.sleep(2 * DEAD_AFTER_US / 1e6)  # silence: path 1 dead too
        paths = {sport: self.path_towards(REMOTE_IP, PEER_EDGE, sport)
                 for sport in range(35000, 35000 + N_FLOWS)}
        assert set(paths.values()) == {1}, paths
