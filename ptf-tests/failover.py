"""Path liveness, probes (P4Runtime PacketOut, or frames from the probe port) and local fast
failover and recovery.

Run: make ptf    (or: python -m mpsched.ptfrun failover.FailoverRecoveryTest)
"""

from __future__ import annotations

import time

import ptf.testutils as testutils
from base import HOST_PORT, PATH_PORTS, PEER_EDGE, PEER_MAC, REMOTE_IP, EdgeSwitchTest
from forwarding import path_of
from path_tag import FEEDBACK_FIELDS, PathTag, out_tag
from pinning import PINNED_IP, to_host
from ptf.mask import Mask
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import (
    COUNTER_PROBE_SKIPPED,
    COUNTER_RX,
    COUNTER_TX,
    ETHERTYPE_PATH_TAG,
    PATH_FLAG_PROBE,
    PROBE_FRAME,
)

# Generous against PTF's and BMv2's slowness; the controller uses 50 ms.
DEAD_AFTER_US = 200_000
PROBE_GAP_S = 0.04
N_FLOWS = 16


def probe_from_path(path_id: int, seq: int = 0):
    """A probe as the far edge switch sends it onto path path_id."""
    return (Ether(dst="00:00:00:00:00:00", src=PEER_MAC, type=ETHERTYPE_PATH_TAG)
            / PathTag(path_id=path_id, flags=PATH_FLAG_PROBE, seq=seq, tx_ts=1000, next_type=0)
            / Raw(b"mpsP"))


def expect_probe(test, pipeline, path_id: int) -> bytes:
    """The next frame on path path_id's port is the probe frame with a path tag (path id,
    flags PROBE, next type 0; sequence number, time stamp and feedback not compared)."""
    eth = Ether(pipeline.probe(path_id, PEER_EDGE)[0])
    exp = Mask(Ether(bytes(
        Ether(dst=eth.dst, src=eth.src, type=ETHERTYPE_PATH_TAG)
        / out_tag(path_id=path_id, flags=PATH_FLAG_PROBE, next_type=0) / eth.payload)))
    for name in ("seq", "tx_ts", *FEEDBACK_FIELDS):
        exp.set_do_not_care_scapy(PathTag, name)
    result = testutils.dp_poll(test, port_number=PATH_PORTS[path_id], timeout=2)
    assert isinstance(result, test.dataplane.PollSuccess), f"no probe on path {path_id}"
    assert exp.pkt_match(result.packet), Ether(result.packet).show(dump=True)
    return result.packet


class LivenessTest(EdgeSwitchTest):
    """Weights 1:1 on paths 1 and 2 (path 3 weight 0), liveness configured for 1 and 2."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights({1: 1, 2: 1, 3: 0}, insert=True)
        self.client.insert(*[self.pipeline.liveness_config(PEER_EDGE, p, DEAD_AFTER_US)
                             for p in (1, 2)])
        self.seq = {1: 0, 2: 0}

    def probe_in(self, path_id: int) -> None:
        """A probe arrives from path path_id; nothing may leave the switch."""
        testutils.send_packet(self, PATH_PORTS[path_id], probe_from_path(path_id,
                                                                         self.seq[path_id]))
        self.seq[path_id] += 1

    def probe_for(self, seconds: float, paths: tuple[int, ...]) -> None:
        """Probes from `paths` every PROBE_GAP_S for `seconds`."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for p in paths:
                self.probe_in(p)
            time.sleep(PROBE_GAP_S)

    def flows(self, keep: tuple[int, ...] = ()) -> dict[int, int]:
        """sport -> path of N_FLOWS flows to REMOTE_IP; a probe from each path in `keep`
        before each flow keeps those paths alive however slow this is."""
        out = {}
        for sport in range(31000, 31000 + N_FLOWS):
            for p in keep:
                self.probe_in(p)
            out[sport] = path_of(self, to_host(REMOTE_IP, sport))
        return out


class ProbeOutTest(EdgeSwitchTest):
    """A PacketOut with packet_out.path_id = 2 leaves on path 2's port (only there) as
    the probe frame with a path tag: path id 2, flags PROBE, next type 0; a second one
    gets the next sequence number of path 2."""

    def runTest(self) -> None:
        payload, metadata = self.pipeline.probe(2, PEER_EDGE)
        assert metadata == {"path_id": 2, "dst_edge": PEER_EDGE}
        seqs, packet = [], b""
        for _ in range(2):
            self.client.packet_out(payload, metadata)
            packet = expect_probe(self, self.pipeline, 2)
            seqs.append(Ether(packet)[PathTag].seq)
        testutils.verify_no_other_packets(self)
        assert seqs[1] == seqs[0] + 1, seqs
        assert len(packet) == 14 + len(PathTag()) + len(PROBE_FRAME) - 14, len(packet)


class ProbePortTest(EdgeSwitchTest):
    """A frame from the probe port laid out like a PacketOut (the packet_out header, then the
    probe: Pipeline.probe_frame) leaves on its path's port only, tagged like a PacketOut's
    probe, with the path's next sequence number; frames there naming path 0, a path beyond
    the program's, or one without a next hop, or too short for an Ethernet header, leave
    nowhere."""

    def runTest(self) -> None:
        port = self.pipeline.probe_port
        assert port is not None, "the program has no probe port (@ports on packet_out)"
        seqs = []
        for _ in range(2):
            testutils.send_packet(self, port, self.pipeline.probe_frame(3, PEER_EDGE))
            seqs.append(Ether(expect_probe(self, self.pipeline, 3))[PathTag].seq)
        assert seqs[1] == seqs[0] + 1, seqs
        frame = self.pipeline.probe_frame(1, PEER_EDGE)
        bad = [bytes([0]) + frame[1:], bytes([self.pipeline.max_paths + 1]) + frame[1:],
               bytes([4]) + frame[1:],  # path 4: no path_nexthop entry
               frame[:14]]  # 13 bytes after the header: no whole Ethernet header
        for data in bad:
            testutils.send_packet(self, port, data)
        testutils.verify_no_other_packets(self, timeout=1)


