"""The path tag and per-path telemetry: push at the ingress edge, pop and measurement
(loss, reordering, one-way delay time stamps) at the egress edge, rate-bounded
path_report_t digests.

Run: make ptf    (or: python -m mpsched.ptfrun telemetry.LossCountTest)
"""

from __future__ import annotations

import time

import ptf.testutils as testutils
from base import (
    HOST_IP,
    HOST_MAC,
    HOST_PORT,
    PATH_PORTS,
    PEER_EDGE,
    REMOTE_IP,
    SWITCH_MAC,
    EdgeSwitchTest,
)
from forwarding import PEER_MAC, host_packet, routed
from path_tag import PathTag, tag, tagged
from pinning import PINNED_IP
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import COUNTER_RX, DIGEST_PATH_REPORT

NO_DIGEST_WAIT = 0.5  # seconds to wait before concluding no digest came


def remote_packet(payload: int = 20):
    """A UDP packet from the remote subnet to h1, as the other edge switch sends it
    (routed there, untagged)."""
    return (Ether(src=PEER_MAC, dst=SWITCH_MAC) / IP(src=REMOTE_IP, dst=HOST_IP, ttl=63)
            / UDP(sport=1234, dport=4321) / Raw(b"y" * payload))


def delivered(pkt):
    """What h1 receives for an untagged pkt from a path: MACs rewritten, TTL - 1."""
    out = routed(pkt)
    out[Ether].src, out[Ether].dst = SWITCH_MAC, HOST_MAC
    return Ether(bytes(out))


class TelemetryTest(EdgeSwitchTest):
    """An edge switch with path_report_t digests enabled (one report per DigestList)."""

    def setUp(self) -> None:
        super().setUp()
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)

    def reports(self, timeout: float = NO_DIGEST_WAIT) -> list[dict[str, int]]:
        """Every report that arrives until none came for `timeout` seconds."""
        out = []
        while (digest := self.client.read_digest_list(timeout)) is not None:
            out += self.client.decode_digest_list(DIGEST_PATH_REPORT, digest)
        return out

    def report(self) -> dict[str, int]:
        digest = self.client.read_digest_list(2.0)
        assert digest is not None, "no path report"
        (one,) = self.client.decode_digest_list(DIGEST_PATH_REPORT, digest)
        return one

    def send_tagged(self, path_id: int, seq: int, tx_ts: int = 1000, payload: int = 20):
        """A tagged packet for h1 arriving on path path_id; h1 must get it untagged."""
        pkt = remote_packet(payload)
        testutils.send_packet(self, PATH_PORTS[path_id], tag(pkt, path_id, seq, tx_ts))
        testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        return len(tag(pkt, path_id, seq, tx_ts))


class TagPushTest(EdgeSwitchTest):
    """Every packet placed onto a path carries a tag: the path's id, flags 0, next type
    IPv4, a sequence number counting 0, 1, 2, ... per path independently (weighted path
    1 and pinned path 2 interleaved), a nondecreasing tx time stamp; after the tag, the
    routed IPv4 packet."""

    def runTest(self) -> None:
        self.set_weights({1: 1}, insert=True)
        self.client.insert(self.pipeline.route_via_path(f"{PINNED_IP}/32", PEER_EDGE, 2))
        seqs: dict[int, list[int]] = {1: [], 2: []}
        last_ts = 0
        for i in range(12):
            path_id = 2 if i % 3 == 0 else 1
            pkt = host_packet(sport=41000 + i)
            if path_id == 2:
                pkt[IP].dst = PINNED_IP
                pkt = Ether(bytes(pkt))
            testutils.send_packet(self, HOST_PORT, pkt)
            result = testutils.dp_poll(self, port_number=PATH_PORTS[path_id], timeout=2)
            assert isinstance(result, self.dataplane.PollSuccess), f"packet {i} not on path"
            assert tagged(routed(pkt), path_id).pkt_match(result.packet), i
            got = Ether(result.packet)
            assert got[Ether].type == 0x88B5
            t = got[PathTag]
            assert (t.path_id, t.flags, t.next_type) == (path_id, 0, 0x0800), t
            assert t.tx_ts >= last_ts, (t.tx_ts, last_ts)
            last_ts = t.tx_ts
            seqs[path_id].append(t.seq)
        testutils.verify_no_other_packets(self)
        assert seqs == {1: list(range(8)), 2: list(range(4))}, seqs


