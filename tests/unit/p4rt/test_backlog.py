"""The PacketOut backlog (src/mpsched/p4rt/backlog.py) and the client's use of it: a stalled
stream holds at most `limit` PacketOuts, newer ones are dropped, counted and warned about at
most once per WARN_INTERVAL_S."""

from __future__ import annotations

import logging

import pytest

from mpsched.p4rt import backlog as bl
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.pipeline import Pipeline


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_admits_up_to_the_limit_then_drops_new_ones(caplog):
    clock = Clock()
    gate = bl.PacketOutBacklog(3, "s1", clock=clock)
    with caplog.at_level(logging.WARNING, logger=bl.__name__):
        assert [gate.admit() for _ in range(5)] == [True, True, True, False, False]
        assert (gate.queued, gate.dropped) == (3, 2)
        assert len(caplog.records) == 1  # rate-limited: one warning for both drops
        gate.sent()
        assert gate.admit() and not gate.admit()  # room for exactly one again
        clock.now = bl.WARN_INTERVAL_S - 0.1
        assert not gate.admit()
        assert len(caplog.records) == 1
        clock.now = bl.WARN_INTERVAL_S + 0.1
        assert not gate.admit()
    assert len(caplog.records) == 2
    assert "s1" in caplog.records[1].getMessage()
    assert "dropped 4 new" in caplog.records[1].getMessage()  # since the first warning
    assert "5 since the session began" in caplog.records[1].getMessage()


def test_sent_never_goes_below_zero_and_the_limit_is_positive():
    gate = bl.PacketOutBacklog(1)
    gate.sent()
    assert gate.queued == 0 and gate.admit()
    with pytest.raises(ValueError, match=">= 1"):
        bl.PacketOutBacklog(0)


def test_client_queue_is_bounded_while_the_stream_stalls(p4info):
    """Nothing drains the stream: the client's request queue keeps `limit` PacketOuts; what
    the stream takes frees room again; control messages are never counted."""
    client = P4RuntimeClient("127.0.0.1:1", 1, p4info, packet_out_backlog=4)
    client._stream = object()  # type: ignore[assignment]  # as if connected, never drained
    probe = client.build_packet_out(*Pipeline(p4info).probe(1, 2))
    for _ in range(10):
        client.send_packet_out(probe)
    assert client._requests.qsize() == 4
    assert (client.packet_outs.queued, client.packet_outs.dropped) == (4, 6)
    client._send_arbitration()  # a control message: queued whatever the backlog
    stream = client._request_iterator()
    assert next(stream).HasField("packet")
    assert client.packet_outs.queued == 3
    client.send_packet_out(probe)
    assert client.packet_outs.queued == 4 and client.packet_outs.dropped == 6
    assert client._requests.qsize() == 5  # 4 PacketOuts + the arbitration update
