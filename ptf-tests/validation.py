"""Validation before any stage (p4src/include/validate.p4): each frame RFC 1812 §5.2.2 says a
router must discard is dropped and counted in the drop_reason counter under its reason, and
changes no scheduling state; valid but unusual frames (IPv4 options, fragments, padding) are
forwarded. One drop reason per test class. (The other drops, tag from a host, TTL, no route,
path bounce, no path: drops.py; the seeded fuzz run: fuzzing.FuzzTest.)

Run: make ptf    (or: python -m mpsched.ptfrun validation.ChecksumDropTest)
"""

from __future__ import annotations

import random
import struct

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
from mptcp import mp_capable
from path_tag import PathTag, out_tag
from ptf.mask import Mask
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_RX,
    COUNTER_TX,
    DIGEST_PATH_REPORT,
    DIGESTS_MPTCP,
    ETHERTYPE_PATH_TAG,
    PATH_FLAG_PROBE,
)
from mpsched.testing.ipv4frames import Endpoints, checksum16, ipv4_header, ipv4_options

OUT = Endpoints(src=HOST_IP, dst=REMOTE_IP)  # h1 towards the remote subnet
IN = Endpoints(src=REMOTE_IP, dst=HOST_IP)  # from a path towards h1
PAYLOAD = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / UDP(sport=1234, dport=4321)
                / Raw(b"v" * 24))[20:]  # a UDP segment (8 + 24 bytes)
ETH_OUT = bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=0x0800))
ETH_TAGGED = bytes(Ether(src=PEER_MAC, dst=SWITCH_MAC, type=ETHERTYPE_PATH_TAG))


def ip_udp(ep: Endpoints = OUT, **ip) -> bytes:
    """An IPv4 header (ipv4_header's keywords) and PAYLOAD."""
    return ipv4_header(ep, 17, len(PAYLOAD), **ip) + PAYLOAD


def ipv4_options_nop(ihl: int) -> bytes:
    """The option bytes of an IHL: NOPs."""
    return b"\x01" * (4 * (ihl - 5))


def from_host(ip: bytes) -> bytes:
    return ETH_OUT + ip


def from_path(ip: bytes, path_id: int = 1, seq: int = 0, next_type: int = 0x0800) -> bytes:
    return ETH_TAGGED + bytes(PathTag(path_id=path_id, seq=seq, tx_ts=1000,
                                      next_type=next_type)) + ip


def routed(ip: bytes) -> bytes:
    """IPv4 bytes as the switch forwards them: TTL - 1, checksum recomputed (options too)."""
    ihl = (ip[0] & 0x0F) * 4
    out = bytearray(ip)
    out[8] -= 1
    out[10:12] = b"\x00\x00"
    out[10:12] = struct.pack("!H", checksum16(bytes(out[:ihl])))
    return bytes(out)


def onto_path(ip: bytes, path_id: int = 1) -> Mask:
    """What leaves on path path_id for ip sent by h1: tagged (seq, tx_ts, feedback not
    compared)."""
    eth = bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=ETHERTYPE_PATH_TAG))
    mask = Mask(Raw(eth + bytes(out_tag(path_id=path_id)) + routed(ip)))
    mask.set_do_not_care((14 + 4) * 8, 32 + 48 + 64)
    return mask


def to_host(ip: bytes) -> bytes:
    return bytes(Ether(src=SWITCH_MAC, dst=HOST_MAC, type=0x0800)) + routed(ip)


