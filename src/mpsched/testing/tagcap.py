"""Path-tagged frames captured at the edge switches' ports towards the fabric.

`start_captures` runs one `tcpdump` per interface (`edge_uplinks`: the ports of every edge
switch towards other switches; `-Q out` what the edge sends, with `inbound` `-Q in` too),
64 bytes a frame, only the path tag's Ether type. `parse_tag_frames` reads a capture back:
each frame's time, its tag's (source edge, destination edge, path id), whether it is a probe
(`PATH_FLAG_PROBE`) and the feedback it carries, with the tag laid out as the compiled
program has it (`mpsched.p4rt.bmv2json.path_tag`) and the feedback's age in the unit of its
P4Info (`fb_age_unit_s`). Used by the failover figure
(src/mpsched/bench/fabric_failover.py), the liveness replay (fabric_liveness.py there) and the
capturing run (fabric_run.py there).
"""

from __future__ import annotations

import functools
import logging
import struct
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpsched.fabric.model import Fabric
from mpsched.fabric.ports import port_map
from mpsched.p4rt.bmv2json import path_tag
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG, PATH_FLAG_PROBE, Pipeline
from mpsched.proc.layout import p4_artifacts

log = logging.getLogger(__name__)

TagKey = tuple[int, int, int]  # (source edge id, destination edge id, path id)
SNAPLEN = 64  # Ethernet (14) + the path tag (path_tag_t, src/mpsched/p4rt/bmv2json.py) + room
ETH_LEN = 14
_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
          b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}


@dataclass(frozen=True)
class TagFrame:
    """A captured tagged frame: its time (s, wall clock), tag and whether it is a probe, and
    the feedback it carries (`fb_path`, 0: none; its age `fb_age_s`, congestion.p4)."""

    ts: float
    key: TagKey
    probe: bool
    fb_path: int = 0
    fb_age_s: float = 0.0


@functools.cache
def fb_age_unit_s(p4info: Path | None = None) -> float:
    """The unit of the tag's fb_age in s: `fb_age_unit_us` of the program's @ca_units
    (Pipeline.ca_units) in `p4info`, by default the compiled program's (build/p4); 0 for a
    program without the congestion stage, whose tags carry no feedback."""
    pipeline = Pipeline(P4Info.from_file(p4info or p4_artifacts().p4info))
    return pipeline.ca_units.get("fb_age_unit_us", 0) / 1e6


def parse_tag_frames(data: bytes) -> Iterator[TagFrame]:
    """The path-tagged Ethernet frames of a classic pcap file's bytes (other frames and a
    truncated last record are skipped), the tag as the compiled program lays it out."""
    layout = path_tag()
    age_unit_s = fb_age_unit_s()
    if len(data) < 24 or data[:4] not in _MAGIC:
        raise ValueError("not a classic pcap file")
    endian, tick = _MAGIC[data[:4]]
    off = 24
    while off + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from(endian + "IIII", data, off)
        frame = data[off + 16: off + 16 + caplen]
        off += 16 + caplen
        if len(frame) < caplen:
            break
        if len(frame) < ETH_LEN + layout.size \
                or int.from_bytes(frame[12:14], "big") != ETHERTYPE_PATH_TAG:
            continue
        tag = layout.unpack(frame[ETH_LEN:])
        yield TagFrame(sec + frac * tick, (tag["src_edge"], tag["dst_edge"], tag["path_id"]),
                       bool(tag["flags"] & PATH_FLAG_PROBE), tag["fb_path"],
                       tag["fb_age"] * age_unit_s)


def read_tag_frames(files: Iterable[Path]) -> list[TagFrame]:
    """Every tagged frame of the capture files, by time."""
    frames: list[TagFrame] = []
    for path in files:
        try:
            frames += parse_tag_frames(path.read_bytes())
        except (OSError, ValueError) as exc:
            log.warning("%s: %s", path, exc)
    return sorted(frames, key=lambda f: f.ts)


def edge_uplinks(fabric: Fabric, intf_name: Callable[[str, int], str]) -> list[str]:
    """The interfaces of every edge switch's ports towards other switches."""
    ports = port_map(fabric)
    return [intf_name(sw.name, port) for sw in fabric.edges
            for port in sorted(ports[sw.name].neighbours.values())]


def start_captures(ifaces: Iterable[str], out_dir: Path, registry: Any, inbound: bool = False
                   ) -> list[tuple[str, subprocess.Popen]]:
    """A `tcpdump -Q out` of the path-tagged frames on each interface (root namespace), into
    `tags-<iface>.pcap`; with `inbound` also a `-Q in` into `in-<iface>.pcap` (what the edges
    receive: the feedback their liveness judges by, src/mpsched/bench/fabric_liveness.py)."""
    procs = []
    for iface in ifaces:
        for direction, prefix in (("out", "tags"), ("in", "in"))[:2 if inbound else 1]:
            path = out_dir / f"{prefix}-{iface}.pcap"
            args = ["tcpdump", "-i", iface, "-Q", direction, "-s", str(SNAPLEN), "-B", "4096",
                    "-n", "-w", str(path), f"ether proto {ETHERTYPE_PATH_TAG:#x}"]
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            registry.add_process(proc.pid, " ".join(args))
            procs.append((f"tcpdump-{iface}" if prefix == "tags" else f"tcpdump-in-{iface}", proc))
    time.sleep(0.5)  # the captures listening before the measured time starts
    return procs
