"""The seeded frame generator (src/mpsched/testing/fuzz.py) against the IPv4 header check
(src/mpsched/testing/ipv4frames.py): pure, no switch. (The frames against the real program:
ptf-tests/fuzzing.py, FuzzTest.)"""

from __future__ import annotations

import random
import re
import struct
from collections import Counter

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from mpsched import addressing as ap
from mpsched.p4rt.bmv2json import path_tag
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG
from mpsched.proc.layout import REPO_ROOT, p4_artifacts
from mpsched.testing import fuzz, ipv4frames

SEED = 7
COUNT = 10_000


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    """The generator and the check lay path tags out as the compiled program's (build/p4)."""
    missing = p4_artifacts().missing()
    if missing:
        pytest.skip(f"P4 program not compiled ({missing[0]}); run `make p4` (needs p4c)")


@pytest.fixture(scope="module")
def frames() -> list[tuple[str, bytes]]:
    return fuzz.frames(SEED, COUNT)


@pytest.fixture(scope="module")
def tagged() -> list[tuple[str, bytes]]:
    return fuzz.frames(SEED, 3000, src=ap.H2_IP, dst=ap.H1_IP, path_id=2)


def p4_drop_reasons() -> dict[str, int]:
    """DROP_REASONS of p4src/include/defines.p4: lower-case name -> code."""
    text = (REPO_ROOT / "p4src" / "include" / "defines.p4").read_text()
    block = text[text.index("#define DROP_REASONS(R, SEP)"):]
    block = block[:block.index("#define DROP_REASON_COUNT")]
    return {name.lower(): int(code) for name, code in re.findall(r"R\((\w+), (\d+)\)", block)}


def ip_of(frame: bytes) -> bytes:
    return frame[ipv4frames.frame_ip_offset(frame):]


def tcp_options(frame: bytes) -> bytes:
    ip = ip_of(frame)
    tcp = ip[(ip[0] & 0x0F) * 4:]
    return tcp[20:(tcp[12] >> 4) * 4]


def test_same_seed_same_frames_and_count(frames):
    assert len(frames) == COUNT
    assert fuzz.frames(SEED, 300) == fuzz.frames(SEED, 300)
    assert fuzz.frames(SEED, 300) != fuzz.frames(SEED + 1, 300)
    assert fuzz.frames(SEED, 0) == []
    with pytest.raises(ValueError, match="count"):
        fuzz.frames(SEED, -1)


def test_bad_endpoints_are_refused_by_field():
    with pytest.raises(ValueError, match="^dst: "):
        fuzz.frames(SEED, 1, dst="10.0.300.1")
    with pytest.raises(ValueError, match="path_id"):
        fuzz.frames(SEED, 1, path_id=256)


def test_kinds_cover_the_brief(frames):
    kinds = Counter(kind for kind, _ in frames)
    assert set(kinds) == set(fuzz.GENERATORS) | {"tcp_option", "mptcp_frame_cut",
                                                 "mptcp_option_cut"}
    assert kinds["valid"] >= 1000
    malformed = sum(n for k, n in kinds.items() if k not in fuzz.WELL_FORMED_KINDS)
    assert malformed >= 4000


def test_every_tcp_option_kind_and_length(frames):
    seen_kinds, seen_lengths = set(), set()
    for kind, frame in frames:
        if kind == "tcp_option":
            opts = tcp_options(frame)
            seen_kinds.add(opts[0])
            seen_lengths.add(opts[1])
    assert seen_kinds == set(range(256))
    assert seen_lengths == set(range(256))


def test_mptcp_options_cut_at_every_byte(frames):
    """Every handshake option cut at every byte, both ways: the frame ends inside the option
    (the IPv4 total length with it, the TCP data offset claiming the whole option), or the
    TCP header ends there (data offset) and the rest of the option follows as payload."""
    kinds = Counter(kind for kind, _ in frames)
    need = sum(fuzz.MPTCP_OPTION_LENGTHS.values())
    assert kinds["mptcp_frame_cut"] >= need and kinds["mptcp_option_cut"] >= need
    ep = ipv4frames.Endpoints()
    for name, length in fuzz.MPTCP_OPTION_LENGTHS.items():
        for cut in range(length):
            option, _ = fuzz.mptcp_options(random.Random(cut))[name]
            assert len(option) == length
            ip = ip_of(fuzz.mptcp_cut(ep, random.Random(cut), name, cut, True))
            tcp = ip[20:]
            assert tcp[20:] == option[:cut]
            assert (tcp[12] >> 4) * 4 >= 20 + length > len(tcp)
            assert struct.unpack_from("!H", ip, 2)[0] == len(ip)
            frame = fuzz.mptcp_cut(ep, random.Random(cut), name, cut, False)
            opts = tcp_options(frame)
            assert opts[:cut] == option[:cut] and len(opts) < cut + 4
            assert ip_of(frame).endswith(option[cut:])


