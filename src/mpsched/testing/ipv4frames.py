"""IPv4 frames as a switch port sees them: built (Ethernet, a path tag, an IPv4 header with
options, `Endpoints` their addresses) and checked (`ipv4_header_valid`, RFC 1812 §5.2.2).

`ipv4_header_valid(frame)` checks what leaves a switch port: an IPv4 header (after the path
tag, if any) that a router may forward. Its reasons are the names of the data plane's drop
reasons (`p4src/include/defines.p4`, DROP_REASONS, lower case;
tests/unit/testing/test_fuzz.py checks them against the P4 source).

Pure functions (no I/O); the seeded frame generator (src/mpsched/testing/fuzz.py) builds its
frames with them, the PTF tests check what the switch forwards with them.
"""

from __future__ import annotations

import ipaddress
import random
import struct
from dataclasses import dataclass

from scapy.layers.l2 import Ether

from mpsched import addressing as ap
from mpsched.p4rt.bmv2json import path_tag
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG

ETHERTYPE_IPV4 = 0x0800
ETH_LEN = 14
IPV4_LEN = 20
# Every reason ipv4_header_valid returns for an invalid frame.
REASONS = ("truncated", "not_ipv4", "ipv4_version", "ipv4_ihl", "ipv4_total_len_short",
           "ipv4_total_len_long", "ipv4_checksum", "ttl_expired")


@dataclass(frozen=True)
class Endpoints:
    """Addresses of the generated frames. Valid frames are routable from src to dst."""

    src: str = ap.H1_IP
    dst: str = ap.H2_IP
    src_mac: str = ap.H1_MAC
    dst_mac: str = ap.S1_MAC
    path_id: int | None = None  # tag every frame with this path id (frames from a path)
    # the tag's edges: from the peer edge 2 to the switch under test, edge 1 (as in the
    # testbed, s2 -> s1; p4src/include/edge_config.p4)
    src_edge: int = 2
    dst_edge: int = 1

    def __post_init__(self) -> None:
        for name in ("src", "dst"):
            try:
                ipaddress.IPv4Address(getattr(self, name))
            except ValueError as error:
                raise ValueError(f"{name}: {error}") from None
        if self.path_id is not None and not 0 <= self.path_id <= 0xFF:
            raise ValueError(f"path_id {self.path_id} outside 0..255")


def checksum16(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b"\x00"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def ipv4_header(ep: Endpoints, proto: int, payload_len: int, *, version: int = 4,
                ihl: int = 5, options: bytes = b"", total_len: int | None = None,
                ttl: int = 64, ident: int = 1, flags: int = 0, frag_offset: int = 0,
                tos: int = 0, bad_checksum: int = 0) -> bytes:
    """An IPv4 header of 20 bytes plus options as given; IHL and total length as given (by
    default the true ones), checksum right unless bad_checksum (XORed into it) is non-zero."""
    if total_len is None:
        total_len = IPV4_LEN + len(options) + payload_len
    head = struct.pack(
        "!BBHHHBBH4s4s", (version << 4) | ihl, tos, total_len & 0xFFFF, ident,
        (flags << 13) | frag_offset, ttl, proto, 0,
        ipaddress.IPv4Address(ep.src).packed, ipaddress.IPv4Address(ep.dst).packed,
    ) + options
    csum = checksum16(head) ^ bad_checksum
    return head[:10] + struct.pack("!H", csum) + head[12:]


def ethernet(ep: Endpoints, ether_type: int, payload: bytes, rng: random.Random) -> bytes:
    """Ethernet (and, with ep.path_id, a path tag carrying ether_type) before payload."""
    if ep.path_id is None:
        return bytes(Ether(src=ep.src_mac, dst=ep.dst_mac, type=ether_type)) + payload
    # path_tag_t as the compiled program lays it out (src/mpsched/p4rt/bmv2json.py): the fields
    # the switch checks set, the measurement fields (sequence, time stamp, feedback) random
    layout = path_tag()
    values = {name: rng.getrandbits(bits) for name, bits in layout.fields}
    values.update(path_id=ep.path_id, flags=0, src_edge=ep.src_edge, dst_edge=ep.dst_edge,
                  next_type=ether_type)
    tag = layout.pack(values)
    return bytes(Ether(src=ep.src_mac, dst=ep.dst_mac, type=ETHERTYPE_PATH_TAG)) + tag + payload


def ipv4_options(rng: random.Random, words: int) -> bytes:
    """words * 4 bytes of well-formed IPv4 options: NOPs, a record route or a timestamp
    option filling the space, ending in EOL where space is left."""
    size = words * 4
    if size == 0:
        return b""
    style = rng.randrange(3)
    if style == 0 or size < 8:
        return b"\x01" * (size - 1) + b"\x00"
    if style == 1:  # record route (RFC 791): type 7, length, pointer 4, route data
        length = 3 + 4 * ((size - 3) // 4)
        return bytes((7, length, 4)) + bytes(length - 3) + b"\x00" * (size - length)
    length = 4 + 4 * ((size - 4) // 4)  # internet timestamp, flag 0: time stamps only
    return bytes((68, length, 5, 0)) + bytes(length - 4) + b"\x00" * (size - length)


def frame_ip_offset(frame: bytes) -> int:
    """Where the IPv4 header would start: after Ethernet, and after a path tag if the
    ether type says one follows."""
    if len(frame) >= ETH_LEN and struct.unpack_from("!H", frame, 12)[0] == ETHERTYPE_PATH_TAG:
        return ETH_LEN + path_tag().size
    return ETH_LEN


def ipv4_header_valid(frame: bytes, *, min_ttl: int = 1) -> tuple[bool, str]:
    """(True, "ok") if frame is Ethernet [+ path tag] + an IPv4 header a router may forward
    (RFC 1812 §5.2.2: version 4, IHL >= 5, IHL * 4 <= total length <= the bytes after
    Ethernet and the tag, right header checksum over the header with its options, TTL at
    least min_ttl: 1 for a frame leaving a router, 2 for one arriving that it must forward);
    else (False, reason), reason one of REASONS, the first that applies in that order:
    truncated (Ethernet, tag or the 20-byte header), not_ipv4, ipv4_version, ipv4_ihl,
    ipv4_total_len_short, ipv4_total_len_long, ipv4_checksum, ttl_expired."""
    if len(frame) < ETH_LEN:
        return False, "truncated"
    ether_type = struct.unpack_from("!H", frame, 12)[0]
    start = ETH_LEN
    if ether_type == ETHERTYPE_PATH_TAG:
        tag = path_tag()
        if len(frame) < ETH_LEN + tag.size:
            return False, "truncated"
        ether_type = tag.unpack(frame[ETH_LEN:])["next_type"]
        start += tag.size
    if ether_type != ETHERTYPE_IPV4:
        return False, "not_ipv4"
    ip = frame[start:]
    if len(ip) < IPV4_LEN:
        return False, "truncated"
    version, ihl = ip[0] >> 4, ip[0] & 0x0F
    total_len = struct.unpack_from("!H", ip, 2)[0]
    if version != 4:
        return False, "ipv4_version"
    if ihl < 5:
        return False, "ipv4_ihl"
    if total_len < ihl * 4:
        return False, "ipv4_total_len_short"
    if total_len > len(ip):
        return False, "ipv4_total_len_long"
    if checksum16(ip[:ihl * 4]) != 0:
        return False, "ipv4_checksum"
    if ip[8] < min_ttl:
        return False, "ttl_expired"
    return True, "ok"
