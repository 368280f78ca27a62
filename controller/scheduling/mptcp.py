"""MPTCP-aware mode: connections from the switches' handshake reports, and subflow pins.

Pure logic, no I/O; `core.py` feeds it the digests (p4src/include/mptcp.p4) and the pin
table's direct counters, and writes the pins it returns.

RFC 8684 v1 handshake as the ingress edges see it (each reports what its own hosts send):

- the listener's SYN/ACK carries MP_CAPABLE with the listener's key;
- the initiator's third ACK carries MP_CAPABLE with both keys (initiator's, listener's);
- a new subflow's SYN carries MP_JOIN with the token of the receiver's key.

A key's token is the most significant 32 bits of SHA-256 of the key (RFC 8684 §3.2, as
Linux's mptcp_crypto_key_sha hashes the key in network byte order). A connection is
known by its listener's token (and its initiator's, once the third ACK was seen, so
that joins towards the initiator map too).

Pins: each subflow of a connection goes to its own path, best paths first (the order of
the class's current placement: highest weight first, then path id; dead paths excluded).
With more subflows than paths they spread evenly (at most ceil(n / k) per path). A pin
sticks while its path stays in the order and its path is not over that share; a subflow
whose path left the order (LM3 deactivated it, liveness killed it, the operator took it
down) is re-pinned to the path with the fewest of its connection's subflows. A subflow
is unpinned after an RST, after FINs from both ends, or when its packet count did not
move for the idle timeout.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mpsched.p4rt.pipeline import DIGEST_MPTCP_CAPABLE, DIGEST_MPTCP_CLOSE, DIGEST_MPTCP_JOIN

TCP_FIN = 0x01
TCP_SYN = 0x02
TCP_RST = 0x04
ORPHAN_TTL_S = 10.0  # how long a join whose token is unknown waits for its connection


@dataclass(frozen=True)
class MptcpParams:
    """The MPTCP-aware mode's parameters (GET/PUT /params, key "mptcp")."""

    steering: bool = field(
        default=True,
        metadata={
            "doc": "pin each MPTCP subflow to its own path; false: subflows follow their "
            "class's placement like any TCP flow (pins are removed)"
        },
    )
    idle_timeout_s: float = field(
        default=120.0,
        metadata={
            "min": 1.0,
            "max": 86400.0,
            "doc": "unpin a subflow whose pinned packet count did not move for this long",
        },
    )


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


@dataclass
class Subflow:
    flow: Flow  # as the initiator of the subflow sends
    initial: bool  # the MP_CAPABLE subflow (False: joined with MP_JOIN)
    addr_id: int
    since: float
    path_id: int | None = None
    packets: int = 0  # pinned packets, both directions, all switches (direct counters)
    last_active: float = 0.0
    fin_from: set[str] = field(default_factory=set)  # "initiator" / "responder"


@dataclass
class Connection:
    id: int
    since: float
    server_token: int | None = None  # the listener's
    client_token: int | None = None  # the initiator's
    subflows: dict[Flow, Subflow] = field(default_factory=dict)

    def ordered(self) -> list[Subflow]:
        return sorted(self.subflows.values(), key=lambda s: (not s.initial, s.since, s.flow))


def choose_path(order: list[int], counts: Counter) -> int:
    """The path of `order` carrying the fewest subflows (`counts`), the best on ties."""
    return min(order, key=lambda p: (counts[p], order.index(p)))


def assign(subflows: list[Subflow], order: list[int]) -> dict[Flow, int | None]:
    """Pins for one connection's subflows (initial first, then by arrival), given the
    usable paths best first: sticky pins within the even share, the rest spread."""
    if not order:
        return {s.flow: s.path_id for s in subflows}
    share = math.ceil(len(subflows) / len(order))
    counts: Counter = Counter()
    out: dict[Flow, int | None] = {}
    for s in subflows:
        if s.path_id in order and counts[s.path_id] < share:
            out[s.flow] = s.path_id
            counts[s.path_id] += 1
    for s in subflows:
        if s.flow not in out:
            p = choose_path(order, counts)
            out[s.flow] = p
            counts[p] += 1
    return out


def path_order(weights: dict[int, int], alive: Iterable[int]) -> list[int]:
    """Usable paths best first: alive paths with a weight, by weight (desc) then id; all
    alive paths by id if none has a weight."""
    alive = set(alive)
    weighted = [p for p, w in weights.items() if w > 0 and p in alive]
    if weighted:
        return sorted(weighted, key=lambda p: (-weights[p], p))
    return sorted(alive)


