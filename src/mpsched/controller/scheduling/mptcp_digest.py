"""MPTCP digests as the controller reads them: flows, reports, keys' tokens (pure, no I/O).

The ingress edges report what their own hosts send of the RFC 8684 v1 handshake
(p4src/include/mptcp.p4): MP_CAPABLE in a SYN/ACK or third ACK, MP_JOIN in a SYN, and a
subflow's FIN or RST (`DIGEST_KINDS`). `mptcp_report` turns one decoded digest (member names
from the P4Info) into an `MptcpReport` on a `Flow`.

A key's token is the most significant 32 bits of SHA-256 of the key (RFC 8684 §3.2, as
Linux's mptcp_crypto_key_sha hashes the key in network byte order).
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass

from mpsched.p4rt.pipeline import DIGEST_MPTCP_CAPABLE, DIGEST_MPTCP_CLOSE, DIGEST_MPTCP_JOIN

TCP_FIN = 0x01
TCP_SYN = 0x02
TCP_RST = 0x04


def token(key: int) -> int:
    """The MPTCP v1 token of a 64-bit key: the top 32 bits of SHA-256(key, big-endian)."""
    if not 0 <= key < 1 << 64:
        raise ValueError(f"key {key:#x} is not 64 bits")
    return int.from_bytes(hashlib.sha256(key.to_bytes(8, "big")).digest()[:4], "big")


@dataclass(frozen=True, order=True)
class Flow:
    """One direction of a TCP subflow: src:sport -> dst:dport."""

    src: str
    sport: int
    dst: str
    dport: int

    def reversed(self) -> Flow:
        return Flow(self.dst, self.dport, self.src, self.sport)

    def __str__(self) -> str:
        return f"{self.src}:{self.sport}->{self.dst}:{self.dport}"


@dataclass(frozen=True)
class MptcpReport:
    """One MPTCP digest: kind "capable", "join" or "close"; flow as the packet went."""

    kind: str
    flow: Flow
    at: float
    tcp_flags: int = 0
    key_a: int = 0
    key_b: int = 0
    token: int = 0
    addr_id: int = 0
    switch: str = ""


DIGEST_KINDS = {
    DIGEST_MPTCP_CAPABLE: "capable",
    DIGEST_MPTCP_JOIN: "join",
    DIGEST_MPTCP_CLOSE: "close",
}


def flow_of(values: dict[str, int]) -> Flow:
    """The Flow of decoded P4 values (a digest's members or subflow_pin's match fields:
    src_addr, dst_addr, src_port, dst_port)."""
    return Flow(
        str(ipaddress.IPv4Address(values["src_addr"])),
        values["src_port"],
        str(ipaddress.IPv4Address(values["dst_addr"])),
        values["dst_port"],
    )


def mptcp_report(digest: str, values: dict[str, int], switch: str, at: float) -> MptcpReport:
    """An MptcpReport from a decoded digest (member names from the P4Info)."""
    return MptcpReport(
        DIGEST_KINDS[digest],
        flow_of(values),
        at,
        tcp_flags=values.get("tcp_flags", 0),
        key_a=values.get("key_a", 0),
        key_b=values.get("key_b", 0),
        token=values.get("token", 0),
        addr_id=values.get("addr_id", 0),
        switch=switch,
    )

