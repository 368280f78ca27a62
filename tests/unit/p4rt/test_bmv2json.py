"""Header layouts from the BMv2 JSON (src/mpsched/p4rt/bmv2json.py): a header that changes in P4
changes every Python user of it, which holds no copy of its size or offsets."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from mpsched.lab.fabric_mptcp import frame_bytes
from mpsched.lab.pcap import PcapPacket
from mpsched.p4rt import bmv2json
from mpsched.p4rt.bmv2json import Bmv2JsonError, HeaderLayout, header_layout, path_tag
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG, HEADER_PATH_TAG
from mpsched.testing import fuzz, ipv4frames, tagcap

TAG_FIELDS = [["path_id", 8, False], ["flags", 8, False], ["src_edge", 8, False],
              ["dst_edge", 8, False], ["seq", 32, False], ["tx_ts", 48, False],
              ["fb_path", 8, False], ["fb_age", 8, False], ["fb_qdelay", 16, False],
              ["fb_loss", 16, False], ["fb_rate", 16, False], ["next_type", 16, False]]
# The same tag with one more field before fb_path: 4 bytes longer, feedback further on.
GROWN_FIELDS = [*TAG_FIELDS[:6], ["epoch", 32, False], *TAG_FIELDS[6:]]


def write_json(path, fields) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"header_types": [
        {"name": "ethernet_t", "id": 1, "fields": [["dst", 48, False]]},
        {"name": HEADER_PATH_TAG, "id": 2, "fields": fields}]}))


@pytest.fixture
def grown_build(tmp_path, monkeypatch, artifacts):
    """A build directory whose program has the grown tag, as the default (MPSCHED_BUILD_DIR),
    and the compiled program's P4Info (the tag's units)."""
    write_json(tmp_path / "p4" / "main.json", GROWN_FIELDS)
    (tmp_path / "p4" / "main.p4info.txt").write_text(Path(artifacts.p4info).read_text())
    monkeypatch.setenv("MPSCHED_BUILD_DIR", str(tmp_path))
    path_tag.cache_clear()
    tagcap.fb_age_unit_s.cache_clear()
    yield path_tag()
    path_tag.cache_clear()
    tagcap.fb_age_unit_s.cache_clear()


def test_layout_size_offsets_and_round_trip(tmp_path):
    write_json(tmp_path / "a.json", TAG_FIELDS)
    tag = header_layout(tmp_path / "a.json", HEADER_PATH_TAG)
    assert tag.size == 24
    assert (tag.offset("path_id"), tag.offset("seq"), tag.offset("fb_path"),
            tag.offset("next_type")) == (0, 4, 14, 22)
    values = {"path_id": 3, "src_edge": 1, "dst_edge": 2, "seq": 0xDEADBEEF,
              "tx_ts": (1 << 48) - 1, "fb_age": 5, "next_type": 0x0800}
    raw = tag.pack(values)
    assert raw[:8] == bytes([3, 0, 1, 2]) + struct.pack("!I", 0xDEADBEEF)
    assert raw[-2:] == b"\x08\x00" and raw[15] == 5
    assert tag.unpack(raw + b"rest") == {name: values.get(name, 0) for name, _, _ in TAG_FIELDS}


def test_layout_errors(tmp_path):
    write_json(tmp_path / "a.json", TAG_FIELDS)
    with pytest.raises(Bmv2JsonError, match="no header type 'nope_t'"):
        header_layout(tmp_path / "a.json", "nope_t")
    with pytest.raises(Bmv2JsonError, match="make p4"):
        header_layout(tmp_path / "missing.json", HEADER_PATH_TAG)
    odd = HeaderLayout("odd_t", (("a", 4), ("b", 12)))
    with pytest.raises(Bmv2JsonError, match="byte boundary"):
        odd.offset("b")
    with pytest.raises(Bmv2JsonError, match="no field 'c'"):
        odd.pack({"c": 1})
    with pytest.raises(Bmv2JsonError, match="hold no"):
        odd.unpack(b"\x00")
    write_json(tmp_path / "b.json", [["a", 4, False]])
    with pytest.raises(Bmv2JsonError, match="whole number of bytes"):
        header_layout(tmp_path / "b.json", HEADER_PATH_TAG)


def test_the_compiled_tag_is_the_default(artifacts):
    path_tag.cache_clear()
    assert path_tag() == header_layout(artifacts.bmv2_json, HEADER_PATH_TAG)
    assert path_tag().offset("next_type") == path_tag().size - 2


def test_python_follows_a_changed_tag(grown_build):
    """The fuzz generator and header check, the capture parser of the fabric failover bench
    and the MPTCP frame bytes all take the program's tag: 28 bytes here, not 24."""
    assert grown_build.size == 28 and bmv2json.path_tag() is grown_build
    frames = fuzz.frames(3, 1500, path_id=2)
    valid = [f for kind, f in frames if kind == "valid"]
    assert valid and all(ipv4frames.ipv4_header_valid(f) == (True, "ok") for f in valid)
    assert all(f[ipv4frames.ETH_LEN + 28] >> 4 == 4 for f in valid)  # IPv4 after 28 tag bytes
    tag = grown_build.pack({"path_id": 2, "src_edge": 4, "dst_edge": 1, "fb_path": 1,
                            "fb_age": 5})
    frame = bytes(12) + ETHERTYPE_PATH_TAG.to_bytes(2, "big") + tag
    pcap = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 64, 1) \
        + struct.pack("<IIII", 3, 0, len(frame), len(frame)) + frame
    (got,) = tagcap.parse_tag_frames(pcap)
    assert (got.key, got.fb_path, got.fb_age_s) == ((4, 1, 2), 1, pytest.approx(5 * 4096e-6))
    packet = PcapPacket(ts=1.0, src="10.0.1.1", dst="10.0.2.1", proto=6, sport=1, dport=80,
                        ip_id=0, tcp_seq=0, payload_len=60, ip_len=100)
    assert frame_bytes([packet], ["10.0.1.1"], "10.0.2.1", 80, 0.0, 0.0, 2.0) == 100 + 14 + 28
