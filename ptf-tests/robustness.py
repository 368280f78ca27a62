"""Malformed packets: the edge switch survives them and never misroutes them. Each
packet is either dropped or forwarded intact (routed: TTL - 1, IPv4 checksum fixed;
tagged onto a path, or untagged with MACs rewritten towards h1), never to a wrong
port, and a well-formed packet sent afterwards is still forwarded correctly. (The seeded
frames of mpsched.testing.fuzz: fuzzing.py; one drop reason per test: validation.py.)

Run: make ptf    (or: python -m mpsched.ptfrun robustness.TcpDataOffsetTest)
"""

from __future__ import annotations

import random
import struct
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
from path_tag import PathTag, out_tag, tag, tagged
from ptf.mask import Mask
from rtt import DPORT, NO_DIGEST_WAIT
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import DIGEST_RTT_REPORT, ETHERTYPE_PATH_TAG
from mpsched.testing.ipv4frames import ETH_LEN, checksum16

TAG_LEN = len(PathTag())
SPORT = 40000


def routed_ip(ip: bytes) -> bytes:
    """IPv4 bytes as the switch forwards them: TTL - 1, header checksum recomputed.
    Fewer than 20 bytes cannot be routed intact: returned as they are (never matches)."""
    if len(ip) < 20:
        return ip
    ihl = (ip[0] & 0x0F) * 4
    out = bytearray(ip)
    out[8] -= 1
    out[10:12] = b"\x00\x00"
    out[10:12] = struct.pack("!H", checksum16(bytes(out[:ihl])))
    return bytes(out)


def to_path(ip: bytes, path_id: int) -> Mask:
    """What leaves on path path_id for an IPv4 packet (bytes from the IP header on)
    that h1 sent: Ethernet unchanged, a tag (seq, tx_ts, feedback not compared), routed IPv4."""
    eth = bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=ETHERTYPE_PATH_TAG))
    mask = Mask(Raw(eth + bytes(out_tag(path_id=path_id)) + routed_ip(ip)))
    mask.set_do_not_care((ETH_LEN + 4) * 8, 32 + 48 + 64)  # seq, tx_ts, feedback
    return mask


def to_host(ip: bytes) -> bytes:
    """What reaches h1 for an IPv4 packet arriving from a path: untagged, MACs rewritten."""
    return bytes(Ether(src=SWITCH_MAC, dst=HOST_MAC, type=0x0800)) + routed_ip(ip)


def from_path(ip: bytes, path_id: int = 1) -> bytes:
    """An IPv4 packet (bytes from the IP header on) arriving tagged from path path_id."""
    return (bytes(Ether(src=PEER_MAC, dst=SWITCH_MAC, type=ETHERTYPE_PATH_TAG))
            + bytes(PathTag(path_id=path_id)) + ip)


def ip_bytes(pkt) -> bytes:
    return bytes(pkt[IP])


def tcp_raw(ip_src: str, ip_dst: str, sport: int, dport: int, offset: int,
            tail: bytes = b"", flags: int = 0x18, payload: bytes = b"p" * 16) -> bytes:
    """IPv4 + a 20-byte TCP header with data offset `offset`, then `tail` (options)
    and payload; IPv4 total length matches the bytes."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1000, 1, (offset & 0xF) << 4, flags,
                      65535, 0, 0) + tail + payload
    return bytes(IP(src=ip_src, dst=ip_dst, proto=6) / Raw(tcp))


class RobustnessTest(EdgeSwitchTest):
    """All weight on path 1; helpers that accept a drop or an intact forward."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights({1: 1}, insert=True)

    def dropped_or(self, name: str, port: int, frame: bytes, expected: dict) -> str:
        """Send frame on port; it must be dropped or leave on a port in `expected`
        (port -> Mask or bytes) matching it. Returns "dropped" or "forwarded"."""
        testutils.send_packet(self, port, frame)
        result = testutils.dp_poll(self, timeout=0.5)
        if isinstance(result, self.dataplane.PollSuccess):
            assert result.port in expected, f"{name}: left on wrong port {result.port}"
            exp = expected[result.port]
            ok = exp.pkt_match(result.packet) if isinstance(exp, Mask) else \
                bytes(result.packet) == exp
            assert ok, f"{name}: forwarded altered: {bytes(result.packet).hex()}"
            outcome = "forwarded"
        else:
            outcome = "dropped"
        try:
            testutils.verify_no_other_packets(self)
        except AssertionError as error:
            raise AssertionError(f"{name}: more than one packet left") from error
        return outcome

    def from_host(self, name: str, ip: bytes) -> str:
        frame = bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=0x0800)) + ip
        return self.dropped_or(name, HOST_PORT, frame, {PATH_PORTS[1]: to_path(ip, 1)})

    def toward_host(self, name: str, ip: bytes) -> str:
        return self.dropped_or(name, PATH_PORTS[1], from_path(ip), {HOST_PORT: to_host(ip)})

    def still_alive(self) -> None:
        """A well-formed packet each way is still forwarded correctly."""
        pkt = host_packet()
        testutils.send_packet(self, HOST_PORT, pkt)
        testutils.verify_packet(self, tagged(routed(pkt), 1), PATH_PORTS[1])
        back = Ether(src=PEER_MAC, dst=SWITCH_MAC) / IP(src=REMOTE_IP, dst=HOST_IP) \
            / UDP(sport=1, dport=2) / Raw(b"z" * 20)
        testutils.send_packet(self, PATH_PORTS[2], tag(back, 2))
        testutils.verify_packet(self, to_host(ip_bytes(back)), HOST_PORT)
        testutils.verify_no_other_packets(self)


