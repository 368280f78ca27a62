"""MPTCP-aware mode's pure logic: tokens, connections from reports, pins, unpinning."""

from __future__ import annotations

import pytest

from mpsched.controller.scheduling.mptcp import (
    TCP_FIN,
    TCP_RST,
    TCP_SYN,
    Flow,
    MptcpReport,
    MptcpTracker,
    Subflow,
    assign,
    connection_to_dict,
    mptcp_report,
    path_order,
    token,
)
from mpsched.p4rt.pipeline import DIGEST_MPTCP_JOIN

ACK, SYNACK = 0x10, 0x12
CLIENT_KEY = 0x0123456789ABCDEF
SERVER_KEY = 0x0000000000000001
# SHA-256 of eight zero bytes is af5570f5 a1810b7a ...; of 00..01 it is cd2662154e6d76b2...
SERVER_TOKEN = 0xCD266215
INITIAL = Flow("10.0.1.1", 40000, "10.0.2.1", 5201)
JOIN_1 = Flow("10.0.1.2", 40001, "10.0.2.1", 5201)
JOIN_2 = Flow("10.0.1.3", 40002, "10.0.2.1", 5201)
JOIN_3 = Flow("10.0.1.4", 40003, "10.0.2.1", 5201)


def test_token_is_the_top_32_bits_of_sha256_of_the_key_in_network_order():
    assert token(0) == 0xAF5570F5
    assert token(SERVER_KEY) == SERVER_TOKEN
    with pytest.raises(ValueError):
        token(1 << 64)


def synack(at: float = 0.0) -> MptcpReport:
    """The listener's SYN/ACK as its edge reports it (server -> client)."""
    return MptcpReport("capable", INITIAL.reversed(), at, tcp_flags=SYNACK, key_a=SERVER_KEY)


def third_ack(at: float = 0.0) -> MptcpReport:
    return MptcpReport(
        "capable", INITIAL, at, tcp_flags=ACK, key_a=CLIENT_KEY, key_b=SERVER_KEY
    )


def join(flow: Flow, at: float = 1.0, tok: int = SERVER_TOKEN, addr_id: int = 1):
    return MptcpReport("join", flow, at, tcp_flags=TCP_SYN, token=tok, addr_id=addr_id)


def test_digest_values_become_a_report():
    r = mptcp_report(
        DIGEST_MPTCP_JOIN,
        {"src_addr": 0x0A000102, "dst_addr": 0x0A000201, "src_port": 40001,
         "dst_port": 5201, "token": SERVER_TOKEN, "addr_id": 2},
        "s1",
        5.0,
    )
    assert (r.kind, r.flow, r.token, r.addr_id, r.switch) == (
        "join", JOIN_1, SERVER_TOKEN, 2, "s1")


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
    back = Flow("10.0.2.1", 50000, "10.0.1.1", 40010)
    assert t.ingest(join(back, tok=token(CLIENT_KEY)))
    assert back in conn.subflows


def test_orphans_expire():
    t = MptcpTracker()
    t.ingest(join(JOIN_1, at=0.0))
    t.expire(now=11.0, idle_s=100)
    t.ingest(synack(at=11.0))
    (conn,) = t.connections.values()
    assert list(conn.subflows) == [INITIAL]


def sub(flow: Flow, path: int | None, initial: bool = False) -> Subflow:
    return Subflow(flow, initial, 0, 0.0, path_id=path)


def test_assign_puts_each_subflow_on_its_own_path_best_first():
    subs = [sub(INITIAL, None, True), sub(JOIN_1, None), sub(JOIN_2, None)]
    assert assign(subs, [3, 1, 2]) == {INITIAL: 3, JOIN_1: 1, JOIN_2: 2}


def test_more_subflows_than_paths_spread_evenly():
    subs = [sub(INITIAL, None, True), sub(JOIN_1, None), sub(JOIN_2, None), sub(JOIN_3, None)]
    got = assign(subs, [2, 1])
    assert got == {INITIAL: 2, JOIN_1: 1, JOIN_2: 2, JOIN_3: 1}


def test_pins_stick_while_their_path_stays_usable():
    # the order changed (1 is now best) but both paths are still usable: nobody moves
    subs = [sub(INITIAL, 2, True), sub(JOIN_1, 1)]
    assert assign(subs, [1, 2]) == {INITIAL: 2, JOIN_1: 1}


def test_a_subflow_whose_path_left_is_repinned_and_rebalanced_when_it_returns():
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, 2), sub(JOIN_2, 3)]
    # path 2 died: its subflow goes to the best of the least-loaded survivors
    assert assign(subs, [1, 3]) == {INITIAL: 1, JOIN_1: 1, JOIN_2: 3}
    # the two on one path: when path 2 returns, one moves back (share 1 per path)
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, 1), sub(JOIN_2, 3)]
    assert assign(subs, [1, 2, 3]) == {INITIAL: 1, JOIN_1: 2, JOIN_2: 3}


def test_no_usable_path_keeps_the_pins():
    subs = [sub(INITIAL, 1, True), sub(JOIN_1, None)]
    assert assign(subs, []) == {INITIAL: 1, JOIN_1: None}


def test_path_order_by_weight_then_id_alive_only():
    assert path_order({1: 10, 2: 30, 3: 30, 4: 5}, alive=[1, 2, 3]) == [2, 3, 1]
    assert path_order({1: 0, 2: 0}, alive=[2, 1]) == [1, 2]


def test_plan_pins_every_connection_in_its_own_order():
    t = MptcpTracker()
    t.ingest(synack())
    t.ingest(join(JOIN_1))
    assert t.plan(lambda flow: [2, 1]) == {INITIAL: 2, JOIN_1: 1}
    assert t.moves == [(INITIAL, None, 2), (JOIN_1, None, 1)]
    assert t.plan(lambda flow: [2, 1]) == {INITIAL: 2, JOIN_1: 1}
    assert t.moves == []
    assert t.plan(lambda flow: [1]) == {INITIAL: 1, JOIN_1: 1}
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
    t.plan(lambda flow: [1])
    view = connection_to_dict(next(iter(t.connections.values())), now=3.0)
    assert view["server_token"] == "cd266215"
    assert view["subflows"][0]["path_id"] == 1
    assert view["subflows"][0]["idle_s"] == 2.0
    assert "key" not in str(view)
