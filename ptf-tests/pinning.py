"""Prefixes pinned to one path (route_via_path): cross-traffic hosts, operator pins.

Run: make ptf    (or: python -m mpsched.ptfrun pinning.PinnedRouteTest)
"""

from __future__ import annotations

import dataclasses

import ptf.testutils as testutils
from base import (
    HOST_IP,
    HOST_MAC,
    HOST_PORT,
    PATH_PORTS,
    PEER_EDGE,
    REMOTE_IP,
    SWITCH_MAC,
    EdgeSwitchTest,
)
from forwarding import path_of, routed
from path_tag import tagged
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched import addressing as ap
from mpsched.p4rt.pipeline import COUNTER_TX

PINNED_IP = ap.host_ip(ap.RECEIVER_EDGE, 7)  # a cross-traffic host inside REMOTE_NET
UNPROGRAMMED_PATH = 4  # within 1..MAX_PATHS, but EdgeSwitchTest gives it no next hop
N_FLOWS = 16


def to_host(dst: str, sport: int):
    """A TCP packet from h1 to dst, as h1 sends it."""
    return (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=dst)
            / TCP(sport=sport, dport=5201) / Raw(b"p" * 32))


class PinnedRouteTest(EdgeSwitchTest):
    """A /32 pinned to path 2 leaves on path 2's port for every flow, without weights and
    with path 2's weight 0, and stays there when the weights change; other flows to the
    covering /24 follow the weights. The pinned packets count on path 2's tx counter."""

    def assert_paths(self, dst: str, expected: set[int]) -> None:
        got = {path_of(self, to_host(dst, 30000 + i)) for i in range(N_FLOWS)}
        assert got == expected, (dst, got, expected)

    def runTest(self) -> None:
        self.client.insert(self.pipeline.route_via_path(f"{PINNED_IP}/32", PEER_EDGE, 2))

        # No weights yet: the /24 has no path, the pin still has its own.
        testutils.send_packet(self, HOST_PORT, to_host(REMOTE_IP, 30000))
        testutils.verify_no_other_packets(self)
        pkt = to_host(PINNED_IP, 30000)
        testutils.send_packet(self, HOST_PORT, pkt)
        testutils.verify_packet(self, tagged(routed(pkt), 2), PATH_PORTS[2])
        testutils.verify_no_other_packets(self)

        self.set_weights({1: 1, 2: 0, 3: 0}, insert=True)
        self.assert_paths(PINNED_IP, {2})
        self.assert_paths(REMOTE_IP, {1})

        self.set_weights({1: 0, 2: 0, 3: 1})
        self.assert_paths(PINNED_IP, {2})
        self.assert_paths(REMOTE_IP, {3})

        tx = self.client.read_counter(COUNTER_TX)
        counts = (tx[0].packets, *(tx[self.cell(i)].packets for i in (1, 2, 3)))
        assert counts == (1, N_FLOWS, 1 + 2 * N_FLOWS, N_FLOWS), tx


class PinToUnprogrammedPathDropTest(EdgeSwitchTest):
    """A pin to a path without next hop (4), or to a path id the program has no path for
    (0, MAX_PATHS + 1, even with a next hop entry), drops the pinned traffic and counts it
    at path_tx[0]: it is never sent onto another path nor falls back to the weights. The
    covering /24 keeps forwarding."""

    def runTest(self) -> None:
        p = self.pipeline
        self.set_weights({1: 1, 2: 1, 3: 1}, insert=True)
        pin = p.route_via_path(f"{PINNED_IP}/32", PEER_EDGE, UNPROGRAMMED_PATH)
        self.client.insert(pin)
        beyond = p.max_paths + 1
        # A next hop for an id the counters do not cover must not make it forward.
        self.client.insert(p.path_nexthop(PEER_EDGE, beyond, PATH_PORTS[1]))
        dropped = 0
        for path_id in (UNPROGRAMMED_PATH, 0, beyond):
            # The builder refuses ids outside 1..max_paths; write them as a raw
            # P4Runtime client could.
            params = {"dst_edge": PEER_EDGE, "path_id": path_id}
            self.client.modify(dataclasses.replace(pin, params=params))
            for i in range(4):
                testutils.send_packet(self, HOST_PORT, to_host(PINNED_IP, 31000 + i))
                try:
                    testutils.verify_no_other_packets(self)
                except AssertionError as error:
                    raise AssertionError(f"pin to path {path_id} forwarded") from error
                dropped += 1
        path_of(self, to_host(REMOTE_IP, 31000))
        tx = self.client.read_counter(COUNTER_TX)
        assert tx[0].packets == dropped, tx
        assert sum(tx[self.cell(i)].packets for i in range(1, p.max_paths + 1)) == 1, tx
