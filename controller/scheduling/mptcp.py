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

Pins: each subflow of a connection goes to its own path, least live cost first (the cost a
mode-CA switch computes, as `policies.ca.live_cost` estimates it; `core.py` gives the usable
paths of the subflow's class, alive, admin-up and weighted, with their costs). With more
subflows than paths they spread evenly (at most ceil(n / k) per path). A pin sticks while its
path stays usable and not over that share; a subflow whose path left (LM3 deactivated it,
liveness killed it, the operator took it down) is re-pinned at once to the cheapest path
among those with the fewest of its connection's subflows. Re-placement: a pinned subflow
also moves, by itself, to a cheaper path holding fewer of its connection's subflows (a path
that returned, or one a closing connection freed) when that path's expected cost is below
its own path's by the margin (`MptcpParams.replace_margin`, `replace_margin_us`) and its
last move is at least `min_dwell_s` old. The expected cost of a path the connection used
within `cost_memory_s` is at least the cost it had then (so the queue a subflow builds on
its own path does not make every path it left look better). A subflow is unpinned after an
RST, after FINs from both ends, or when its packet count did not move for the idle timeout.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from mpsched.controller.policies.base import CaCost
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
    replace_margin: float = field(
        default=0.25,
        metadata={
            "min": 0.0,
            "max": 1.0,
            "doc": "a pinned subflow moves to a cheaper path only when that path's expected "
            "cost is below its own path's by this fraction of its own path's cost "
            "(and by replace_margin_us)",
        },
    )
    replace_margin_us: float = field(
        default=2000.0,
        metadata={
            "min": 0.0,
            "max": 1e7,
            "doc": "... and by at least this many µs-equivalent of live cost",
        },
    )
    min_dwell_s: float = field(
        default=5.0,
        metadata={
            "min": 0.0,
            "max": 3600.0,
            "doc": "a subflow moves by re-placement at most once per this many seconds "
            "(re-pinning off a path that left is immediate)",
        },
    )
    cost_memory_s: float = field(
        default=120.0,
        metadata={
            "min": 0.0,
            "max": 86400.0,
            "doc": "for this long a path a connection left is expected to cost at least what "
            "it cost while the connection used it",
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
    pinned_at: float | None = None  # when it got its current path (None: never pinned)


@dataclass
class Connection:
    id: int
    since: float
    server_token: int | None = None  # the listener's
    client_token: int | None = None  # the initiator's
    subflows: dict[Flow, Subflow] = field(default_factory=dict)
    # path -> (live cost, when): the cost of each path while one of its subflows used it
    seen: dict[int, tuple[float, float]] = field(default_factory=dict)

    def ordered(self) -> list[Subflow]:
        return sorted(self.subflows.values(), key=lambda s: (not s.initial, s.since, s.flow))


def expected_costs(
    costs: Mapping[int, float],
    seen: Mapping[int, tuple[float, float]],
    now: float,
    memory_s: float,
) -> dict[int, float]:
    """What each usable path is expected to cost a subflow placed there: its live cost, but
    not less than the cost it had while the connection used it, if that is at most
    `memory_s` old (a subflow's own queue leaves with it, and the path it left would
    otherwise look cheaper than it is)."""
    out = dict(costs)
    for p, (cost, at) in seen.items():
        if p in out and now - at <= memory_s:
            out[p] = max(out[p], cost)
    return out


def choose_path(order: Mapping[int, float], counts: Counter, tie_us: float = 0.0) -> int:
    """The path carrying the fewest subflows (`counts`), the cheapest (`order`: path ->
    cost) among those; costs within `tie_us` of the cheapest count as equal, and the first
    of them in the mapping's order is taken (cost noise on idle paths does not decide)."""
    fewest = min(counts[p] for p in order)
    candidates = [p for p in order if counts[p] == fewest]
    best = min(order[p] for p in candidates)
    return next(p for p in candidates if order[p] <= best + tie_us)


def replace_target(
    cur: int,
    costs: Mapping[int, float],
    expected: Mapping[int, float],
    counts: Counter,
    params: MptcpParams,
) -> int | None:
    """The path a subflow pinned to `cur` should move to by re-placement, or None: the
    cheapest (expected cost) path holding fewer of its connection's subflows than `cur`,
    if it beats `cur`'s live cost by max(replace_margin_us, replace_margin * that cost)."""
    rank = {p: i for i, p in enumerate(costs)}
    free = [p for p in costs if p != cur and counts[p] < counts[cur]]
    if not free:
        return None
    best = min(free, key=lambda p: (expected[p], rank[p]))
    margin = max(params.replace_margin_us, params.replace_margin * costs[cur])
    return best if expected[best] + margin < costs[cur] else None


def assign(
    subflows: list[Subflow],
    costs: Mapping[int, float],
    now: float = 0.0,
    params: MptcpParams | None = None,
    seen: Mapping[int, tuple[float, float]] | None = None,
) -> dict[Flow, int | None]:
    """Pins for one connection's subflows (initial first, then by arrival), given the
    usable paths and their live costs (`costs`; ties go by the mapping's order):

    1. a pin sticks while its path is usable and within the even share ceil(n / k);
    2. every other subflow goes to the path with the fewest of the connection's subflows,
       the cheapest first (expected costs, `expected_costs` with `seen`; costs within
       `replace_margin_us` of each other are ties);
    3. re-placement: a subflow kept in 1 whose last move is at least `min_dwell_s` old
       moves to `replace_target` if there is one (subflows on the costliest paths first,
       at most one move each)."""
    params = params or MptcpParams()
    if not costs:
        return {s.flow: s.path_id for s in subflows}
    expected = expected_costs(costs, seen or {}, now, params.cost_memory_s)
    share = math.ceil(len(subflows) / len(costs))
    counts: Counter = Counter()
    out: dict[Flow, int | None] = {}
    for s in subflows:
        if s.path_id in costs and counts[s.path_id] < share:
            out[s.flow] = s.path_id
            counts[s.path_id] += 1
    kept = [s for s in subflows if s.flow in out]
    for s in subflows:
        if s.flow not in out:
            p = choose_path(expected, counts, params.replace_margin_us)
            out[s.flow] = p
            counts[p] += 1
    for s in sorted(kept, key=lambda s: -costs[s.path_id]):
        if s.pinned_at is not None and now - s.pinned_at < params.min_dwell_s:
            continue
        cur = out[s.flow]
        assert cur is not None
        target = replace_target(cur, costs, expected, counts, params)
        if target is not None:
            out[s.flow] = target
            counts[cur] -= 1
            counts[target] += 1
    return out


def path_order(weights: dict[int, int], alive: Iterable[int]) -> list[int]:
    """Usable paths: alive paths with a weight, by weight (desc) then id; all alive paths
    by id if none has a weight. (The tie-break order of `assign`'s costs.)"""
    alive = set(alive)
    weighted = [p for p, w in weights.items() if w > 0 and p in alive]
    if weighted:
        return sorted(weighted, key=lambda p: (-weights[p], p))
    return sorted(alive)


def pin_cost(ca: CaCost | None) -> CaCost:
    """The cost model that ranks a class's paths for its subflows: the class's own (mode ca),
    or the default CaCost when the class has none or one that weighs nothing (a weight-based
    policy, or mode ca's all-zero no_ca), so that every class ranks by the same live cost."""
    if ca is None or not (ca.qdelay_coef or ca.loss_coef_us or ca.util_coef_us):
        return CaCost()
    return ca


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

    def plan(
        self,
        costs_for: Callable[[Flow], Mapping[int, float]],
        now: float = 0.0,
        params: MptcpParams | None = None,
    ) -> dict[Flow, int]:
        """Assign every subflow a path (updates path_id); returns flow -> path for every
        pinned subflow (initiator direction). `costs_for(flow)`: the usable paths of a
        connection (asked with its first subflow) and their live costs (`assign`).
        `moves` lists (flow, old, new) of this call."""
        pins: dict[Flow, int] = {}
        self.moves: list[tuple[Flow, int | None, int | None]] = []
        for conn in self.connections.values():
            subs = conn.ordered()
            if not subs:
                continue
            costs = costs_for(subs[0].flow)
            chosen = assign(subs, costs, now, params, conn.seen)
            for s in subs:
                if chosen[s.flow] != s.path_id:
                    self.moves.append((s.flow, s.path_id, chosen[s.flow]))
                    s.pinned_at = now
                s.path_id = chosen[s.flow]
                if s.path_id is not None:
                    pins[s.flow] = s.path_id
            for p in {s.path_id for s in subs if s.path_id in costs}:
                conn.seen[p] = (costs[p], now)
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
