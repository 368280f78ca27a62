"""src/mpsched/controller/scheduling/mptcp.py, MPTCP-aware mode's tracker: connections from reports,
pins,
unpinning (the tokens and digests: test_mptcp_digest.py)."""

from __future__ import annotations

from mpsched import addressing as ap
from mpsched.controller.scheduling.mptcp import (
    TCP_FIN,
    TCP_RST,
    TCP_SYN,
    Flow,
    MptcpReport,
    MptcpTracker,
    connection_to_dict,
    token,
)
from tests.unit.controller.scheduling.helpers import (
    ACK,
    CLIENT_KEY,
    INITIAL,
    JOIN_1,
    JOIN_2,
    JOIN_3,
    MPTCP_DEFAULTS,
    SERVER_KEY,
    SERVER_TOKEN,
    SYNACK,
    rank,
)


def synack(at: float = 0.0) -> MptcpReport:
    """The listener's SYN/ACK as its edge reports it (server -> client)."""
    return MptcpReport("capable", INITIAL.reversed(), at, tcp_flags=SYNACK, key_a=SERVER_KEY)


def third_ack(at: float = 0.0) -> MptcpReport:
    return MptcpReport(
        "capable", INITIAL, at, tcp_flags=ACK, key_a=CLIENT_KEY, key_b=SERVER_KEY
    )


def join(flow: Flow, at: float = 1.0, tok: int = SERVER_TOKEN, addr_id: int = 1):
    return MptcpReport("join", flow, at, tcp_flags=TCP_SYN, token=tok, addr_id=addr_id)


def test_synack_then_third_ack_make_one_connection_with_the_initial_subflow():
    t = MptcpTracker()
    assert t.ingest(synack())
    assert not t.ingest(third_ack())  # same connection, same subflow
    (conn,) = t.connections.values()
    assert conn.server_token == SERVER_TOKEN
    assert conn.client_token == token(CLIENT_KEY)
    assert list(conn.subflows) == [INITIAL]  # oriented as the initiator sends
    assert conn.subflows[INITIAL].initial


def test_joins_map_by_the_listeners_token_and_unknown_tokens_wait():
    t = MptcpTracker()
    assert not t.ingest(join(JOIN_1))  # before the handshake: an orphan
    t.ingest(synack(at=0.5))
    (conn,) = t.connections.values()
    assert set(conn.subflows) == {INITIAL, JOIN_1}
    assert t.ingest(join(JOIN_2, addr_id=2))
    assert not t.ingest(join(JOIN_3, tok=0xDEADBEEF))
    assert len(conn.subflows) == 3
    # a join towards the initiator uses the initiator's token
    t.ingest(third_ack())
    back = Flow(ap.H2_IP, 50000, ap.H1_IP, 40010)
    assert t.ingest(join(back, tok=token(CLIENT_KEY)))
    assert back in conn.subflows


def test_orphans_expire():
    t = MptcpTracker()
    t.ingest(join(JOIN_1, at=0.0))
    t.expire(now=11.0, idle_s=100)
    t.ingest(synack(at=11.0))
    (conn,) = t.connections.values()
    assert list(conn.subflows) == [INITIAL]


def test_plan_pins_every_connection_in_its_own_order():
    t = MptcpTracker()
    t.ingest(synack())
    t.ingest(join(JOIN_1))
    assert t.plan(lambda flow: rank([2, 1])) == {INITIAL: 2, JOIN_1: 1}
    assert t.moves == [(INITIAL, None, 2), (JOIN_1, None, 1)]
    assert t.plan(lambda flow: rank([2, 1])) == {INITIAL: 2, JOIN_1: 1}
    assert t.moves == []
    assert t.plan(lambda flow: rank([1])) == {INITIAL: 1, JOIN_1: 1}
    assert t.moves == [(INITIAL, 2, 1)]


def test_rst_unpins_at_once_fin_needs_both_ends():
    t = MptcpTracker()
    t.ingest(synack())
    t.ingest(join(JOIN_1))
    t.ingest(join(JOIN_2))
    assert t.ingest(MptcpReport("close", JOIN_1, 2.0, tcp_flags=TCP_RST | 0x10))
    assert not t.ingest(MptcpReport("close", JOIN_2, 2.0, tcp_flags=TCP_FIN | 0x10))
    assert t.ingest(MptcpReport("close", JOIN_2.reversed(), 2.1, tcp_flags=TCP_FIN | 0x10))
    (conn,) = t.connections.values()
    assert list(conn.subflows) == [INITIAL]
    assert t.ingest(MptcpReport("close", INITIAL, 3.0, tcp_flags=TCP_RST))
    assert t.connections == {}  # the last subflow took the connection with it


def test_idle_subflows_expire_active_ones_stay():
    t = MptcpTracker()
    t.ingest(synack(at=0.0))
    t.ingest(join(JOIN_1, at=0.0))
    t.touch({INITIAL: 10, JOIN_1: 0}, now=50.0)  # only the initial subflow moved
    assert t.expire(now=70.0, idle_s=60) == [JOIN_1]
    (conn,) = t.connections.values()
    assert list(conn.subflows) == [INITIAL]
    assert t.expire(now=200.0, idle_s=60) == [INITIAL]
    assert t.connections == {}


def test_a_reused_five_tuple_leaves_its_old_connection():
    t = MptcpTracker()
    t.ingest(synack())
    other_key = 0x42
    t.ingest(MptcpReport("capable", INITIAL.reversed(), 9.0, tcp_flags=SYNACK, key_a=other_key))
    (conn,) = t.connections.values()
    assert conn.server_token == token(other_key)
    assert list(conn.subflows) == [INITIAL]