class TagPopTest(TelemetryTest):
    """The egress edge removes the tag: h1 gets the original frame (MACs rewritten,
    TTL - 1, valid checksum, IPv4 ether type), and the arrival counts on the path."""

    def runTest(self) -> None:
        pkt = remote_packet()
        testutils.send_packet(self, PATH_PORTS[2], tag(pkt, 2, seq=7, tx_ts=123))
        exp = delivered(pkt)
        assert exp[Ether].type == 0x0800
        testutils.verify_packet(self, exp, HOST_PORT)
        testutils.verify_no_other_packets(self)
        assert self.client.read_counter(COUNTER_RX)[self.cell(2)].packets == 1


class LossCountTest(TelemetryTest):
    """Sequence gaps count as losses, late packets as reorderings that fill a gap:
    0 1 2 5 6 -> lost 2; then 3 -> reordered 1, lost 1; then 4 -> reordered 2, lost 0.
    Each report (interval 0: one per packet) carries the packet's seq and tx_ts, its
    arrival time, and the path's cumulative packets and bytes."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.report_config(PEER_EDGE, 1, 0))
        expect = {0: (0, 0), 1: (0, 0), 2: (0, 0), 5: (2, 0), 6: (2, 0), 3: (1, 1),
                  4: (0, 2)}
        nbytes, last_rx = 0, 0
        for n, (seq, (lost, reordered)) in enumerate(expect.items(), start=1):
            nbytes += self.send_tagged(1, seq, tx_ts=5000 + seq)
            r = self.report()
            assert (r["path_id"], r["seq"], r["tx_ts"]) == (1, seq, 5000 + seq), r
            assert (r["rx_packets"], r["rx_bytes"]) == (n, nbytes), (r, n, nbytes)
            assert (r["lost"], r["reordered"]) == (lost, reordered), (seq, r)
            assert r["rx_ts"] >= last_rx, r
            last_rx = r["rx_ts"]
        testutils.verify_no_other_packets(self)


class SequenceWrapTest(TelemetryTest):
    """Sequence numbers compare by signed 32-bit difference: 2^32-2, 2^32-1, 1 loses one
    (0), and a late 0 afterwards is a reordering, not 4 billion losses."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.report_config(PEER_EDGE, 3, 0))
        got = []
        for seq in (2**32 - 2, 2**32 - 1, 1, 0):
            self.send_tagged(3, seq)
            r = self.report()
            got.append((r["seq"], r["lost"], r["reordered"]))
        assert got == [(2**32 - 2, 0, 0), (2**32 - 1, 0, 0), (1, 1, 0), (0, 0, 1)], got


