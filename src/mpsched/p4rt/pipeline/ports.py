"""The switch's special ports (CPU, probe) by role, from the packet_out header's @ports
annotation in the P4Info."""

from __future__ import annotations

from pathlib import Path

from mpsched.p4rt.p4info import P4Info, P4InfoError
from mpsched.p4rt.pipeline.names import ANNOTATION_PORTS, PACKET_OUT, PORT_CPU, PORT_PROBE


def program_cpu_port(p4info_path: str | Path) -> int | None:
    """The CPU port of the program whose P4Info text is at `p4info_path`, which BMv2 takes as
    --cpu-port for P4Runtime packet I/O (None: it has none, or no compiled program there)."""
    path = Path(p4info_path)
    if not path.is_file():
        return None
    return special_ports(P4Info.from_file(path)).get(PORT_CPU)


def program_probe_port(p4info_path: str | Path) -> int | None:
    """The probe port of the program whose P4Info text is at `p4info_path` (None: it has
    none, or the file does not exist: no compiled program)."""
    path = Path(p4info_path)
    if not path.is_file():
        return None
    return special_ports(P4Info.from_file(path)).get(PORT_PROBE)


def special_ports(p4info: P4Info) -> dict[str, int]:
    """The program's special ports by role ("cpu_port", "probe_port"), from the packet_out
    header's @ports annotation; a program without it has none ({})."""
    header = p4info.controller_header(PACKET_OUT)
    lists = [a.kv_pair_list for a in header.preamble.structured_annotations
             if a.name == ANNOTATION_PORTS]
    if not lists:
        return {}
    ports = {kv.key.lower(): kv.value.int64_value for kv in lists[0].kv_pairs}
    bad = sorted(k for k, v in ports.items() if not 0 <= v < 512)
    if len(lists) != 1 or bad or len(set(ports.values())) != len(ports):
        raise P4InfoError(f"{PACKET_OUT} @{ANNOTATION_PORTS}: one list of distinct BMv2 port "
                          f"numbers 0..511 expected (bad: {bad or 'duplicates'})")
    return ports