def test_ihl_total_length_ttl_and_truncations_covered(frames):
    ihls, ttls, eth_cuts, tag_cuts, ip_cuts = set(), set(), set(), set(), set()
    short = long = frag_first = frag_later = 0
    ether_types = set()
    for kind, frame in frames:
        if kind == "truncated_ethernet":
            eth_cuts.add(len(frame))
            continue
        if kind == "truncated_tag":
            tag_cuts.add(len(frame) - ipv4frames.ETH_LEN)
            continue
        if kind == "truncated_ipv4":
            ip_cuts.add(len(ip_of(frame)))
            continue
        if kind == "random_ether_type":
            ether_types.add(struct.unpack_from("!H", frame, 12)[0])
        if kind in ("random_bytes", "random_ether_type"):
            continue
        ip = ip_of(frame)
        ihls.add(ip[0] & 0x0F)
        total = struct.unpack_from("!H", ip, 2)[0]
        short += total < len(ip) and kind == "total_len_short"
        long += total > len(ip)
        ttls.add(ip[8])
        flags_frag = struct.unpack_from("!H", ip, 6)[0]
        if kind == "fragment":
            frag_first += flags_frag == 0x2000
            frag_later += flags_frag & 0x1FFF != 0
    assert ihls == set(range(16))
    assert {0, 1} <= ttls
    assert eth_cuts == set(range(ipv4frames.ETH_LEN))
    assert tag_cuts == set(range(path_tag().size))
    assert ip_cuts == set(range(ipv4frames.IPV4_LEN))
    assert short > 100 and long > 100 and frag_first > 100 and frag_later > 100
    assert len(ether_types) >= 40 and not ether_types & {0x0800, ETHERTYPE_PATH_TAG}


def test_kinds_agree_with_the_header_check(frames, tagged):
    """Every single-defect frame fails for its kind's reason, every well-formed one passes
    (as a frame arriving at a router: TTL at least 2)."""
    for kind, frame in frames + tagged:
        ok, reason = ipv4frames.ipv4_header_valid(frame, min_ttl=2)
        if kind in fuzz.KIND_REASON:
            assert (ok, reason) == (False, fuzz.KIND_REASON[kind]), (kind, frame.hex())
        if kind in fuzz.WELL_FORMED_KINDS:
            assert ok, (kind, reason, frame.hex())


def test_well_formed_frames_parse_with_their_endpoints(frames):
    for kind, frame in frames:
        if kind == "valid":
            pkt = Ether(frame)
            assert (pkt[IP].src, pkt[IP].dst) == (ap.H1_IP, ap.H2_IP)
            assert pkt[IP].ttl >= 2 and pkt[IP].len == len(frame) - ipv4frames.ETH_LEN
            if TCP in pkt or UDP in pkt:
                l4 = pkt[TCP] if TCP in pkt else pkt[UDP]
                assert l4.dport in (80, 443, 5201, 53, 4789)


def test_tagged_frames_carry_the_path_id(tagged):
    for kind, frame in tagged:
        if kind in ("random_bytes", "truncated_ethernet"):
            continue
        assert struct.unpack_from("!H", frame, 12)[0] == ETHERTYPE_PATH_TAG, kind
        if len(frame) >= ipv4frames.ETH_LEN + path_tag().size:
            assert frame[ipv4frames.ETH_LEN] == 2
            assert frame[ipv4frames.ETH_LEN + 1] == 0  # flags: never a probe


def test_reasons_are_the_data_planes():
    """Every reason the check returns and every kind's reason is a drop reason of the P4
    source (defines.p4), whose codes are distinct and numbered 1..N."""
    reasons = p4_drop_reasons()
    assert set(ipv4frames.REASONS) <= set(reasons)
    assert set(fuzz.KIND_REASON.values()) <= set(reasons)
    assert sorted(reasons.values()) == list(range(1, len(reasons) + 1))


def test_tags_are_laid_out_as_the_programs(artifacts, tagged):
    """The generator's tags follow path_tag_t of the compiled program: its fields at their
    places, the IPv4 header right after it."""
    layout = path_tag(artifacts.bmv2_json)
    valid = [frame for kind, frame in tagged if kind == "valid"]
    assert valid
    for frame in valid:
        tag = layout.unpack(frame[ipv4frames.ETH_LEN:])
        assert (tag["path_id"], tag["flags"], tag["next_type"]) == (2, 0, 0x0800)
        assert frame[ipv4frames.ETH_LEN + layout.size] >> 4 == 4  # IPv4 version
