"""The programs `make bench-dataplane` and `make bench-dpcost` load on BMv2: their build
artifacts, the test frames they are offered, and the forwarding state of the full program
(an edge switch with one path, the controller's own entries)."""

from __future__ import annotations

from pathlib import Path

from mpsched import addressing as ap
from mpsched.netcfg import PathCfg, plan_edges
from mpsched.p4profiles import REDUCED
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import ALL_TABLES, ETHERTYPE_PATH_TAG, Pipeline
from mpsched.proc.layout import build_dir, p4_artifacts


def minimal_artifacts() -> tuple[Path, Path]:
    base = build_dir() / "p4-minimal"
    return base / "minimal.json", base / "minimal.p4info.txt"


def ipv4_artifacts() -> tuple[Path, Path]:
    base = build_dir() / "p4-ipv4"
    return base / "ipv4.json", base / "ipv4.p4info.txt"


# The programs, in the order of a round: name, label of the summary.
PROGRAMS = (
    ("minimal", "minimal program (1 table)"),
    ("ipv4", "IPv4 forwarding program"),
    ("full", "full program"),
)


def profile_artifacts(profile: str) -> tuple[Path, Path]:
    """(BMv2 JSON, P4Info) that `make p4 P4_PROFILE=profile` builds (4 paths)."""
    base = build_dir() / f"p4-{profile}"
    return base / "main.json", base / "main.p4info.txt"


def program_artifacts() -> dict[str, tuple[Path, Path]]:
    """(BMv2 JSON, P4Info) of each program of PROGRAMS and each reduced compile-time profile
    (mpsched.p4profiles.REDUCED)."""
    art = p4_artifacts()
    return {
        "minimal": minimal_artifacts(),
        "ipv4": ipv4_artifacts(),
        "full": (art.bmv2_json, art.p4info),
        **{p.name: profile_artifacts(p.name) for p in REDUCED},
    }


def missing_programs(profiles: bool = False) -> list[str]:
    """One line per program file (of PROGRAMS, and of the reduced profiles if asked) not built."""
    names = [name for name, _ in PROGRAMS] + ([p.name for p in REDUCED] if profiles else [])
    art = program_artifacts()
    lines = []
    for name in names:
        how = "`make p4`" if name in dict(PROGRAMS) else f"`make p4 P4_PROFILE={name}`"
        lines += [f"{m}: missing; run {how}" for m in art[name] if not m.is_file()]
    return lines


# Kinds of test traffic: "udp" (default) a 64-byte UDP frame from the host bound for the
# paths; "tcp" a TCP ACK with timestamps and 18 bytes of data from the host bound for the
# paths (the TCP option walk, MPTCP's pin lookup, the RTT monitor); "tagged" the same TCP
# segment arriving tagged from path 1 on the path port, bound for the host (the egress edge:
# path measurement and per-flow order, tag removal, the RTT monitor's ACK side); "transit"
# the same tagged segment of another pair of edges (3 -> 4), which the switch forwards by
# transit_nexthop to the host port untouched (p4src/include/edge_config.p4).
TRAFFIC = ("udp", "tcp", "tagged", "transit")
# The pair of edges of "transit" traffic (neither is the switch's, s1 = edge 1).
TRANSIT_EDGES = (3, 4)


def frame_hex(traffic: str = "udp") -> str:
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether

    if traffic == "udp":
        pkt = (
            Ether(dst=ap.S1_MAC, src=ap.H1_MAC)
            / IP(src=ap.H1_IP, dst=ap.H2_IP, ttl=64)
            / UDP(sport=4000, dport=5000)
            / (b"\0" * 18)
        )
        return bytes(pkt).hex()
    if traffic not in TRAFFIC:
        raise ValueError(f"traffic {traffic!r} is not one of {TRAFFIC}")
    src, dst = (ap.H1_IP, ap.H2_IP) if traffic == "tcp" else (ap.H2_IP, ap.H1_IP)
    segment = (
        IP(src=src, dst=dst, ttl=64)
        / TCP(sport=4000, dport=5000, flags="A", seq=1000, ack=1,
              options=[("NOP", None), ("NOP", None), ("Timestamp", (1, 1))])
        / (b"\0" * 18)
    )
    if traffic == "tcp":
        return bytes(Ether(dst=ap.S1_MAC, src=ap.H1_MAC) / segment).hex()
    # path_tag_t (p4src/include/headers.p4): path id, flags, source edge (s2: 2), destination
    # edge (s1: 1), seq, tx_ts (48 bits), feedback (8 bytes: none), next type
    edges = list(TRANSIT_EDGES) if traffic == "transit" else [2, 1]
    tag = (bytes([1, 0, *edges]) + (7).to_bytes(4, "big") + (1000).to_bytes(6, "big") + bytes(8)
           + b"\x08\x00")
    eth = Ether(dst=ap.S1_MAC, src=ap.S2_MAC, type=ETHERTYPE_PATH_TAG)
    return (bytes(eth) + tag + bytes(segment)).hex()


# Path-choice modes the full program can be measured in (bench-dpcost --mode): class 0 in
# that mode; flowlet and ca with a flowlet gap of 0, so that every packet starts a new
# flowlet and pays the mode's choice.
MODES = ("hash", "flowlet", "ca")
# mode ca: every live term on, metrics never stale (the cost of the choice does not depend on
# the values)
CA_BENCH_PARAMS = {"c_qdelay": 256, "c_loss": 78, "c_util": 39, "epsilon": 2000,
                   "max_age_us": 500_000}


def full_program_state(pipeline: Pipeline, address: str, mode: str = "hash") -> list:
    """What the controller installs on an edge switch with one path on port 2, class 0 in
    `mode` (MODES)."""
    from mpsched.controller.southbound.forwarding import forwarding_entries

    net = plan_edges(address, (PathCfg(1, 2, None),))
    full = pipeline
    if pipeline.tables != ALL_TABLES:
        # A profile: the controller's entries for the full program (its P4Info names every
        # table), less those of the stages the profile leaves out.
        full = Pipeline(P4Info.from_file(p4_artifacts().p4info))
    entries = forwarding_entries(full, net, net.switches[0])
    entries.append(full.transit_nexthop(*TRANSIT_EDGES, 1, 1))  # "transit": to the host port
    kept = [e for e in entries if e.table in pipeline.tables]
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {MODES}")
    if mode == "ca":
        kept.append(pipeline.ca_params(2, 0, {**CA_BENCH_PARAMS, "inv_capacity_1": 1 << 16}))
    return [*kept, pipeline.weights(2, 0, {1: 1}, mode, 0)]  # towards s2, edge 2