class ValidationTest(EdgeSwitchTest):
    """All weight on path 1; helpers that read the drop counters and check that a frame is
    dropped under one reason (and no other), or forwarded as expected."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights({1: 1}, insert=True)

    def drops(self) -> dict[str, int]:
        values = self.client.read_counter(COUNTER_DROP_REASON)
        return {name: v.packets for name, v in self.pipeline.drop_counts(values).items()}

    def counted(self) -> tuple[dict[str, int], int, int]:
        """Drops by reason, packets received from and placed onto the paths (path_rx and
        path_tx summed over the paths)."""
        rx = sum(v.packets for v in self.client.read_counter(COUNTER_RX).values())
        tx = sum(v.packets for v in self.client.read_counter(COUNTER_TX).values())
        return self.drops(), rx, tx

    def assert_dropped(self, reason: str, frames: dict[str, tuple[int, bytes]],
                       rx: int = 0) -> None:
        """Each (port, frame) leaves nowhere, counts once under `reason` and nowhere else,
        does not touch path_tx, and adds `rx` to path_rx (0: invalid frames are dropped
        before path_ingress counts them)."""
        assert reason in self.pipeline.drop_reasons, reason
        for name, (port, frame) in frames.items():
            before, rx_before, tx_before = self.counted()
            testutils.send_packet(self, port, frame)
            try:
                testutils.verify_no_other_packets(self, timeout=0.3)
            except AssertionError as error:
                raise AssertionError(f"{name}: forwarded") from error
            after, rx_after, tx_after = self.counted()
            diff = {r: after[r] - before[r] for r in after if after[r] != before[r]}
            assert diff == {reason: 1}, f"{name}: counted {diff}, expected {{{reason!r}: 1}}"
            assert (rx_after - rx_before, tx_after - tx_before) == (rx, 0), \
                f"{name}: path counters changed"

    def assert_forwarded(self, name: str, port: int, frame: bytes, out_port: int,
                         expected: bytes | Mask) -> None:
        """frame sent on port leaves on out_port as `expected`, only there, and counts as
        no drop."""
        before = self.drops()
        testutils.send_packet(self, port, frame)
        try:
            testutils.verify_packet(self, expected, out_port)
        except AssertionError as error:
            raise AssertionError(f"{name}: not forwarded as expected") from error
        testutils.verify_no_other_packets(self, timeout=0.1)
        assert self.drops() == before, f"{name}: counted as a drop"


class VersionDropTest(ValidationTest):
    """IPv4 version 0..15 but 4, from h1 and tagged from a path: dropped, counted as
    ipv4_version."""

    def runTest(self) -> None:
        frames = {}
        for version in (v for v in range(16) if v != 4):
            frames[f"out v{version}"] = (HOST_PORT, from_host(ip_udp(version=version)))
            frames[f"in v{version}"] = (PATH_PORTS[1], from_path(ip_udp(IN, version=version)))
        self.assert_dropped("ipv4_version", frames)


class IhlDropTest(ValidationTest):
    """IHL 0..4, from h1 and tagged from a path: dropped, counted as ipv4_ihl."""

    def runTest(self) -> None:
        frames = {}
        for ihl in range(5):
            frames[f"out ihl {ihl}"] = (HOST_PORT, from_host(ip_udp(ihl=ihl)))
            frames[f"in ihl {ihl}"] = (PATH_PORTS[1], from_path(ip_udp(IN, ihl=ihl)))
        self.assert_dropped("ipv4_ihl", frames)


class TotalLenShortTest(ValidationTest):
    """A total length below IHL * 4 (0 and IHL * 4 - 1, for IHL 5..15, with the option
    bytes present): dropped, counted as ipv4_total_len_short."""

    def runTest(self) -> None:
        frames = {}
        for ihl in range(5, 16):
            opts = bytes(range(1, 1 + 4 * (ihl - 5)))
            for total in (0, ihl * 4 - 1):
                ip = ip_udp(ihl=ihl, options=ipv4_options_nop(ihl), total_len=total)
                frames[f"out ihl {ihl} len {total}"] = (HOST_PORT, from_host(ip))
            ip = ip_udp(IN, ihl=ihl, options=opts, total_len=ihl * 4 - 1)
            frames[f"in ihl {ihl}"] = (PATH_PORTS[1], from_path(ip))
        self.assert_dropped("ipv4_total_len_short", frames)


class TotalLenLongTest(ValidationTest):
    """A total length one byte (or far) above what follows Ethernet, and, from a path,
    Ethernet and the tag: dropped, counted as ipv4_total_len_long. The same frames with the
    right length are forwarded, and so are frames with bytes beyond the total length
    (Ethernet padding), padding included."""

    def runTest(self) -> None:
        size = 20 + len(PAYLOAD)
        self.assert_dropped("ipv4_total_len_long", {
            "out +1": (HOST_PORT, from_host(ip_udp(total_len=size + 1))),
            "out 65535": (HOST_PORT, from_host(ip_udp(total_len=65535))),
            "out options +1": (HOST_PORT, from_host(ip_udp(
                ihl=8, options=ipv4_options_nop(8), total_len=size + 12 + 1))),
            "in +1": (PATH_PORTS[1], from_path(ip_udp(IN, total_len=size + 1))),
            # 14 bytes too long: what a switch that forgot the tag would accept
            "in +14": (PATH_PORTS[2], from_path(ip_udp(IN, total_len=size + 14), 2)),
        })
        exact = ip_udp()
        self.assert_forwarded("out exact", HOST_PORT, from_host(exact), PATH_PORTS[1],
                              onto_path(exact))
        back = ip_udp(IN)
        self.assert_forwarded("in exact", PATH_PORTS[1], from_path(back), HOST_PORT,
                              to_host(back))
        padded = ip_udp(total_len=size - 10)  # the UDP payload's last 10 bytes are padding
        self.assert_forwarded("out padded", HOST_PORT, from_host(padded), PATH_PORTS[1],
                              onto_path(padded))


class ChecksumDropTest(ValidationTest):
    """A bad header checksum, with IHL 5 and with options (IHL 6..15), from h1 and from a
    path: dropped, counted as ipv4_checksum. The same headers with the right checksum are
    forwarded, options intact (TTL - 1, checksum updated)."""

    def runTest(self) -> None:
        frames = {}
        for ihl in range(5, 16):
            opts = bytes([1] * (4 * (ihl - 5)))
            frames[f"out ihl {ihl}"] = (HOST_PORT, from_host(
                ip_udp(ihl=ihl, options=opts, bad_checksum=0x0100)))
            frames[f"in ihl {ihl}"] = (PATH_PORTS[1], from_path(
                ip_udp(IN, ihl=ihl, options=opts, bad_checksum=0x8000)))
        # one bit flipped in an option byte, checksum of the unflipped header
        flipped = bytearray(ip_udp(ihl=7, options=bytes((7, 7, 4)) + bytes(5)))
        flipped[24] ^= 0x01
        frames["option byte flipped"] = (HOST_PORT, from_host(bytes(flipped)))
        self.assert_dropped("ipv4_checksum", frames)
        for ihl in (5, 6, 10, 15):
            ip = ip_udp(ihl=ihl, options=ipv4_options(random.Random(ihl), ihl - 5))
            self.assert_forwarded(f"options ihl {ihl}", HOST_PORT, from_host(ip),
                                  PATH_PORTS[1], onto_path(ip))
            back = ip_udp(IN, ihl=ihl, options=ipv4_options(random.Random(ihl), ihl - 5))
            self.assert_forwarded(f"in options ihl {ihl}", PATH_PORTS[1], from_path(back),
                                  HOST_PORT, to_host(back))


class PacketOutTotalLenTest(ValidationTest):
    """The total length check counts the PacketOut's controller header (packet_out, two
    bytes, part of the frame as the CPU port receives it): a PacketOut carrying IPv4 of
    exactly its total length leaves on its path (as a probe: tagged, flags PROBE), one
    whose total length is one byte above what follows Ethernet is dropped and counted as
    ipv4_total_len_long."""

    def runTest(self) -> None:
        ip = ip_udp()
        metadata = {"path_id": 1, "dst_edge": PEER_EDGE}
        before = self.drops()
        self.client.packet_out(ETH_OUT + ip, metadata)
        mask = Mask(Raw(ETH_OUT[:12] + ETHERTYPE_PATH_TAG.to_bytes(2, "big")
                        + bytes(out_tag(path_id=1, flags=PATH_FLAG_PROBE)) + ip))
        mask.set_do_not_care((14 + 4) * 8, 32 + 48 + 64)
        testutils.verify_packet(self, mask, PATH_PORTS[1])
        testutils.verify_no_other_packets(self, timeout=0.1)
        assert self.drops() == before
        self.client.packet_out(ETH_OUT + ip_udp(total_len=len(ip) + 1), metadata)
        testutils.verify_no_other_packets(self, timeout=0.3)
        after = self.drops()
        diff = {r: after[r] - before[r] for r in after if after[r] != before[r]}
        assert diff == {"ipv4_total_len_long": 1}, diff


class TruncatedDropTest(ValidationTest):
    """A frame that ends inside the path tag, the IPv4 header, the IPv4 options or the TCP
    header (whose IPv4 header is otherwise valid): dropped, counted as truncated."""

    def runTest(self) -> None:
        tcp = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / TCP(sport=1, dport=2))[20:]
        frames = {
            "tag cut": (PATH_PORTS[1], from_path(ip_udp(IN))[:14 + 7]),
            "tag cut from h1": (HOST_PORT, from_path(ip_udp())[:14 + 13]),
            "ipv4 cut at 19": (HOST_PORT, from_host(ip_udp())[:14 + 19]),
            "ipv4 cut at 1": (PATH_PORTS[1], from_path(ip_udp(IN))[:28 + 1]),
            "tcp cut at 12": (HOST_PORT, from_host(ipv4_header(OUT, 6, 12) + tcp[:12])),
        }
        self.assert_dropped("truncated", frames)


class NotIpv4DropTest(ValidationTest):
    """ARP, IPv6 and an unassigned ether type from h1, and a tag carrying IPv6 from a path:
    dropped, counted as not_ipv4."""

    def runTest(self) -> None:
        body = bytes(range(46))
        frames = {
            f"ether type {t:#06x}": (HOST_PORT, ETH_OUT[:12] + t.to_bytes(2, "big") + body)
            for t in (0x0806, 0x86DD, 0x1234)
        }
        frames["tag with ipv6"] = (PATH_PORTS[1], from_path(body, next_type=0x86DD))
        self.assert_dropped("not_ipv4", frames)


class FragmentsTest(ValidationTest):
    """Fragments are forwarded intact. A first fragment is classified by its ports; a later
    fragment has no L4 header: its bytes are never read as ports, even when they look like
    a TCP header to port 80 (a class for dst port 80 takes path 2; the later fragment stays
    in class 0, path 1)."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.traffic_class(1, 10, dst_port=(80, 80)))
        self.set_weights({2: 1}, insert=True, class_id=1)
        seg = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / TCP(sport=1000, dport=80, flags="S")
                    / Raw(b"f" * 16))[20:]
        first = ipv4_header(OUT, 6, len(seg), flags=1) + seg  # MF, offset 0
        self.assert_forwarded("first fragment", HOST_PORT, from_host(first), PATH_PORTS[2],
                              onto_path(first, 2))
        later = ipv4_header(OUT, 6, len(seg), frag_offset=5) + seg  # offset 40, same bytes
        self.assert_forwarded("later fragment", HOST_PORT, from_host(later), PATH_PORTS[1],
                              onto_path(later, 1))
        middle = ipv4_header(OUT, 6, len(seg), flags=1, frag_offset=2) + seg
        self.assert_forwarded("middle fragment", HOST_PORT, from_host(middle), PATH_PORTS[1],
                              onto_path(middle, 1))


