"""southbound/prober.py: one probe per wanted path and interval; skipped ones are counted."""

from __future__ import annotations

import time

from mpsched.controller.southbound.prober import Prober
from tests.unit.controller.helpers import pipeline


class Client:
    device_id = 1

    def __init__(self) -> None:
        self.sent: list[tuple] = []

    def build_packet_out(self, payload, metadata):
        return (payload, tuple(sorted(metadata.items())))

    def send_packet_out(self, request):
        self.sent.append(request)


def test_packet_outs_go_to_wanted_paths_only():
    client = Client()
    prober = Prober(client, pipeline(), [(2, 1), (2, 2)], 0.01, wanted=lambda e, p: p == 2)
    prober._send()
    prober._send()
    assert prober.via == "packet_out" and (prober.sent, prober.skipped) == (2, 2)
    assert {dict(meta)["path_id"] for _, meta in client.sent} == {2}


def test_without_a_gate_every_path_is_probed_and_the_thread_stops():
    client = Client()
    prober = Prober(client, pipeline(), [(2, 1), (2, 2)], 0.001)
    prober.start()
    deadline = time.monotonic() + 5
    while prober.sent < 4 and time.monotonic() < deadline:
        time.sleep(0.001)
    prober.stop()
    assert not prober.is_alive() and prober.sent >= 4 and prober.skipped == 0


def test_probes_name_their_destination_edge():
    """A fabric's edge probes each (destination edge, path); the gate asks per pair."""
    client = Client()
    asked = []

    def wanted(dst_edge: int, path_id: int) -> bool:
        asked.append((dst_edge, path_id))
        return dst_edge == 3

    prober = Prober(client, pipeline(), [(2, 1), (3, 1), (3, 2)], 0.01, wanted=wanted)
    prober._send()
    assert asked == [(2, 1), (3, 1), (3, 2)]
    sent = sorted((dict(m)["dst_edge"], dict(m)["path_id"]) for _, m in client.sent)
    assert sent == [(3, 1), (3, 2)] and prober.skipped == 1


def test_paths_not_installed_are_passed_over_not_skipped():
    """A fabric edge's targets are every id the program has; only the installed ones (a
    pair's current or watched paths) are probed, and the others are no skipped probes."""
    client = Client()
    prober = Prober(client, pipeline(), [(2, 1), (2, 2), (2, 3)], 0.01,
                    wanted=lambda e, p: p != 2, installed=lambda e, p: p != 3)
    prober._send()
    assert (prober.sent, prober.skipped) == (1, 1)
    assert {dict(meta)["path_id"] for _, meta in client.sent} == {1}


def wait_for(condition, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.001)
    return condition()


def test_a_long_tick_waits_between_rounds_and_a_poke_starts_one_at_once():
    """A switch whose pairs are all idle ticks at their idle interval; a pair turning active
    pokes its prober, which probes at once instead of at the next tick."""
    client = Client()
    prober = Prober(client, pipeline(), [(2, 1)], 0.001, tick=lambda: 60.0)
    prober.start()
    try:
        assert wait_for(lambda: prober.sent == 1)
        time.sleep(0.05)
        assert prober.sent == 1  # the next round is a minute away
        prober.poke()
        assert wait_for(lambda: prober.sent == 2)
    finally:
        prober.stop()
    assert not prober.is_alive()
