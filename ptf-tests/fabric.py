"""Fabrics (docs/fabric.md; p4src/include/edge_config.p4): tags name their source and
destination edge; a tag of another edge is forwarded by (source edge, destination edge,
path) and touches nothing else; sequence numbers, counters and path measurement are kept per
destination (sender) and per source edge (receiver), an arrival keyed by its tag, not its
port; malformed tags are dropped and counted; the feedback makes its round trip across a
transit hop. (Probes, liveness and failover per destination: fabric_paths.py.)

Run: make ptf    (or: python -m mpsched.ptfrun fabric.TransitTest)
"""

from __future__ import annotations

import time

import ptf.testutils as testutils
from base import (
    HOST_IP,
    HOST_MAC,
    HOST_PORT,
    MY_EDGE,
    PATH_PORTS,
    PEER_EDGE,
    REMOTE_IP,
    SWITCH_MAC,
    EdgeSwitchTest,
    P4RuntimeTest,
)
from forwarding import path_of
from path_tag import PathTag, tag
from pinning import to_host
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from telemetry import delivered, remote_packet

from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_RX,
    COUNTER_TX,
    DIGEST_PATH_REPORT,
)
from tests.waiting import wait_until

NO_DIGEST_WAIT = 0.5  # seconds to wait before concluding no digest came
# A third and a fourth edge of the fabric, and a subnet behind the third.
THIRD_EDGE, FOURTH_EDGE = 3, 4
THIRD_NET, THIRD_IP = "10.0.9.0/24", "10.0.9.5"


def far_packet(src: str, dst: str, payload: int = 20):
    """A UDP packet between two hosts of other edges, as it crosses the fabric."""
    return (Ether(src=SWITCH_MAC, dst=SWITCH_MAC) / IP(src=src, dst=dst, ttl=40)
            / UDP(sport=1111, dport=2222) / Raw(b"t" * payload))


class FabricTest(EdgeSwitchTest):
    """Counters read back as plain numbers."""

    def counts(self) -> tuple[int, int, dict[str, int]]:
        """Packets received from and placed onto the paths (summed), and drops by reason."""
        rx = sum(v.packets for v in self.client.read_counter(COUNTER_RX).values())
        tx = sum(v.packets for v in self.client.read_counter(COUNTER_TX).values())
        drops = self.pipeline.drop_counts(self.client.read_counter(COUNTER_DROP_REASON))
        return rx, tx, {name: v.packets for name, v in drops.items() if v.packets}

    def report(self) -> dict[str, int]:
        digest = self.client.read_digest_list(2.0)
        assert digest is not None, "no path report"
        (one,) = self.client.decode_digest_list(DIGEST_PATH_REPORT, digest)
        return one