class InvalidNoStateTest(ValidationTest):
    """Invalid frames change no scheduling state. From h1: an MP_CAPABLE SYN/ACK with a bad
    header checksum or a total length above the frame yields no MPTCP digest, no path_tx
    count and consumes no sequence number (the next valid packet leaves with sequence number
    0, and its MP_CAPABLE is reported). From path 1: tagged invalid frames with sequence
    numbers 0..9 count no path_rx and no sequence number; the first valid tagged frame then
    reports rx_packets 1 and no loss."""

    def runTest(self) -> None:
        for name in DIGESTS_MPTCP:
            self.client.insert_digest(name, max_timeout_ns=0, max_list_size=1)
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)
        self.client.insert(self.pipeline.report_config(PEER_EDGE, 1, 0))
        opts = mp_capable(0x1122334455667788)
        seg = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / TCP(
            sport=40000, dport=5201, flags="SA", dataofs=5 + len(opts) // 4) / Raw(opts))[20:]
        bad = {
            "checksum": ipv4_header(OUT, 6, len(seg), bad_checksum=0xFFFF) + seg,
            "total_len": ipv4_header(OUT, 6, len(seg), total_len=20 + len(seg) + 1) + seg,
        }
        self.assert_dropped("ipv4_checksum", {"syn/ack": (HOST_PORT, from_host(bad["checksum"]))})
        self.assert_dropped("ipv4_total_len_long",
                            {"syn/ack": (HOST_PORT, from_host(bad["total_len"]))})
        for i in range(10):
            frame = from_path(ip_udp(IN, bad_checksum=0x0001 << (i % 16)), 1, seq=i)
            testutils.send_packet(self, PATH_PORTS[1], frame)
        testutils.verify_no_other_packets(self, timeout=0.3)
        assert self.drops()["ipv4_checksum"] == 11
        assert sum(v.packets for v in self.client.read_counter(COUNTER_RX).values()) == 0
        got = []
        while (digest := self.client.read_digest_list(0.5)) is not None:
            got.append(digest.digest_id)
        assert got == [], f"digests from invalid frames: {got}"
        # The valid SYN/ACK: sequence number 0 on path 1, and its key reported.
        good = ipv4_header(OUT, 6, len(seg)) + seg
        mask = Mask(Raw(ETH_OUT[:12] + ETHERTYPE_PATH_TAG.to_bytes(2, "big")
                        + bytes(out_tag(path_id=1, seq=0)) + routed(good)))
        mask.set_do_not_care((14 + 8) * 8, 48 + 64)  # tx_ts, feedback
        self.assert_forwarded("valid syn/ack", HOST_PORT, from_host(good), PATH_PORTS[1], mask)
        digest = self.client.read_digest_list(2.0)
        assert digest is not None and digest.digest_id in self.pipeline.mptcp_digests
        # A valid tagged frame with sequence number 10: the first the path counts.
        back = ip_udp(IN)
        self.assert_forwarded("valid from path", PATH_PORTS[1], from_path(back, 1, seq=10),
                              HOST_PORT, to_host(back))
        report = None
        while (digest := self.client.read_digest_list(1.0)) is not None:
            if digest.digest_id == self.pipeline.path_report_id:
                (report,) = self.client.decode_digest_list(DIGEST_PATH_REPORT, digest)
        assert report is not None, "no path report"
        assert (report["rx_packets"], report["lost"], report["seq"]) == (1, 0, 10), report
