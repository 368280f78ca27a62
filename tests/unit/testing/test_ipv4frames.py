"""Building IPv4 frames and checking what leaves a switch port (src/mpsched/testing/ipv4frames.py,
RFC 1812 §5.2.2): pure, against frames scapy builds."""

from __future__ import annotations

import struct

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from mpsched import addressing as ap
from mpsched.p4rt.bmv2json import path_tag
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG
from mpsched.proc.layout import p4_artifacts
from mpsched.testing import ipv4frames


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    """The check lays path tags out as the compiled program's (build/p4)."""
    missing = p4_artifacts().missing()
    if missing:
        pytest.skip(f"P4 program not compiled ({missing[0]}); run `make p4` (needs p4c)")


def test_header_check_vectors():
    base = Ether(src=ap.H1_MAC, dst=ap.S1_MAC) / IP(
        src=ap.H1_IP, dst=ap.H2_IP, ttl=1) / UDP() / (b"x" * 8)
    frame = bytes(base)
    assert ipv4frames.ipv4_header_valid(frame) == (True, "ok")
    assert ipv4frames.ipv4_header_valid(frame, min_ttl=2) == (False, "ttl_expired")
    bad = bytearray(frame)
    bad[ipv4frames.ETH_LEN + 10] ^= 0xFF
    assert ipv4frames.ipv4_header_valid(bytes(bad)) == (False, "ipv4_checksum")
    assert ipv4frames.ipv4_header_valid(frame[:10]) == (False, "truncated")
    assert ipv4frames.ipv4_header_valid(frame[:ipv4frames.ETH_LEN + 19]) == (False, "truncated")
    # total length one above the frame, checksum right
    ip = bytearray(frame[ipv4frames.ETH_LEN:ipv4frames.ETH_LEN + 20])
    ip[2:4] = struct.pack("!H", len(frame) - ipv4frames.ETH_LEN + 1)
    ip[10:12] = b"\x00\x00"
    ip[10:12] = struct.pack("!H", ipv4frames.checksum16(bytes(ip)))
    longer = frame[:ipv4frames.ETH_LEN] + bytes(ip) + frame[ipv4frames.ETH_LEN + 20:]
    assert ipv4frames.ipv4_header_valid(longer) == (False, "ipv4_total_len_long")
    # options: IHL 6 with a right checksum over them; then one option byte flipped
    opts = ipv4frames.ipv4_header(ipv4frames.Endpoints(), 17, 8, ihl=6, options=b"\x01\x01\x01\x00")
    with_opts = frame[:ipv4frames.ETH_LEN] + opts + bytes(8)
    assert ipv4frames.ipv4_header_valid(with_opts) == (True, "ok")
    flipped = bytearray(with_opts)
    flipped[ipv4frames.ETH_LEN + 21] ^= 1
    assert ipv4frames.ipv4_header_valid(bytes(flipped)) == (False, "ipv4_checksum")
    # a tag: IPv4 after it is checked; a tag carrying IPv6 is not IPv4
    layout = path_tag()
    tag = layout.pack({"path_id": 1, "src_edge": 2, "dst_edge": 1, "seq": 5,
                       "next_type": 0x0800})
    eth_tag = frame[:12] + struct.pack("!H", ETHERTYPE_PATH_TAG)
    assert ipv4frames.ipv4_header_valid(eth_tag + tag + frame[ipv4frames.ETH_LEN:]) == (True, "ok")
    ipv6 = layout.pack({**layout.unpack(tag), "next_type": 0x86DD})
    assert ipv4frames.ipv4_header_valid(eth_tag + ipv6 + frame[14:]) == (False, "not_ipv4")
    assert ipv4frames.ipv4_header_valid(eth_tag + tag[:5]) == (False, "truncated")