class TransitTest(FabricTest):
    """A tag of another pair of edges (3 -> 4, path 2) arriving from a path leaves on the
    port its transit_nexthop entry names, byte for byte (no TTL decrement, no re-tagging),
    and touches no state of this edge: path_rx, path_tx and the drop counters stay 0, no
    path report is sent (every path reported at once), this edge's next tag onto path 2
    carries sequence number 0, and its measurement of path 2 from its peer starts at the
    peer's first packet (nothing lost)."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.transit_nexthop(THIRD_EDGE, FOURTH_EDGE, 2, PATH_PORTS[3]),
                           *[p.report_config(e, pid, 0) for e in (PEER_EDGE, THIRD_EDGE)
                             for pid in PATH_PORTS])
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)
        self.set_weights({2: 1}, insert=True)
        for seq in (100, 101, 103):
            frame = tag(far_packet("10.0.7.1", "10.0.8.1"), 2, seq=seq, tx_ts=5000 + seq,
                        src_edge=THIRD_EDGE, dst_edge=FOURTH_EDGE)
            testutils.send_packet(self, PATH_PORTS[1], frame)
            testutils.verify_packet(self, frame, PATH_PORTS[3])
        testutils.verify_no_other_packets(self)
        assert self.counts() == (0, 0, {}), self.counts()
        assert self.client.read_digest_list(NO_DIGEST_WAIT) is None, "transit was measured"

        out = (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst="10.0.2.2", ttl=64)
               / UDP(sport=5, dport=6) / Raw(b"o" * 20))
        testutils.send_packet(self, HOST_PORT, out)
        result = testutils.dp_poll(self, port_number=PATH_PORTS[2], timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "nothing onto path 2"
        sent = Ether(result.packet)[PathTag]
        assert (sent.seq, sent.src_edge, sent.dst_edge) == (0, MY_EDGE, PEER_EDGE), sent

        pkt = remote_packet()
        testutils.send_packet(self, PATH_PORTS[2], tag(pkt, 2, seq=0))
        testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        r = self.report()
        assert (r["src_edge"], r["rx_packets"], r["lost"], r["reordered"]) == (
            PEER_EDGE, 1, 0, 0), r


class NoTransitTest(FabricTest):
    """A well-formed tag of another pair of edges without a transit_nexthop entry leaves
    nowhere and counts once, as NO_TRANSIT, before anything of this edge counts it."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.transit_nexthop(THIRD_EDGE, FOURTH_EDGE, 2,
                                                         PATH_PORTS[3]))
        for src, dst, path_id in ((THIRD_EDGE, FOURTH_EDGE, 1), (FOURTH_EDGE, THIRD_EDGE, 2),
                                  (PEER_EDGE, THIRD_EDGE, 2)):
            frame = tag(far_packet("10.0.7.1", "10.0.8.1"), path_id, src_edge=src,
                        dst_edge=dst)
            testutils.send_packet(self, PATH_PORTS[1], frame)
        testutils.verify_no_other_packets(self)
        assert self.counts() == (0, 0, {"no_transit": 3}), self.counts()


