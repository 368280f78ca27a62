"""The drops after validation (p4src/include/validate.p4 passed): a TTL that expires (and the
ACK it drops completes no RTT sample), a tag arriving from a host, no route, a packet from a
path bound for the paths again, a class without a path; each dropped and counted in the
drop_reason counter under its reason. One drop reason per test class. (The frames RFC 1812
§5.2.2 says a router must discard: validation.py.)

Run: make ptf    (or: python -m mpsched.ptfrun drops.NoRouteDropTest)
"""

from __future__ import annotations

import ptf.testutils as testutils
from base import HOST_IP, HOST_PORT, PATH_PORTS, PEER_EDGE, REMOTE_IP
from path_tag import out_tag
from ptf.mask import Mask
from scapy.layers.inet import IP, TCP
from scapy.packet import Raw
from validation import (
    ETH_OUT,
    ValidationTest,
    from_host,
    from_path,
    ip_udp,
    onto_path,
    routed,
    to_host,
)

from mpsched.p4rt.pipeline import COUNTER_RX, COUNTER_TX, DIGEST_RTT_REPORT, ETHERTYPE_PATH_TAG
from mpsched.testing.ipv4frames import Endpoints


class TtlExpiredTest(ValidationTest):
    """TTL 0 and 1 from h1: dropped, counted as ttl_expired, without touching path_tx or a
    sequence number; TTL 2 leaves with TTL 1 and the path's first sequence number."""

    def runTest(self) -> None:
        self.assert_dropped("ttl_expired", {
            f"ttl {ttl}": (HOST_PORT, from_host(ip_udp(ttl=ttl))) for ttl in (0, 1)})
        ip = ip_udp(ttl=2)
        mask = Mask(Raw(ETH_OUT[:12] + ETHERTYPE_PATH_TAG.to_bytes(2, "big")
                        + bytes(out_tag(path_id=1, seq=0)) + routed(ip)))
        mask.set_do_not_care((14 + 8) * 8, 48 + 64)  # tx_ts, feedback
        self.assert_forwarded("ttl 2", HOST_PORT, from_host(ip), PATH_PORTS[1], mask)


class TtlExpiredAckNoRttTest(ValidationTest):
    """An ACK arriving from a path with TTL 1 is dropped (ttl_expired) before rtt_monitor:
    it completes no RTT sample (no rtt_report); the same ACK with TTL 64 then does."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        self.client.insert_digest(DIGEST_RTT_REPORT, max_timeout_ns=0, max_list_size=1)
        data = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / TCP(sport=40000, dport=5201, flags="PA",
                                                          seq=1000) / Raw(b"d" * 100))
        testutils.send_packet(self, HOST_PORT, ETH_OUT + data)
        testutils.verify_packet(self, onto_path(data), PATH_PORTS[1])

        def ack(ttl: int) -> bytes:
            return bytes(IP(src=REMOTE_IP, dst=HOST_IP, ttl=ttl) / TCP(
                sport=5201, dport=40000, flags="A", seq=1, ack=1100))

        # it crossed path 1: counted there (path_rx), then dropped
        self.assert_dropped("ttl_expired", {"ack ttl 1": (PATH_PORTS[1], from_path(ack(1)))},
                            rx=1)
        assert self.client.read_digest_list(0.5) is None, "an RTT sample from a dropped ACK"
        self.assert_forwarded("ack ttl 64", PATH_PORTS[1], from_path(ack(64)), HOST_PORT,
                              to_host(ack(64)))
        digest = self.client.read_digest_list(2.0)
        assert digest is not None and digest.digest_id == self.pipeline.rtt_report_id


class TagFromHostDropTest(ValidationTest):
    """A well-formed tagged frame arriving on the host port: dropped, counted as
    tag_from_host."""

    def runTest(self) -> None:
        self.assert_dropped("tag_from_host", {"tag": (HOST_PORT, from_path(ip_udp()))})


class NoRouteDropTest(ValidationTest):
    """A valid packet to an address without route: dropped, counted as no_route."""

    def runTest(self) -> None:
        ep = Endpoints(src=HOST_IP, dst="192.0.2.1")
        self.assert_dropped("no_route", {"no route": (HOST_PORT, from_host(ip_udp(ep)))})


class PathBounceDropTest(ValidationTest):
    """A tagged packet from a path bound for the remote subnet (the paths again): dropped,
    counted as path_bounce."""

    def runTest(self) -> None:
        frame = from_path(ip_udp(Endpoints(src=HOST_IP, dst=REMOTE_IP)))
        before = sum(v.packets for v in self.client.read_counter(COUNTER_RX).values())
        testutils.send_packet(self, PATH_PORTS[1], frame)
        testutils.verify_no_other_packets(self, timeout=0.3)
        # counted as received from path 1 (it did cross the path), then dropped
        assert sum(v.packets for v in self.client.read_counter(COUNTER_RX).values()) \
            == before + 1
        assert self.drops()["path_bounce"] == 1


class NoPathDropTest(ValidationTest):
    """A class whose every weight is 0: its packets are dropped, counted as no_path (and at
    path_tx[0])."""

    def runTest(self) -> None:
        self.set_weights({1: 0})
        testutils.send_packet(self, HOST_PORT, from_host(ip_udp()))
        testutils.verify_no_other_packets(self, timeout=0.3)
        assert self.drops()["no_path"] == 1
        assert self.client.read_counter(COUNTER_TX)[0].packets == 1
