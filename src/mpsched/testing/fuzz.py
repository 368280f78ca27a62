"""Seeded malformed-frame generator.

`frames(seed, count)` returns `count` Ethernet frames, each with its kind: valid frames and
valid but unusual ones (IPv4 options, fragments, TCP options of every kind and length) mixed
with malformed ones (IPv4 version, IHL 0..4, total length shorter than the header or longer
than the frame, bad header checksum, TTL 0/1, truncated Ethernet, path tag, IPv4 and TCP,
MPTCP MP_CAPABLE/MP_JOIN options cut at every byte, random ether types, random bytes). The
same seed gives the same frames. With `path_id`, every frame that has a whole Ethernet header
carries a path tag after it, as frames arriving from a path do. The headers are built, and what
leaves a switch port is checked (RFC 1812 §5.2.2), by src/mpsched/testing/ipv4frames.py;
`KIND_REASON` says which of its drop reasons each single-defect kind must be counted under
(tests/unit/testing/test_fuzz.py checks them against the P4 source).

Pure functions (no I/O); used by the PTF tests (ptf-tests/fuzzing.py FuzzTest, whose frames
these are) and tested in tests/unit/testing/test_fuzz.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from scapy.layers.inet import ICMP, IP, TCP, UDP

from mpsched.p4rt.bmv2json import path_tag
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG
from mpsched.testing.ipv4frames import (
    ETH_LEN,
    ETHERTYPE_IPV4,
    IPV4_LEN,
    Endpoints,
    ethernet,
    frame_ip_offset,
    ipv4_header,
    ipv4_options,
)

TCP_LEN = 20
PROTO_TCP = 6
PROTO_UDP = 17
PROTO_ICMP = 1
TCP_OPTION_MPTCP = 30

# Frames that a router forwards: a valid IPv4 header and whole TCP/UDP headers.
WELL_FORMED_KINDS = frozenset({"valid", "ipv4_options", "fragment", "tcp_option",
                               "mptcp_option_cut"})
# Kinds with exactly one defect, and the drop reason the switch counts them under.
KIND_REASON = {
    "bad_version": "ipv4_version",
    "ihl_below_5": "ipv4_ihl",
    "total_len_short": "ipv4_total_len_short",
    "total_len_long": "ipv4_total_len_long",
    "bad_checksum": "ipv4_checksum",
    "ttl_expired": "ttl_expired",
    "truncated_tag": "truncated",
    "truncated_ipv4": "truncated",
    "random_ether_type": "not_ipv4",
}


def _l4(ep: Endpoints, proto: int, rng: random.Random, payload_len: int, *,
        tcp_flags: str = "PA", tcp_options: list | None = None) -> bytes:
    """A TCP, UDP or ICMP segment with a right checksum (built by scapy under an IPv4
    header that is then dropped; options of the IPv4 header do not enter the checksum)."""
    data = rng.randbytes(payload_len)
    if proto == PROTO_TCP:
        l4 = TCP(sport=rng.randint(1024, 65535), dport=rng.choice((80, 443, 5201)),
                 seq=rng.getrandbits(32), ack=rng.getrandbits(32), flags=tcp_flags,
                 options=tcp_options or [])
    elif proto == PROTO_UDP:
        l4 = UDP(sport=rng.randint(1024, 65535), dport=rng.choice((53, 4789, 5201)))
    else:
        l4 = ICMP(type=8, id=rng.getrandbits(16), seq=rng.getrandbits(16))
    return bytes(IP(src=ep.src, dst=ep.dst, proto=proto) / l4 / data)[IPV4_LEN:]


def _ip_frame(ep: Endpoints, rng: random.Random, l4: bytes, proto: int, **ip) -> bytes:
    return ethernet(ep, ETHERTYPE_IPV4, ipv4_header(ep, proto, len(l4), **ip) + l4, rng)


def _some_l4(ep: Endpoints, rng: random.Random) -> tuple[int, bytes]:
    proto = rng.choice((PROTO_TCP, PROTO_TCP, PROTO_UDP, PROTO_ICMP))
    return proto, _l4(ep, proto, rng, rng.randint(0, 200))


def _ttl(rng: random.Random) -> int:
    return rng.randint(2, 255)


# Generators of one frame of each kind. Each takes the endpoints, the random source and an
# index (which deterministic coverage cases use to step through values).
def _valid(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    proto, l4 = _some_l4(ep, rng)
    return _ip_frame(ep, rng, l4, proto, ttl=_ttl(rng), ident=rng.getrandbits(16),
                     tos=rng.getrandbits(8))


def _with_options(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    ihl = 6 + i % 10
    proto, l4 = _some_l4(ep, rng)
    return _ip_frame(ep, rng, l4, proto, ihl=ihl, options=ipv4_options(rng, ihl - 5),
                     ttl=_ttl(rng))


def _fragment(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    proto = rng.choice((PROTO_TCP, PROTO_UDP))
    if i % 2 == 0:  # a first fragment: whole L4 header, more fragments follow
        l4 = _l4(ep, proto, rng, 8 * rng.randint(1, 20))
        return _ip_frame(ep, rng, l4, proto, flags=1, ttl=_ttl(rng))
    # a later fragment: its first bytes are data, not an L4 header (they look like an
    # option-laden TCP SYN to a parser that would read them)
    data = bytes((0x12, 0x34, 0x00, 0x50)) + rng.randbytes(8) + bytes((0xF0, 0x02)) \
        + rng.randbytes(8 * rng.randint(1, 20))
    return _ip_frame(ep, rng, data, proto, flags=rng.choice((0, 1)),
                     frag_offset=rng.randint(1, 8191), ttl=_ttl(rng))


def _bad_version(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    proto, l4 = _some_l4(ep, rng)
    version = (i % 15 + 5) % 16  # every value but 4
    return _ip_frame(ep, rng, l4, proto, version=version, ttl=_ttl(rng))


def _ihl_below_5(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    proto, l4 = _some_l4(ep, rng)
    return _ip_frame(ep, rng, l4, proto, ihl=i % 5, ttl=_ttl(rng))


def _total_len_short(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    ihl = 5 + i % 11
    proto, l4 = _some_l4(ep, rng)
    return _ip_frame(ep, rng, l4, proto, ihl=ihl, options=ipv4_options(rng, ihl - 5),
                     total_len=rng.randrange(ihl * 4), ttl=_ttl(rng))


def _total_len_long(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    ihl = rng.choice((5, 5, 5, 6 + i % 10))
    proto, l4 = _some_l4(ep, rng)
    true_len = ihl * 4 + len(l4)
    over = rng.choice((1, 2, 4, rng.randint(1, 65535 - true_len)))
    return _ip_frame(ep, rng, l4, proto, ihl=ihl, options=ipv4_options(rng, ihl - 5),
                     total_len=true_len + over, ttl=_ttl(rng))


def _bad_checksum(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    ihl = 5 if i % 2 else 6 + i % 10
    proto, l4 = _some_l4(ep, rng)
    return _ip_frame(ep, rng, l4, proto, ihl=ihl, options=ipv4_options(rng, ihl - 5),
                     ttl=_ttl(rng), bad_checksum=rng.randint(1, 0xFFFF))


def _ttl_expired(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    proto, l4 = _some_l4(ep, rng)
    return _ip_frame(ep, rng, l4, proto, ttl=i % 2)


def _truncated_ethernet(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    return _valid(ep, rng, i)[:i % ETH_LEN]


def _truncated_tag(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    tagged = Endpoints(ep.src, ep.dst, ep.src_mac, ep.dst_mac, ep.path_id or 1)
    return _valid(tagged, rng, i)[:ETH_LEN + i % path_tag().size]


def _truncated_ipv4(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    frame = _valid(ep, rng, i)
    return frame[:frame_ip_offset(frame) + i % IPV4_LEN]


def _truncated_tcp(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    """A valid IPv4 header (total length that of the cut frame) and a TCP header cut after
    0..19 bytes: nothing wrong with IPv4, but the switch cannot parse the TCP header."""
    l4 = _l4(ep, PROTO_TCP, rng, 16)[:i % TCP_LEN]
    return _ip_frame(ep, rng, l4, PROTO_TCP, ttl=_ttl(rng))


def _random_ether_type(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    ether_type = rng.choice((0x86DD, 0x0806, 0x8100, 0x88CC, 0x0000, 0x05DC,
                             rng.getrandbits(16)))
    while ether_type in (ETHERTYPE_IPV4, ETHERTYPE_PATH_TAG):
        ether_type = rng.getrandbits(16)
    return ethernet(ep, ether_type, rng.randbytes(rng.randint(0, 120)), rng)


def _random_bytes(ep: Endpoints, rng: random.Random, i: int) -> bytes:
    return rng.randbytes(rng.randint(ETH_LEN, 200))


def tcp_option_frame(ep: Endpoints, rng: random.Random, kind: int, length: int) -> bytes:
    """A valid IPv4 packet whose TCP header holds one option of this kind and length byte
    (its data as far as the header's 40 option bytes reach), on a SYN, a pure ACK (whose
    options the switch walks) or a data segment."""
    option = bytes((kind, length)) + rng.randbytes(max(0, min(length, 40) - 2))
    option += b"\x01" * (-len(option) % 4)  # NOP padding to whole words
    flags = rng.choice(("S", "SA", "A", "PA"))
    payload = b"" if flags in ("S", "SA", "A") else rng.randbytes(rng.randint(1, 64))
    seg = bytes(IP(src=ep.src, dst=ep.dst) / TCP(
        sport=rng.randint(1024, 65535), dport=5201, flags=flags, seq=rng.getrandbits(32),
        ack=rng.getrandbits(32), dataofs=5 + len(option) // 4) / (option + payload))
    return _ip_frame(ep, rng, seg[IPV4_LEN:], PROTO_TCP, ttl=_ttl(rng))


# MPTCP handshake options (RFC 8684 §3.1, 3.2) as they appear on the wire, and the TCP
# flags of the segment that carries each.
def mptcp_options(rng: random.Random) -> dict[str, tuple[bytes, str]]:
    key_a, key_b = rng.randbytes(8), rng.randbytes(8)
    kind = TCP_OPTION_MPTCP
    return {
        "mp_capable_syn": (bytes((kind, 4, 0x01, 0x81)), "S"),
        "mp_capable_synack": (bytes((kind, 12, 0x01, 0x81)) + key_a, "SA"),
        "mp_capable_ack": (bytes((kind, 20, 0x01, 0x81)) + key_a + key_b, "A"),
        "mp_join_syn": (bytes((kind, 12, 0x10, 0x01)) + rng.randbytes(8), "S"),
    }


MPTCP_OPTION_LENGTHS = {"mp_capable_syn": 4, "mp_capable_synack": 12, "mp_capable_ack": 20,
                        "mp_join_syn": 12}


def mptcp_cut(ep: Endpoints, rng: random.Random, name: str, cut: int, frame_cut: bool) -> bytes:
    """MPTCP option `name` (mptcp_options) cut after `cut` bytes: with frame_cut the frame
    (and the IPv4 total length) ends there although the TCP data offset covers the whole
    option; else the TCP header ends there (data offset) and the option's length byte
    runs past it, into the payload."""
    option, flags = mptcp_options(rng)[name]
    head = option[:cut]
    words = (len(option) + 3) // 4 if frame_cut else (cut + 3) // 4
    opts = option + b"\x01" * (4 * words - len(option)) if frame_cut \
        else head + b"\x01" * (4 * words - cut)
    seg = bytes(IP(src=ep.src, dst=ep.dst) / TCP(
        sport=rng.randint(1024, 65535), dport=5201, flags=flags, seq=rng.getrandbits(32),
        ack=rng.getrandbits(32), dataofs=5 + words) / opts)[IPV4_LEN:]
    if frame_cut:
        seg = seg[:TCP_LEN + cut]
    else:
        seg += option[cut:]  # the rest of the option as payload
    return _ip_frame(ep, rng, seg, PROTO_TCP, ttl=_ttl(rng))


GENERATORS: dict[str, Callable[[Endpoints, random.Random, int], bytes]] = {
    "valid": _valid,
    "ipv4_options": _with_options,
    "fragment": _fragment,
    "bad_version": _bad_version,
    "ihl_below_5": _ihl_below_5,
    "total_len_short": _total_len_short,
    "total_len_long": _total_len_long,
    "bad_checksum": _bad_checksum,
    "ttl_expired": _ttl_expired,
    "truncated_ethernet": _truncated_ethernet,
    "truncated_tag": _truncated_tag,
    "truncated_ipv4": _truncated_ipv4,
    "truncated_tcp": _truncated_tcp,
    "random_ether_type": _random_ether_type,
    "random_bytes": _random_bytes,
}
# Relative frequency of each kind among the frames after the coverage cases.
WEIGHTS = {
    "valid": 20, "ipv4_options": 5, "fragment": 5, "bad_version": 4, "ihl_below_5": 4,
    "total_len_short": 5, "total_len_long": 6, "bad_checksum": 5, "ttl_expired": 3,
    "truncated_ethernet": 1, "truncated_tag": 2, "truncated_ipv4": 3, "truncated_tcp": 3,
    "random_ether_type": 4, "random_bytes": 3, "tcp_option": 8, "mptcp_frame_cut": 3,
    "mptcp_option_cut": 3,
}


def _coverage(ep: Endpoints, rng: random.Random) -> list[tuple[str, bytes]]:
    """The deterministic part: every TCP option kind and every length byte 0..255, every
    MPTCP handshake option cut at every byte (frame and header), every IHL 0..15, every
    version but 4, every truncation length of Ethernet, the tag and IPv4, TTL 0 and 1."""
    out: list[tuple[str, bytes]] = []
    for i in range(256):
        out.append(("tcp_option", tcp_option_frame(ep, rng, i, (i * 37 + 11) % 256)))
        out.append(("tcp_option", tcp_option_frame(ep, rng, (i * 53 + 7) % 256, i)))
    for name, length in MPTCP_OPTION_LENGTHS.items():
        for cut in range(length):
            out.append(("mptcp_frame_cut", mptcp_cut(ep, rng, name, cut, True)))
            out.append(("mptcp_option_cut", mptcp_cut(ep, rng, name, cut, False)))
    per_kind = {"ihl_below_5": 5, "ipv4_options": 10, "valid": 1, "bad_version": 15,
                "total_len_short": 11, "bad_checksum": 11, "ttl_expired": 2,
                "truncated_ethernet": ETH_LEN, "truncated_tag": path_tag().size,
                "truncated_ipv4": IPV4_LEN, "truncated_tcp": TCP_LEN, "fragment": 2,
                "total_len_long": 10}
    for kind, n in per_kind.items():
        out.extend((kind, GENERATORS[kind](ep, rng, i)) for i in range(n))
    return out


def frames(seed: int, count: int, *, src: str = Endpoints.src, dst: str = Endpoints.dst,
           src_mac: str = Endpoints.src_mac, dst_mac: str = Endpoints.dst_mac,
           path_id: int | None = None) -> list[tuple[str, bytes]]:
    """`count` frames as (kind, bytes), shuffled, the same for the same arguments: the
    coverage cases first in line (as many as fit), then kinds drawn by WEIGHTS. Valid frames
    go from src to dst; with path_id every frame that has a whole Ethernet header carries a
    path tag of that id (flags 0, random sequence number, time stamp
    and congestion feedback)."""
    if count < 0:
        raise ValueError(f"count {count} < 0")
    ep = Endpoints(src, dst, src_mac, dst_mac, path_id)
    rng = random.Random(seed)
    out = _coverage(ep, rng)[:count]
    kinds = list(WEIGHTS)
    weights = [WEIGHTS[k] for k in kinds]
    for i in range(count - len(out)):
        kind = rng.choices(kinds, weights)[0]
        if kind == "tcp_option":
            frame = tcp_option_frame(ep, rng, rng.getrandbits(8), rng.getrandbits(8))
        elif kind in ("mptcp_frame_cut", "mptcp_option_cut"):
            name = rng.choice(list(MPTCP_OPTION_LENGTHS))
            cut = rng.randrange(MPTCP_OPTION_LENGTHS[name])
            frame = mptcp_cut(ep, rng, name, cut, kind == "mptcp_frame_cut")
        else:
            frame = GENERATORS[kind](ep, rng, i)
        out.append((kind, frame))
    rng.shuffle(out)
    return out