class TransitOnlyTest(P4RuntimeTest):
    """A switch without an edge id (no switch_config entry) is a transit switch only: the
    tags of any pair of edges with a transit_nexthop entry are forwarded unchanged (1 -> 2
    and 2 -> 1 on path 1 here), the others dropped as NO_TRANSIT."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.transit_nexthop(1, 2, 1, PATH_PORTS[2]),
                           p.transit_nexthop(2, 1, 1, PATH_PORTS[1]))
        for src, dst, in_port, out_port in ((1, 2, PATH_PORTS[1], PATH_PORTS[2]),
                                            (2, 1, PATH_PORTS[2], PATH_PORTS[1])):
            frame = tag(far_packet("10.0.7.1", "10.0.8.1"), 1, seq=9, src_edge=src,
                        dst_edge=dst)
            testutils.send_packet(self, in_port, frame)
            testutils.verify_packet(self, frame, out_port)
        testutils.send_packet(self, PATH_PORTS[1], tag(far_packet("10.0.7.1", "10.0.8.1"), 2,
                                                       src_edge=1, dst_edge=2))
        testutils.verify_no_other_packets(self)
        drops = self.pipeline.drop_counts(self.client.read_counter(COUNTER_DROP_REASON))
        assert {n: v.packets for n, v in drops.items() if v.packets} == {"no_transit": 1}


class MalformedTagTest(FabricTest):
    """A tag whose source or destination edge is 0 or above MAX_EDGES, or whose source is
    this switch's own edge, is dropped and counted as TAG_EDGE; one whose path id is 0 or
    above MAX_PATHS as TAG_PATH (probes alike). None is counted in path_rx or reaches h1."""

    def runTest(self) -> None:
        beyond_edge, beyond_path = self.pipeline.max_edges + 1, self.pipeline.max_paths + 1
        cases = {
            "tag_edge": [(0, MY_EDGE, 1), (beyond_edge, MY_EDGE, 1), (PEER_EDGE, 0, 1),
                         (PEER_EDGE, beyond_edge, 1), (MY_EDGE, MY_EDGE, 1),
                         (MY_EDGE, PEER_EDGE, 1)],
            "tag_path": [(PEER_EDGE, MY_EDGE, 0), (PEER_EDGE, MY_EDGE, beyond_path),
                         (THIRD_EDGE, FOURTH_EDGE, 0)],
        }
        for tags in cases.values():
            for src, dst, path_id in tags:
                testutils.send_packet(self, PATH_PORTS[1], tag(remote_packet(), path_id,
                                                               src_edge=src, dst_edge=dst))
        probe = bytes(Ether(src=SWITCH_MAC, dst=SWITCH_MAC, type=0x88B5)
                      / PathTag(path_id=1, flags=1, src_edge=0, next_type=0)) + b"probe"
        testutils.send_packet(self, PATH_PORTS[1], probe)
        testutils.verify_no_other_packets(self)
        expect = {"tag_edge": len(cases["tag_edge"]) + 1, "tag_path": len(cases["tag_path"])}
        assert self.counts() == (0, 0, expect), self.counts()


class PerDestinationStateTest(FabricTest):
    """With two peer edges (2, and 3 behind 10.0.9.0/24, both reached over path 1, each
    with its own class-0 weights), the tags towards each carry their own sequence numbers
    (edge 2: 0, 1, 2, then 3 after edge 3's 0) and count in their own path_tx cell (4 and
    1 packets on path 1), and the measurement of path 1 from each
    source edge is kept apart: edge 3's first packet (sequence number 0) counts nothing lost
    or reordered and is the first received from edge 3, and edge 2's path 1 goes on where it
    was."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.route_to_paths(THIRD_NET, THIRD_EDGE),
                           p.path_nexthop(THIRD_EDGE, 1, PATH_PORTS[3]),
                           p.weights(THIRD_EDGE, 0, {1: 1}),
                           p.report_config(PEER_EDGE, 1, 0), p.report_config(THIRD_EDGE, 1, 0))
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)
        self.set_weights({1: 1}, insert=True)
        got = []
        for i, (dst_ip, port) in enumerate((("10.0.2.2", PATH_PORTS[1]),) * 3
                                           + ((THIRD_IP, PATH_PORTS[3]),)
                                           + (("10.0.2.2", PATH_PORTS[1]),)):
            out = (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=dst_ip, ttl=64)
                   / UDP(sport=100 + i, dport=6) / Raw(b"o" * 20))
            testutils.send_packet(self, HOST_PORT, out)
            result = testutils.dp_poll(self, port_number=port, timeout=2)
            assert isinstance(result, self.dataplane.PollSuccess), f"packet {i} not out"
            t = Ether(result.packet)[PathTag]
            got.append((t.dst_edge, t.path_id, t.seq))
        testutils.verify_no_other_packets(self)
        assert got == [(2, 1, 0), (2, 1, 1), (2, 1, 2), (3, 1, 0), (2, 1, 3)], got
        tx = self.client.read_counter(COUNTER_TX)
        assert (tx[self.cell(1)].packets, tx[self.cell(1, THIRD_EDGE)].packets) == (4, 1), tx

        def arrive(src_edge: int, src_ip: str, seq: int) -> dict[str, int]:
            pkt = (Ether(src=SWITCH_MAC, dst=SWITCH_MAC) / IP(src=src_ip, dst=HOST_IP, ttl=63)
                   / UDP(sport=7, dport=8) / Raw(b"i" * 20))
            testutils.send_packet(self, PATH_PORTS[1], tag(pkt, 1, seq=seq, tx_ts=1000 + seq,
                                                           src_edge=src_edge))
            testutils.verify_packet(self, delivered(pkt), HOST_PORT)
            r = self.report()
            return {k: r[k] for k in ("src_edge", "seq", "rx_packets", "lost", "reordered")}

        for seq in range(5):
            arrive(PEER_EDGE, "10.0.2.2", seq)
        assert arrive(THIRD_EDGE, THIRD_IP, 0) == {
            "src_edge": 3, "seq": 0, "rx_packets": 1, "lost": 0, "reordered": 0}
        assert arrive(PEER_EDGE, "10.0.2.2", 5) == {
            "src_edge": 2, "seq": 5, "rx_packets": 6, "lost": 0, "reordered": 0}