class MptcpTracker:
    """The connections and subflows the switches reported, and their pins."""

    def __init__(self) -> None:
        self.connections: dict[int, Connection] = {}
        self._next_id = 1
        self._orphans: dict[Flow, tuple[int, int, float]] = {}  # flow -> (token, addr_id, at)
        self.moves: list[tuple[Flow, int | None, int | None]] = []

    # -- lookups ---------------------------------------------------------

    def _by_token(self, tok: int) -> Connection | None:
        for c in self.connections.values():
            if tok in (c.server_token, c.client_token):
                return c
        return None

    def find(self, flow: Flow) -> tuple[Connection, Subflow, bool] | None:
        """The connection and subflow of a flow in either direction; True if `flow` is
        the subflow's initiator direction."""
        for c in self.connections.values():
            if flow in c.subflows:
                return c, c.subflows[flow], True
            rev = flow.reversed()
            if rev in c.subflows:
                return c, c.subflows[rev], False
        return None

    def subflows(self) -> list[Subflow]:
        return [s for c in self.connections.values() for s in c.subflows.values()]

    # -- reports ---------------------------------------------------------

    def ingest(self, r: MptcpReport) -> bool:
        """Apply one report; True if the set of subflows changed."""
        if r.kind == "capable":
            return self._capable(r)
        if r.kind == "join":
            return self._join(r.flow, r.token, r.addr_id, r.at)
        if r.kind == "close":
            return self._close(r)
        raise ValueError(f"unknown MPTCP report kind {r.kind!r}")

    def _new_connection(self, at: float) -> Connection:
        c = Connection(self._next_id, at)
        self.connections[c.id] = c
        self._next_id += 1
        return c

    def _capable(self, r: MptcpReport) -> bool:
        if r.tcp_flags & TCP_SYN:  # the listener's SYN/ACK: its key; flow is reversed
            server, client, flow = token(r.key_a), None, r.flow.reversed()
        else:  # the third ACK: initiator's key, listener's key
            server, client, flow = token(r.key_b), token(r.key_a), r.flow
        conn = self._by_token(server)
        if conn is None:
            conn = self._new_connection(r.at)
            conn.server_token = server
        if client is not None:
            conn.client_token = client
        changed = False
        if flow not in conn.subflows:
            self._forget(flow)
            conn.subflows[flow] = Subflow(flow, True, 0, r.at, last_active=r.at)
            changed = True
        for oflow, (tok, addr_id, at) in list(self._orphans.items()):
            if tok in (conn.server_token, conn.client_token):
                del self._orphans[oflow]
                changed |= self._join(oflow, tok, addr_id, at)
        return changed

    def _join(self, flow: Flow, tok: int, addr_id: int, at: float) -> bool:
        conn = self._by_token(tok)
        if conn is None:
            self._orphans[flow] = (tok, addr_id, at)
            return False
        if flow in conn.subflows:
            return False
        self._forget(flow)
        conn.subflows[flow] = Subflow(flow, False, addr_id, at, last_active=at)
        return True

    def _close(self, r: MptcpReport) -> bool:
        found = self.find(r.flow)
        if found is None:
            return False
        conn, sub, forward = found
        if r.tcp_flags & TCP_RST:
            self._remove(conn, sub.flow)
            return True
        if r.tcp_flags & TCP_FIN:
            sub.fin_from.add("initiator" if forward else "responder")
            if len(sub.fin_from) == 2:
                self._remove(conn, sub.flow)
                return True
        return False

    def _forget(self, flow: Flow) -> None:
        """A 5-tuple reused by a new subflow leaves its old connection."""
        found = self.find(flow)
        if found is not None:
            self._remove(found[0], found[1].flow)

    def _remove(self, conn: Connection, flow: Flow) -> None:
        conn.subflows.pop(flow, None)
        if not conn.subflows:
            del self.connections[conn.id]

    # -- pins ------------------------------------------------------------

    def plan(self, order_for: Callable[[Flow], list[int]]) -> dict[Flow, int]:
        """Assign every subflow a path (updates path_id); returns flow -> path for every
        pinned subflow (initiator direction). `moves` lists (flow, old, new) of this call."""
        pins: dict[Flow, int] = {}
        self.moves: list[tuple[Flow, int | None, int | None]] = []
        for conn in self.connections.values():
            subs = conn.ordered()
            if not subs:
                continue
            chosen = assign(subs, order_for(subs[0].flow))
            for s in subs:
                if chosen[s.flow] != s.path_id:
                    self.moves.append((s.flow, s.path_id, chosen[s.flow]))
                s.path_id = chosen[s.flow]
                if s.path_id is not None:
                    pins[s.flow] = s.path_id
        return pins

    def touch(self, packets: dict[Flow, int], now: float) -> None:
        """Pinned packet counts per subflow (initiator direction, summed over switches
        and directions): a count that moved marks the subflow active."""
        for s in self.subflows():
            n = packets.get(s.flow)
            if n is not None and n != s.packets:
                s.packets = n
                s.last_active = now

    def expire(self, now: float, idle_s: float) -> list[Flow]:
        """Drop subflows idle for idle_s and joins still orphaned after ORPHAN_TTL_S."""
        gone = []
        for conn in list(self.connections.values()):
            for s in list(conn.subflows.values()):
                if now - s.last_active > idle_s:
                    self._remove(conn, s.flow)
                    gone.append(s.flow)
        for flow, (_, _, at) in list(self._orphans.items()):
            if now - at > ORPHAN_TTL_S:
                del self._orphans[flow]
        return gone

    def clear(self) -> None:
        self.connections.clear()
        self._orphans.clear()


def connection_to_dict(c: Connection, now: float) -> dict:
    return {
        "id": c.id,
        "since": round(c.since, 3),
        "server_token": None if c.server_token is None else f"{c.server_token:08x}",
        "client_token": None if c.client_token is None else f"{c.client_token:08x}",
        "subflows": [
            {
                "src": s.flow.src,
                "sport": s.flow.sport,
                "dst": s.flow.dst,
                "dport": s.flow.dport,
                "initial": s.initial,
                "addr_id": s.addr_id,
                "path_id": s.path_id,
                "packets": s.packets,
                "idle_s": round(max(0.0, now - s.last_active), 3),
                "fin_from": sorted(s.fin_from),
            }
            for s in c.ordered()
        ],
    }