def bad_offset_cases(src: str, dst: str, sport: int, dport: int, flags: int = 0x18):
    cases = {f"doff {d}": tcp_raw(src, dst, sport, dport, d, flags=flags) for d in (0, 1, 4)}
    # Data offset 15 (60 bytes of header) in a segment of 20 + 16 bytes of TCP.
    cases["doff 15 over the header"] = tcp_raw(src, dst, sport, dport, 15, flags=flags)
    return cases


class TcpDataOffsetTest(RobustnessTest):
    """TCP with data offset 0, 1, 4 and 15 past the end of the packet, from h1 towards the
    remote subnet and from a path towards h1: dropped or forwarded intact, never to a
    wrong port; the switch still forwards afterwards."""

    def runTest(self) -> None:
        outcomes = {}
        for name, ip in bad_offset_cases(HOST_IP, REMOTE_IP, SPORT, DPORT).items():
            outcomes["out " + name] = self.from_host(name, ip)
        for name, ip in bad_offset_cases(REMOTE_IP, HOST_IP, DPORT, SPORT, 0x10).items():
            outcomes["in " + name] = self.toward_host(name, ip)
        print(outcomes)
        self.still_alive()


class TcpDataOffsetNoRttSampleTest(RobustnessTest):
    """A segment with a bad data offset starts no RTT sample: the ACK covering it yields no
    rtt_report digest, while the same exchange with a well-formed segment does."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        self.client.insert_digest(DIGEST_RTT_REPORT, max_timeout_ns=0, max_list_size=1)
        rtt_id = self.client.p4info.digest_id(DIGEST_RTT_REPORT)

        def reports() -> int:
            n = 0
            while (d := self.client.read_digest_list(NO_DIGEST_WAIT)) is not None:
                n += d.digest_id == rtt_id
            return n

        ack = (Ether(src=PEER_MAC, dst=SWITCH_MAC) / IP(src=REMOTE_IP, dst=HOST_IP, ttl=63)
               / TCP(sport=DPORT, flags="A", seq=1, ack=5000))
        for i, (name, ip) in enumerate(bad_offset_cases(HOST_IP, REMOTE_IP, 0, DPORT).items()):
            sport = SPORT + 1 + i
            ip = bytearray(ip)
            ip[20:22] = struct.pack("!H", sport)
            self.from_host(name, bytes(ip))
            ack[TCP].dport = sport
            testutils.send_packet(self, PATH_PORTS[1], tag(Ether(bytes(ack)), 1))
            testutils.verify_packet(self, to_host(ip_bytes(Ether(bytes(ack)))), HOST_PORT)
            assert reports() == 0, f"{name}: an RTT sample was started"
        # Control: a well-formed segment and its ACK do give a report.
        good = tcp_raw(HOST_IP, REMOTE_IP, SPORT, DPORT, 5)
        assert self.from_host("good", good) == "forwarded"
        ack[TCP].dport = SPORT
        testutils.send_packet(self, PATH_PORTS[1], tag(Ether(bytes(ack)), 1))
        testutils.verify_packet(self, to_host(ip_bytes(Ether(bytes(ack)))), HOST_PORT)
        assert reports() == 1
        self.still_alive()


class TcpOptionLengthTest(RobustnessTest):
    """TCP options with option length 0, 1 and one running past the header, on a data
    segment (options not walked) and on a pure ACK (walked: the walk stops at the bad
    option): forwarded unchanged, and the switch does not crash. (MPTCP options and
    more malformed cases: mptcp.MalformedOptionsTest.)"""

    def runTest(self) -> None:
        tails = {
            "optlen 0": b"\x08\x00\x00\x00",
            "optlen 1": b"\x08\x01\x00\x00",
            "optlen past header": b"\x08\x28\x00\x00",  # says 40 bytes, 4 in the header
        }
        for name, tail in tails.items():
            out = tcp_raw(HOST_IP, REMOTE_IP, SPORT, DPORT, 6, tail)
            assert self.from_host(name, out) == "forwarded", name
            back = tcp_raw(REMOTE_IP, HOST_IP, DPORT, SPORT, 6, tail, flags=0x10)
            assert self.toward_host(name, back) == "forwarded", name
        self.still_alive()


class TruncatedHeaderTest(RobustnessTest):
    """Ethernet only, IPv4 cut at 10 bytes, TCP cut at 8, UDP cut at 4, and a path tag cut
    in the middle arriving from a path: dropped or forwarded intact, never to a wrong
    port; the switch still forwards afterwards."""

    def runTest(self) -> None:
        tcp = ip_bytes(host_packet())
        udp = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / UDP(sport=1, dport=2) / Raw(b"u" * 8))
        outcomes = {
            "ethernet only": self.from_host("ethernet only", b""),
            "ipv4 cut at 10": self.from_host("ipv4 cut at 10", tcp[:10]),
            "tcp cut at 8": self.from_host("tcp cut at 8", tcp[:20 + 8]),
            "udp cut at 4": self.from_host("udp cut at 4", udp[:20 + 4]),
        }
        back = bytes(IP(src=REMOTE_IP, dst=HOST_IP) / UDP(sport=1, dport=2) / Raw(b"v" * 8))
        for name, ip in {"ipv4 cut at 10": back[:10], "udp cut at 4": back[:24]}.items():
            outcomes["in " + name] = self.toward_host(name, ip)
        cut_tag = from_path(back)[:ETH_LEN + TAG_LEN // 2]
        outcomes["tag cut"] = self.dropped_or(
            "tag cut", PATH_PORTS[1], cut_tag, {HOST_PORT: b"<never>"})
        print(outcomes)
        assert outcomes["tag cut"] == "dropped"
        self.still_alive()


class NonTcpUdpTest(RobustnessTest):
    """ICMP, GRE (protocol 47) and an unassigned protocol (253) are routed by destination
    like any other packet: onto path 1 from h1, to h1 from a path."""

    def runTest(self) -> None:
        for name, l4 in {"icmp": ICMP() / Raw(b"i" * 16), "gre": GRE() / Raw(b"g" * 16),
                         "proto 253": Raw(b"n" * 16)}.items():
            kw = {"proto": 253} if name == "proto 253" else {}
            out = ip_bytes(IP(src=HOST_IP, dst=REMOTE_IP, **kw) / l4)
            assert self.from_host(name, out) == "forwarded", name
            back = ip_bytes(IP(src=REMOTE_IP, dst=HOST_IP, **kw) / l4)
            assert self.toward_host(name, back) == "forwarded", name
        self.still_alive()


class RandomBurstTest(RobustnessTest):
    """200 random-byte frames (seeded) on every port: none is forwarded (a random
    EtherType is almost never IPv4 or the path tag; this seed makes none), and a valid
    packet sent afterwards is still forwarded correctly."""

    def runTest(self) -> None:
        rng = random.Random(20261122)
        for port in (HOST_PORT, *PATH_PORTS.values()):
            for _ in range(200):
                frame = bytes(rng.getrandbits(8) for _ in range(rng.randint(14, 200)))
                testutils.send_packet(self, port, frame)
        time.sleep(1)
        testutils.verify_no_other_packets(self, timeout=1)
        self.still_alive()