class ReportIntervalPerPeerTest(FabricTest):
    """The report interval is per (source edge, path): path 1 from edge 2 at interval 0 is
    reported for every packet, path 1 from edge 3 at 1 s once for a burst, path 1 from edge 4
    (no entry) never; all three are measured (each report counts its own packets)."""

    INTERVAL_US = 1_000_000
    BURST = 4

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.report_config(PEER_EDGE, 1, 0),
                           p.report_config(THIRD_EDGE, 1, self.INTERVAL_US))
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)
        time.sleep(self.INTERVAL_US / 1e6)  # a whole interval since the pipeline push
        start = time.monotonic()
        for seq in range(self.BURST):
            for src_edge, src_ip in ((PEER_EDGE, "10.0.2.2"), (THIRD_EDGE, THIRD_IP),
                                     (FOURTH_EDGE, "10.0.8.1")):
                pkt = (Ether(src=SWITCH_MAC, dst=SWITCH_MAC)
                       / IP(src=src_ip, dst=HOST_IP, ttl=63) / UDP(sport=7, dport=8)
                       / Raw(b"i" * 20))
                testutils.send_packet(self, PATH_PORTS[1], tag(pkt, 1, seq=seq,
                                                               src_edge=src_edge))
                testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        elapsed = time.monotonic() - start
        got: dict[int, list[tuple[int, int]]] = {}
        while (digest := self.client.read_digest_list(NO_DIGEST_WAIT)) is not None:
            for r in self.client.decode_digest_list(DIGEST_PATH_REPORT, digest):
                got.setdefault(r["src_edge"], []).append((r["seq"], r["rx_packets"]))
        assert got[PEER_EDGE] == [(i, i + 1) for i in range(self.BURST)], got
        # one on an idle machine (the burst takes ms), more only if it spanned intervals
        assert got[THIRD_EDGE][0] == (0, 1), got
        assert len(got[THIRD_EDGE]) <= 1 + int(elapsed * 1e6 // self.INTERVAL_US), got
        assert FOURTH_EDGE not in got, got


class FeedbackPerDestinationTest(FabricTest):
    """The congestion feedback in a tag is about the paths from the tag's destination edge
    to here (congestion.p4, rotating per destination): after packets from edge 2 on path 1
    (measured here), the first tag towards edge 3, from which nothing arrived, carries none
    (fb_path 0), and the first towards edge 2 carries path 1's metrics (fb_path 1)."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.route_to_paths(THIRD_NET, THIRD_EDGE),
                           p.path_nexthop(THIRD_EDGE, 1, PATH_PORTS[3]),
                           p.weights(THIRD_EDGE, 0, {1: 1}))
        self.set_weights({1: 1}, insert=True)
        for seq in range(3):
            pkt = remote_packet()
            testutils.send_packet(self, PATH_PORTS[1], tag(pkt, 1, seq=seq, tx_ts=1000 + seq))
            testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        got = []
        for dst_ip, port in ((THIRD_IP, PATH_PORTS[3]), ("10.0.2.2", PATH_PORTS[1])):
            out = (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=dst_ip, ttl=64)
                   / UDP(sport=9, dport=6) / Raw(b"o" * 20))
            testutils.send_packet(self, HOST_PORT, out)
            result = testutils.dp_poll(self, port_number=port, timeout=2)
            assert isinstance(result, self.dataplane.PollSuccess), f"nothing towards {dst_ip}"
            t = Ether(result.packet)[PathTag]
            got.append((t.dst_edge, t.fb_path))
        testutils.verify_no_other_packets(self)
        assert got == [(THIRD_EDGE, 0), (PEER_EDGE, 1)], got


class ArrivalsKeyedByTagTest(FabricTest):
    """One fabric port carries the tags of several (source edge, path) pairs: tags of edge
    2's paths 1 and 3 and of edge 3's path 2, all arriving on path 1's port, are delivered,
    counted in path_rx at their tag's (source edge, path) and measured there (each pair's
    report names it, with its own packet count and no loss across the interleaving); none
    counts at (edge 2, path 1), the port's own. An untagged packet on that port is
    delivered and counted nowhere."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.report_config(e, pid, 0) for e in (PEER_EDGE, THIRD_EDGE)
                             for pid in PATH_PORTS])
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)
        arrivals = [(PEER_EDGE, 3, 0), (THIRD_EDGE, 2, 0), (PEER_EDGE, 3, 1),
                    (PEER_EDGE, 2, 0), (THIRD_EDGE, 2, 1), (PEER_EDGE, 3, 2)]
        seen: dict[tuple[int, int], int] = {}
        for src_edge, path_id, seq in arrivals:
            pkt = remote_packet()
            testutils.send_packet(self, PATH_PORTS[1], tag(pkt, path_id, seq=seq,
                                                           tx_ts=100 + seq, src_edge=src_edge))
            testutils.verify_packet(self, delivered(pkt), HOST_PORT)
            r = self.report()
            seen[src_edge, path_id] = seen.get((src_edge, path_id), 0) + 1
            assert (r["src_edge"], r["path_id"], r["seq"], r["rx_packets"], r["lost"]) == (
                src_edge, path_id, seq, seen[src_edge, path_id], 0), r
        pkt = remote_packet()
        testutils.send_packet(self, PATH_PORTS[1], pkt)
        testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        testutils.verify_no_other_packets(self)
        rx = self.client.read_counter(COUNTER_RX)
        counted = {cell: v.packets for cell, v in rx.items() if v.packets}
        assert counted == {self.cell(3): 3, self.cell(2): 1,
                           self.cell(2, THIRD_EDGE): 2}, counted