class ProbeGateTest(EdgeSwitchTest):
    """A probe onto a path this switch placed traffic on since its previous probe there is
    dropped (probe_gate.p4): nothing leaves, it is counted in probe_skipped, not in path_tx,
    and uses no sequence number; the next one, with nothing in between, goes, numbered right
    after the traffic. Probes onto a path without traffic all go."""

    def probe(self, path_id: int) -> None:
        self.client.packet_out(*self.pipeline.probe(path_id, PEER_EDGE))

    def runTest(self) -> None:
        self.client.insert(self.pipeline.route_via_path(f"{PINNED_IP}/32", PEER_EDGE, 2))
        self.probe(2)
        first = Ether(expect_probe(self, self.pipeline, 2))[PathTag].seq
        testutils.send_packet(self, HOST_PORT, to_host(PINNED_IP, 30000))
        result = testutils.dp_poll(self, port_number=PATH_PORTS[2], timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "the pinned packet did not leave"
        assert Ether(result.packet)[PathTag].seq == first + 1
        tx_before = self.client.read_counter(COUNTER_TX)[self.cell(2)].packets
        self.probe(2)
        testutils.verify_no_other_packets(self, timeout=1)
        assert self.client.read_counter(COUNTER_PROBE_SKIPPED)[self.cell(2)].packets == 1
        assert self.client.read_counter(COUNTER_TX)[self.cell(2)].packets == tx_before
        self.probe(2)
        assert Ether(expect_probe(self, self.pipeline, 2))[PathTag].seq == first + 2
        for _ in range(3):
            self.probe(3)
            expect_probe(self, self.pipeline, 3)
        testutils.verify_no_other_packets(self)
        skipped = self.client.read_counter(COUNTER_PROBE_SKIPPED)
        assert skipped[self.cell(2)].packets == 1 and skipped[self.cell(3)].packets == 0, skipped


class ProbeInDroppedTest(LivenessTest):
    """A probe arriving from a path is counted as received from it and dropped, never
    forwarded (to h1 or anywhere); probes every PROBE_GAP_S keep the path alive well past
    dead_after: a flow on path 1 stays there."""

    def runTest(self) -> None:
        self.probe_in(1)
        self.probe_in(2)
        testutils.verify_no_other_packets(self)
        rx = self.client.read_counter(COUNTER_RX)
        assert rx[self.cell(1)].packets == 1 and rx[self.cell(2)].packets == 1, rx
        flows = self.flows(keep=(1, 2))
        sport = next(s for s, p in flows.items() if p == 1)
        self.probe_for(3 * DEAD_AFTER_US / 1e6, (1, 2))
        testutils.verify_no_other_packets(self)
        assert path_of(self, to_host(REMOTE_IP, sport)) == 1


class FailoverRecoveryTest(LivenessTest):
    """Traffic that hashes to path 1 moves to path 2 once path 1 has been silent for
    dead_after (probes only from path 2), while path 2's flows stay; all of it returns
    as soon as a probe from path 1 arrives again."""

    def runTest(self) -> None:
        before = self.flows(keep=(1, 2))
        assert set(before.values()) == {1, 2}, before
        self.probe_in(1)
        self.probe_in(2)
        self.probe_for(2.5 * DEAD_AFTER_US / 1e6, (2,))
        during = self.flows(keep=(2,))
        assert set(during.values()) == {2}, during
        self.probe_in(1)
        self.probe_in(2)
        after = self.flows(keep=(1, 2))
        assert after == before, (before, after)


class NoLivenessNeverDeadTest(LivenessTest):
    """Without a liveness_config entry a silent path is never declared dead."""

    def runTest(self) -> None:
        self.client.delete(self.pipeline.liveness_config(PEER_EDGE, 1, DEAD_AFTER_US))
        before = self.flows()
        self.probe_in(1)
        self.probe_in(2)
        self.probe_for(2.5 * DEAD_AFTER_US / 1e6, (2,))
        assert self.flows(keep=(2,)) == before


class ProbeArmsTimerTest(LivenessTest):
    """A path that never delivered anything dies dead_after after the first probe this
    switch sent onto it (a path dead from the start is detected too)."""

    def runTest(self) -> None:
        before = self.flows()
        assert 1 in before.values(), before
        # the flows above went onto path 1: the probe gate drops this probe (probe_gate.p4),
        # but the liveness stage, before it, has armed path 1's timer all the same
        self.client.packet_out(*self.pipeline.probe(1, PEER_EDGE))
        testutils.verify_no_other_packets(self, timeout=0.5)
        self.probe_for(2.5 * DEAD_AFTER_US / 1e6, (2,))
        during = self.flows(keep=(2,))
        assert set(during.values()) == {2}, (before, during)


class PinnedNoFailoverTest(LivenessTest):
    """Pinned routes do not fail over: a /32 pinned to path 1 stays on path 1 while path 1
    is dead (cross traffic stays on its path), whereas weighted flows leave it."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.route_via_path(f"{PINNED_IP}/32", PEER_EDGE, 1))
        self.probe_in(1)
        self.probe_in(2)
        self.probe_for(2.5 * DEAD_AFTER_US / 1e6, (2,))
        pinned = set()
        for i in range(4):
            self.probe_in(2)
            pinned.add(path_of(self, to_host(PINNED_IP, 32000 + i)))
        assert pinned == {1}, pinned
        assert set(self.flows(keep=(2,)).values()) == {2}
