"""Passive TCP measurement at the ingress edge (p4src/include/rtt_monitor.p4): RTT per
path from a data segment placed onto a path and the ACK coming back from a path,
retransmissions and bytes in flight per path, rate-bounded rtt_report_t digests.

Run: make ptf    (or: python -m mpsched.ptfrun rtt.RttSampleTest)
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
from forwarding import PEER_MAC
from path_tag import tag
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from telemetry import allowed_reports

from mpsched.p4rt.pipeline import DIGEST_RTT_REPORT

NO_DIGEST_WAIT = 0.5  # seconds to wait before concluding no digest came
DPORT = 5201


def data_segment(seq: int, payload: int = 100, sport: int = 40000, flags: str = "PA", **ip):
    """A TCP segment from h1 towards the remote subnet."""
    pkt = (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=REMOTE_IP, **ip)
           / TCP(sport=sport, dport=DPORT, flags=flags, seq=seq, ack=1))
    if payload:
        pkt = pkt / Raw(b"d" * payload)
    return Ether(bytes(pkt))


def ack_segment(ack: int, sport: int = 40000, payload: int = 0):
    """The receiver's ACK for h1's flow `sport`, as it arrives from the other edge."""
    pkt = (Ether(src=PEER_MAC, dst=SWITCH_MAC) / IP(src=REMOTE_IP, dst=HOST_IP, ttl=63)
           / TCP(sport=DPORT, dport=sport, flags="A", seq=1, ack=ack % 2**32))
    if payload:
        pkt = pkt / Raw(b"a" * payload)
    return Ether(bytes(pkt))


class RttTest(EdgeSwitchTest):
    """An edge switch with all weight on path 1 and rtt_report_t digests enabled."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights({1: 1}, insert=True)
        self.client.insert_digest(DIGEST_RTT_REPORT, max_timeout_ns=0, max_list_size=1)
        self.rtt_id = self.client.p4info.digest_id(DIGEST_RTT_REPORT)

    def out(self, pkt, path_id: int = 1) -> None:
        """Send pkt from h1; it must leave on path path_id."""
        testutils.send_packet(self, HOST_PORT, pkt)
        result = testutils.dp_poll(self, timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "nothing left the switch"
        assert result.port == PATH_PORTS[path_id], (result.port, path_id)

    def back(self, pkt, path_id: int = 1) -> None:
        """pkt arrives tagged from path path_id; it must reach h1."""
        testutils.send_packet(self, PATH_PORTS[path_id], tag(pkt, path_id))
        result = testutils.dp_poll(self, timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "nothing reached h1"
        assert result.port == HOST_PORT, result.port

    def reports(self, timeout: float = NO_DIGEST_WAIT) -> list[dict[str, int]]:
        """Every RTT report that arrives until none came for `timeout` seconds."""
        out = []
        while (digest := self.client.read_digest_list(timeout)) is not None:
            if digest.digest_id == self.rtt_id:
                out += self.client.decode_digest_list(DIGEST_RTT_REPORT, digest)
        return out

    def report(self) -> dict[str, int]:
        (one,) = self.reports()
        return one


class RttSampleTest(RttTest):
    """A data segment out on a path, its ACK back ~50 ms later: one report with the data's
    path id (path 2 here, the ACK returning over path 1), an RTT between 50 ms and 2 s,
    no retransmissions, nothing in flight. A second ACK finds the sample gone: no report."""

    def runTest(self) -> None:
        self.set_weights({2: 1})
        self.client.insert(*[self.pipeline.rtt_config(PEER_EDGE, pid, 0) for pid in (1, 2)])
        self.out(data_segment(1000, 100), path_id=2)
        time.sleep(0.05)
        self.back(ack_segment(1100), path_id=1)
        r = self.report()
        assert r["path_id"] == 2, r
        assert 50_000 <= r["rtt_us"] < 2_000_000, r
        assert (r["retrans"], r["inflight_bytes"]) == (0, 0), r
        self.back(ack_segment(1100))
        assert self.reports() == []
        testutils.verify_no_other_packets(self)


class UncoveredAckTest(RttTest):
    """An ACK below the segment's end (1050 < 1100) and an ACK of another flow complete
    no sample; the covering ACK (here carrying data itself) then does, with nothing in
    flight. The next segment likewise: no report for its partial ACK, one for the full."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        self.out(data_segment(1000, 100))
        self.back(ack_segment(1050))
        self.back(ack_segment(1100, sport=40001))
        self.back(ack_segment(1100, payload=30))  # still an ACK: this one covers
        r = self.report()
        assert (r["path_id"], r["inflight_bytes"]) == (1, 0), r
        self.out(data_segment(1100, 100))
        self.back(ack_segment(1150))
        assert self.reports() == []
        self.back(ack_segment(1200))
        assert self.report()["inflight_bytes"] == 0


class RetransmissionTest(RttTest):
    """A segment whose end is at or below the flow's highest end sent is a
    retransmission (also across the 2^32 wrap); it counts on the path and never starts
    an RTT sample (Karn); a partly new segment is not one."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        self.out(data_segment(0, 100))
        self.out(data_segment(100, 100))
        self.out(data_segment(0, 100))  # retransmission 1
        self.out(data_segment(50, 100))  # ends at 150 <= 200: retransmission 2
        self.back(ack_segment(200))  # covers the first sample
        r = self.report()
        assert (r["retrans"], r["inflight_bytes"]) == (2, 0), r
        # Only a retransmission since: no sample pending, no report.
        self.out(data_segment(100, 100))  # retransmission 3
        self.back(ack_segment(200))
        assert self.reports() == []
        # Across the wrap, in another flow: 2^32 - 50 + 100 wraps to 50.
        top = 2**32 - 50
        self.out(data_segment(top, 100, sport=40002))
        self.out(data_segment(top, 100, sport=40002))  # retransmission 4
        self.out(data_segment(50, 100, sport=40002))  # new data, not a retransmission
        self.back(ack_segment(150, sport=40002))
        r = self.report()
        assert (r["retrans"], r["inflight_bytes"]) == (4, 0), r


class InflightTest(RttTest):
    """Bytes in flight per path grow with data sent and shrink with ACKs: 3 segments of
    1000, ACK 1000 -> 2000; 4 more, ACK 4000 -> 3000; ACK 7000 then one more segment
    and its ACK -> 0. Two flows add up on the path."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        for k in range(3):
            self.out(data_segment(k * 1000, 1000))
        self.back(ack_segment(1000))
        assert self.report()["inflight_bytes"] == 2000
        for k in range(3, 7):
            self.out(data_segment(k * 1000, 1000))
        self.back(ack_segment(4000))
        assert self.report()["inflight_bytes"] == 3000
        self.back(ack_segment(7000))  # no sample pending: counted, not reported
        assert self.reports() == []
        self.out(data_segment(7000, 1000))
        self.out(data_segment(5000, 500, sport=40003))  # a second flow: 500 more
        self.back(ack_segment(8000))
        assert self.report()["inflight_bytes"] == 500
        self.back(ack_segment(5500, sport=40003))
        assert self.report()["inflight_bytes"] == 0


class InflightFlowMoveTest(RttTest):
    """A flow that moves to another path takes its unacknowledged bytes along: 3 segments
    of 1000 on path 1, then the weights move it to path 2 with one more segment. The ACK
    of the first segment (sampled on path 1) reports path 1 with nothing in flight; a
    second flow's sample on path 2 then reports the moved flow's 3000 bytes still
    unacknowledged there; once they are acknowledged, 0."""

    def runTest(self) -> None:
        self.client.insert(*[self.pipeline.rtt_config(PEER_EDGE, pid, 0) for pid in (1, 2)])
        for k in range(3):
            self.out(data_segment(k * 1000, 1000), path_id=1)
        self.set_weights({2: 1})
        self.out(data_segment(3000, 1000), path_id=2)
        self.back(ack_segment(1000))
        r = self.report()
        assert (r["path_id"], r["inflight_bytes"]) == (1, 0), r
        self.out(data_segment(0, 100, sport=40005), path_id=2)
        self.back(ack_segment(100, sport=40005))
        r = self.report()
        assert (r["path_id"], r["inflight_bytes"]) == (2, 3000), r
        self.back(ack_segment(4000))
        assert self.reports() == []
        self.out(data_segment(100, 100, sport=40005), path_id=2)
        self.back(ack_segment(200, sport=40005))
        r = self.report()
        assert (r["path_id"], r["inflight_bytes"]) == (2, 0), r


class RttIntervalTest(RttTest):
    """The interval bounds the report rate per path: 5 samples within 1 s give one
    report; a path without rtt_config entry gives none; the interval changes at run time
    (MODIFY to 0: one report per sample)."""

    INTERVAL_US = 1_000_000

    def sample(self, sport: int, path_id: int = 1) -> None:
        self.out(data_segment(0, 100, sport=sport), path_id)
        self.back(ack_segment(100, sport=sport), path_id)

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(p.rtt_config(PEER_EDGE, 1, self.INTERVAL_US))
        self.set_weights({2: 1})
        for k in range(3):
            self.sample(41000 + k, path_id=2)  # path 2: no entry, no reports
        assert self.reports() == []
        self.set_weights({1: 1})
        time.sleep(self.INTERVAL_US / 1e6)
        start = time.monotonic()
        for k in range(5):
            self.sample(42000 + k)  # each returns once its ACK left: processed by then
        elapsed = time.monotonic() - start
        # one report per interval the samples spanned (one unless the machine stretched them)
        got = self.reports()
        assert 1 <= len(got) <= allowed_reports(elapsed, self.INTERVAL_US), (elapsed, got)
        time.sleep(self.INTERVAL_US / 1e6)
        self.sample(43000)
        assert len(self.reports()) == 1
        self.client.modify(p.rtt_config(PEER_EDGE, 1, 0))
        for k in range(3):
            self.sample(44000 + k)
        assert [r["path_id"] for r in self.reports()] == [1, 1, 1]


class NoSampleTest(RttTest):
    """Only TCP data segments start samples: a UDP packet, a pure ACK, a SYN and a
    segment with data offset < 5 followed by an ACK covering them give no report."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        udp = Ether(bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=REMOTE_IP)
                          / UDP(sport=40010, dport=DPORT) / Raw(b"u" * 100)))
        self.out(udp)
        self.back(ack_segment(10_000, sport=40010))
        self.out(data_segment(500, 0, sport=40011, flags="A"))
        self.back(ack_segment(10_000, sport=40011))
        self.out(data_segment(500, 0, sport=40012, flags="S"))
        self.back(ack_segment(10_000, sport=40012))
        bad = data_segment(500, 100, sport=40013)
        bad[TCP].dataofs = 4
        self.out(Ether(bytes(bad)))
        self.back(ack_segment(10_000, sport=40013))
        assert self.reports() == []


class IPOptionsPayloadTest(RttTest):
    """The payload length comes from IPv4 total length, IHL and the TCP data offset: a
    segment with 4 bytes of IP options and 12 of TCP options carrying 100 bytes is
    covered by ACK seq + 100, not before."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        pkt = (Ether(src=HOST_MAC, dst=SWITCH_MAC)
               / IP(src=HOST_IP, dst=REMOTE_IP, options=b"\x94\x04\x00\x00")
               / TCP(sport=40020, dport=DPORT, flags="PA", seq=7000, ack=1,
                     options=[("NOP", None), ("NOP", None), ("Timestamp", (1, 2))])
               / Raw(b"o" * 100))
        pkt = Ether(bytes(pkt))
        assert (pkt[IP].ihl, pkt[TCP].dataofs) == (6, 8)
        self.out(pkt)
        self.back(ack_segment(7099, sport=40020))
        assert self.reports() == []
        self.back(ack_segment(7100, sport=40020))
        assert self.report()["path_id"] == 1