class FeedbackRoundTripTest(FabricTest):
    """The feedback round trip across a transit hop, edge A -> transit -> edge B and back,
    with the one switch under test playing each switch in turn (its switch_config: edge 1
    as A, none as the transit switch, edge 2 as B; each role's state lives in its own
    cells). A (mode CA towards B over paths 1 and 2, loss costly) sends three probes onto
    path 1 (new flows then spread over both paths); the transit hop forwards the first and
    the third unchanged (the second is lost on the way); B measures path 1 from A (one
    loss), and its probe back to A on its own path 1 carries that feedback (fb_path 1,
    fb_loss > 0); the transit hop forwards it; A files it under (B, path 1): new flows all
    avoid path 1."""

    def role(self, edge: int | None, old: int | None) -> None:
        """The switch under test becomes edge `edge` (None: a transit switch only)."""
        p = self.pipeline
        if old is not None:
            self.client.delete(p.switch_config(old))
        if edge is not None:
            self.client.insert(p.switch_config(edge))

    def transit(self, frame: bytes, in_port: int, out_port: int) -> bytes:
        testutils.send_packet(self, in_port, frame)
        testutils.verify_packet(self, frame, out_port)
        return frame

    def flows(self, first: int) -> set[int]:
        return {path_of(self, to_host(REMOTE_IP, sport)) for sport in range(first, first + 16)}

    def runTest(self) -> None:
        p, a, b = self.pipeline, MY_EDGE, PEER_EDGE
        self.set_weights({1: 1, 2: 1}, insert=True, mode="ca", gap_us=10_000_000)
        self.client.insert(p.ca_params(b, 0, {"c_loss": 256 * 1000, "max_age_us": 2_000_000}),
                           p.transit_nexthop(a, b, 1, PATH_PORTS[2]),
                           p.transit_nexthop(b, a, 1, PATH_PORTS[1]),
                           p.path_nexthop(a, 1, PATH_PORTS[3]))
        probes = []
        for _ in range(3):
            self.client.packet_out(*p.probe(1, b))
            result = testutils.dp_poll(self, port_number=PATH_PORTS[1], timeout=2)
            assert isinstance(result, self.dataplane.PollSuccess), "A's probe did not leave"
            probes.append(bytes(result.packet))
        assert self.flows(42000) == {1, 2}
        self.role(None, a)
        crossed = [self.transit(f, PATH_PORTS[1], PATH_PORTS[2]) for f in (probes[0], probes[2])]
        self.role(b, None)
        for frame in crossed:
            testutils.send_packet(self, PATH_PORTS[2], frame)
        testutils.verify_no_other_packets(self)
        self.client.packet_out(*p.probe(1, a))
        result = testutils.dp_poll(self, port_number=PATH_PORTS[3], timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "B's probe did not leave"
        back = Ether(result.packet)[PathTag]
        assert (back.src_edge, back.dst_edge, back.path_id, back.fb_path) == (b, a, 1, 1), back
        assert back.fb_loss > 0, back
        self.role(None, b)
        frame = self.transit(bytes(result.packet), PATH_PORTS[3], PATH_PORTS[1])
        self.role(a, None)
        testutils.send_packet(self, PATH_PORTS[1], frame)
        cell = self.cell(1)
        wait_until(lambda: self.client.read_counter(COUNTER_RX, cell)[cell].packets == 1,
                   timeout=10, interval=0.01, what="B's probe at A")
        assert self.flows(43000) == {2}
