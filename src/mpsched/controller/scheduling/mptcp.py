"""MPTCP-aware mode: connections from the switches' handshake reports, and subflow pins.

Pure logic, no I/O; `core.py` feeds it the digests (p4src/include/mptcp.p4) and the pin
table's direct counters, and writes the pins it returns.

RFC 8684 v1 handshake as the ingress edges see it (each reports what its own hosts send):

- the listener's SYN/ACK carries MP_CAPABLE with the listener's key;
- the initiator's third ACK carries MP_CAPABLE with both keys (initiator's, listener's);
- a new subflow's SYN carries MP_JOIN with the token of the receiver's key.

A connection is known by its listener's token (and its initiator's, once the third ACK was
seen, so that joins towards the initiator map too). A subflow is unpinned after an RST, after
FINs from both ends, or when its packet count did not move for the idle timeout.

The parts: the digests, flows and tokens (`mptcp_digest`), the subflows' placement on paths,
its parameters and pin costs (`mptcp_placement`); this module is the tracker of connections
and subflows that runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mpsched.controller.scheduling.mptcp_digest import (
    DIGEST_KINDS,
    TCP_FIN,
    TCP_RST,
    TCP_SYN,
    Flow,
    MptcpReport,
    flow_of,
    mptcp_report,
    token,
)
from mpsched.controller.scheduling.mptcp_placement import (
    MptcpParams,
    Overlaps,
    Subflow,
    assign,
    choose_path,
    expected_costs,
    occupancy,
    path_order,
    path_overlaps,
    pin_cost,
    replace_target,
)

__all__ = [
    "Connection",
    "DIGEST_KINDS",
    "Flow",
    "MptcpParams",
    "MptcpReport",
    "MptcpTracker",
    "ORPHAN_TTL_S",
    "Overlaps",
    "Subflow",
    "TCP_FIN",
    "TCP_RST",
    "TCP_SYN",
    "assign",
    "choose_path",
    "connection_to_dict",
    "expected_costs",
    "flow_of",
    "mptcp_report",
    "occupancy",
    "path_order",
    "path_overlaps",
    "pin_cost",
    "replace_target",
    "token",
]

ORPHAN_TTL_S = 10.0  # how long a join whose token is unknown waits for its connection


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
        overlaps_for: Callable[[Flow], Overlaps] | None = None,
    ) -> dict[Flow, int]:
        """Assign every subflow a path (updates path_id); returns flow -> path for every
        pinned subflow (initiator direction). `costs_for(flow)`: the usable paths of a
        connection (asked with its first subflow) and their live costs (`assign`);
        `overlaps_for(flow)`: how those paths share links (`path_overlaps`; None: they
        share none). `moves` lists (flow, old, new) of this call."""
        pins: dict[Flow, int] = {}
        self.moves = []
        for conn in self.connections.values():
            subs = conn.ordered()
            if not subs:
                continue
            costs = costs_for(subs[0].flow)
            overlaps = overlaps_for(subs[0].flow) if overlaps_for is not None and costs else None
            chosen = assign(subs, costs, now, params, conn.seen, overlaps)
            for s in subs:
                if chosen[s.flow] != s.path_id:
                    self.moves.append((s.flow, s.path_id, chosen[s.flow]))
                    s.pinned_at = now
                s.path_id = chosen[s.flow]
                if s.path_id is not None:
                    pins[s.flow] = s.path_id
            for p in {s.path_id for s in subs if s.path_id is not None and s.path_id in costs}:
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