class IngressRestartTest(TelemetryTest):
    """A restarted ingress edge starts its sequence numbers and its clock again at 0: after
    seq 100000..100002 (tx_ts 10 s), seq 0 and 1 (tx_ts 1 ms) of the same flow count
    neither as reorderings nor as losses, nor as packets overtaken within their flow; a
    later gap (3 after 1) still counts as a loss."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.report_config(PEER_EDGE, 1, 0))
        got = []
        for seq, tx_ts in ((100_000, 10_000_000), (100_001, 10_000_100), (100_002, 10_000_200),
                           (0, 1000), (1, 1100), (3, 1300)):
            self.send_tagged(1, seq, tx_ts=tx_ts)
            r = self.report()
            got.append((r["seq"], r["lost"], r["reordered"], r["flow_ooo"]))
        assert got == [(100_000, 0, 0, 0), (100_001, 0, 0, 0), (100_002, 0, 0, 0),
                       (0, 0, 0, 0), (1, 0, 0, 0), (3, 1, 0, 0)], got


def allowed_reports(elapsed_s: float, interval_us: int) -> int:
    """The most reports a rate limit of one per interval allows over elapsed_s, the first
    report included."""
    return 1 + int(elapsed_s * 1e6 // interval_us)


class ReportIntervalTest(TelemetryTest):
    """The report interval bounds the digest rate per path: a burst of packets within
    one interval gives one report; a path without report_config entry gives none; the
    interval can be changed at run time (MODIFY to 0: one report per packet)."""

    INTERVAL_US = 1_000_000
    BURST = 10

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.report_config(PEER_EDGE, 1, self.INTERVAL_US))
        # Path 2 has no entry: measured, never reported.
        for seq in range(self.BURST):
            self.send_tagged(2, seq)
        assert self.reports() == []
        # Let a full interval pass since the pipeline push, then a burst.
        time.sleep(self.INTERVAL_US / 1e6)
        start = time.monotonic()
        for seq in range(self.BURST):
            self.send_tagged(1, seq)  # returns once the packet left: processed by then
        elapsed = time.monotonic() - start
        reports = self.reports()
        # one report per interval the burst spanned: one on an idle machine (a burst takes
        # a few ms), more only if the machine stretched it over several intervals
        assert reports and reports[0]["seq"] == 0, reports
        assert len(reports) <= allowed_reports(elapsed, self.INTERVAL_US), (elapsed, reports)
        # After another interval, the next packet is reported again.
        time.sleep(self.INTERVAL_US / 1e6)
        self.send_tagged(1, self.BURST)
        reports = self.reports()
        assert [(r["seq"], r["rx_packets"]) for r in reports] == [(self.BURST, self.BURST + 1)]
        # Interval 0 at run time: every packet.
        self.client.modify(p.report_config(PEER_EDGE, 1, 0))
        for seq in range(self.BURST + 1, self.BURST + 4):
            self.send_tagged(1, seq)
        assert [r["seq"] for r in self.reports()] == list(range(self.BURST + 1, self.BURST + 4))


class UntaggedFromPathTest(TelemetryTest):
    """An untagged packet from a path is forwarded to h1 (mixed deployments keep
    working) but not measured: no report even with interval 0."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.report_config(PEER_EDGE, 1, 0))
        pkt = remote_packet()
        testutils.send_packet(self, PATH_PORTS[1], pkt)
        testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        testutils.verify_no_other_packets(self)
        assert self.reports() == []


class BadTagDropTest(TelemetryTest):
    """Bad tags are dropped, never forwarded nor measured: a truncated tag, a tag whose
    next type is not IPv4, a tag arriving from the host port. A good tag still passes."""

    def runTest(self) -> None:
        self.set_weights({1: 1}, insert=True)
        self.client.insert(self.pipeline.report_config(PEER_EDGE, 1, 0))
        good = tag(remote_packet(), 1, seq=0)
        cases = {
            "truncated tag": bytes(good)[:14 + 6],
            "next type IPv6": bytes(tag(remote_packet(), 1, next_type=0x86DD)),
            "next type ARP": bytes(tag(remote_packet(), 1, next_type=0x0806)),
        }
        for name, data in cases.items():
            testutils.send_packet(self, PATH_PORTS[1], data)
            try:
                testutils.verify_no_other_packets(self)
            except AssertionError as error:
                raise AssertionError(f"{name} was forwarded") from error
        # A host never sends tags: dropped even towards the paths.
        from_host = tag(host_packet(), 1)
        testutils.send_packet(self, HOST_PORT, from_host)
        testutils.verify_no_other_packets(self)
        assert self.reports() == []
        self.send_tagged(1, 0)
        assert self.report()["rx_packets"] == 1