def test_connection_view_shows_tokens_not_keys():
    t = MptcpTracker()
    t.ingest(third_ack(at=1.0))
    t.plan(lambda flow: rank([1]))
    view = connection_to_dict(next(iter(t.connections.values())), now=3.0)
    assert view["server_token"] == "cd266215"
    assert view["subflows"][0]["path_id"] == 1
    assert view["subflows"][0]["idle_s"] == 2.0
    assert "key" not in str(view)


# -- placement by live cost, re-placement (a returning path gets its share back) --


class LoadedPaths:
    """Live costs as a saturating subflow makes them: a path costs LOADED[p] while a subflow
    of the connection is pinned to it (its own queue) plus `extra[p]` (other traffic), and
    `extra[p]` when idle; dead paths are not usable."""

    LOADED = {1: 100_000.0, 2: 150_000.0, 3: 250_000.0, 4: 600_000.0}

    def __init__(self, tracker: MptcpTracker) -> None:
        self.tracker = tracker
        self.dead: set[int] = set()
        self.extra = dict.fromkeys(self.LOADED, 0.0)

    def __call__(self, flow: Flow) -> dict[int, float]:
        used = {s.path_id for s in self.tracker.subflows()}
        return {
            p: (cost if p in used else 0.0) + self.extra[p]
            for p, cost in self.LOADED.items()
            if p not in self.dead
        }


def run(t: MptcpTracker, costs: LoadedPaths, start: float, end: float, period: float = 0.1):
    """plan() every period from start to end; (time, move) of every move."""
    moves = []
    for i in range(round((end - start) / period)):
        now = start + i * period
        t.plan(costs, now, MPTCP_DEFAULTS)
        moves += [(round(now, 1), m) for m in t.moves]
    return moves


def paths(t: MptcpTracker) -> dict[Flow, int | None]:
    return {s.flow: s.path_id for s in t.subflows()}


def test_the_fastest_path_fails_and_returns_and_gets_its_subflow_back():
    """4 paths, 3 subflows; the fastest path (1) fails: its subflow goes to
    the free path (4); when 1 returns the subflow on the costliest path goes back to it
    within min_dwell_s, and nothing flaps afterwards."""
    t = MptcpTracker()
    t.ingest(synack())
    t.ingest(join(JOIN_1))
    t.ingest(join(JOIN_2))
    costs = LoadedPaths(t)
    start = run(t, costs, 0.0, 20.0)
    # all idle at first: ties go by the order (1, 2, 3). The never-used free path 4 looks
    # idle, so after min_dwell_s the costliest subflow tries it once and comes back
    assert start[:3] == [(0.0, (INITIAL, None, 1)), (0.0, (JOIN_1, None, 2)),
                         (0.0, (JOIN_2, None, 3))]
    assert [m for _, m in start[3:]] == [(JOIN_2, 3, 4), (JOIN_2, 4, 3)]
    assert paths(t) == {INITIAL: 1, JOIN_1: 2, JOIN_2: 3}

    costs.dead.add(1)  # path 1 fails at 20 s: INITIAL is re-pinned at once, to path 4
    assert run(t, costs, 20.0, 20.1) == [(20.0, (INITIAL, 1, 4))]
    assert run(t, costs, 20.1, 30.0) == []  # 4 is now loaded: nothing better is free

    costs.dead.discard(1)  # path 1 returns at 30 s
    back = run(t, costs, 30.0, 60.0)
    # INITIAL moved to 4 at 20 s, so its dwell is over: it goes back at the first period
    assert back == [(30.0, (INITIAL, 4, 1))]
    assert paths(t) == {INITIAL: 1, JOIN_1: 2, JOIN_2: 3}


def test_a_returning_path_is_taken_by_the_costliest_subflow_free_to_move():
    t = MptcpTracker()
    t.ingest(synack())
    t.ingest(join(JOIN_1))
    t.ingest(join(JOIN_2))
    costs = LoadedPaths(t)
    run(t, costs, 0.0, 20.0)
    costs.dead.add(1)
    run(t, costs, 20.0, 21.0)
    costs.dead.discard(1)  # back 1 s after the failure, INITIAL (on 4) still dwells:
    # the costliest subflow free to move (JOIN_2 on 3) takes path 1 at once, and INITIAL
    # leaves the slowest path for the one JOIN_2 freed when its dwell is over
    assert run(t, costs, 21.0, 40.0) == [(21.0, (JOIN_2, 3, 1)), (25.0, (INITIAL, 4, 3))]
    assert sorted(paths(t).values()) == [1, 2, 3]


def test_a_better_path_freed_by_a_closing_connection_is_taken():
    """Two connections; the other's traffic loads path 1. When it closes, path 1 idles and
    the subflow on the costliest path takes it; the path it left does not lure it back."""
    t = MptcpTracker()
    t.ingest(synack())
    t.ingest(join(JOIN_1))
    costs = LoadedPaths(t)
    costs.extra[1] = 500_000.0  # another connection's subflow on path 1
    costs.dead.add(4)
    run(t, costs, 0.0, 1.0)
    assert paths(t) == {INITIAL: 2, JOIN_1: 3}
    assert run(t, costs, 1.0, 20.0) == []
    costs.extra[1] = 0.0  # it closes: path 1 idles
    assert run(t, costs, 20.0, 60.0) == [(20.0, (JOIN_1, 3, 1))]
    assert paths(t) == {INITIAL: 2, JOIN_1: 1}
