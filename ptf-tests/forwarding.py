"""Forwarding, weighted path selection and robustness of the edge switch.

Run: make ptf    (or: python -m mpsched.ptfrun forwarding.WeightZeroTest)
"""

from __future__ import annotations

import ptf.testutils as testutils
from base import (
    HOST_IP,
    HOST_MAC,
    PEER_MAC,
    HOST_PORT,
    PATH_PORTS,
    REMOTE_IP,
    SWITCH_MAC,
    EdgeSwitchTest,
)
from path_tag import tagged
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import COUNTER_PORT_TX, COUNTER_RX, COUNTER_TX



def host_packet(sport: int = 40000, dport: int = 5201, ttl: int = 64, **ip: object):
    """A TCP packet from h1 towards the remote subnet, as h1 sends it."""
    return (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=REMOTE_IP, ttl=ttl, **ip)
            / TCP(sport=sport, dport=dport) / Raw(b"x" * 32))


def routed(pkt):
    """What the switch forwards (untagged): TTL - 1, checksum right."""
    out = pkt.copy()
    out[IP].ttl -= 1
    del out[IP].chksum
    return Ether(bytes(out))


def path_of(test, pkt) -> int:
    """Send pkt from the host port; return the path id it left on. The packet must leave
    routed and tagged with the id of the path whose port it leaves on."""
    testutils.send_packet(test, HOST_PORT, pkt)
    result = testutils.dp_poll(test, timeout=2)
    assert isinstance(result, test.dataplane.PollSuccess), "no packet left the switch"
    by_port = {port: pid for pid, port in PATH_PORTS.items()}
    assert result.port in by_port, f"packet left on port {result.port}, not a path port"
    path_id = by_port[result.port]
    assert tagged(routed(pkt), path_id).pkt_match(result.packet), (path_id, result.packet)
    return path_id


class RouteToHostTest(EdgeSwitchTest):
    """An (untagged) packet arriving from a path for h1 leaves on h1's port with MACs
    rewritten, TTL decremented and a valid checksum. It is not counted as received from any
    path: a fabric port carries many (source edge, path) pairs, and only a tag names its
    pair (p4src/include/path_ingress.p4). (Tagged arrivals: telemetry.TagPopTest.)"""

    def runTest(self) -> None:
        self.set_weights({1: 1}, insert=True)
        pkt = (Ether(src=PEER_MAC, dst="00:00:00:00:00:01") / IP(src=REMOTE_IP, dst=HOST_IP)
               / UDP(sport=1234, dport=4321) / Raw(b"y" * 20))
        exp = routed(pkt)
        exp[Ether].src, exp[Ether].dst = SWITCH_MAC, HOST_MAC
        testutils.send_packet(self, PATH_PORTS[2], pkt)
        testutils.verify_packet(self, Ether(bytes(exp)), HOST_PORT)
        testutils.verify_no_other_packets(self)
        rx = self.client.read_counter(COUNTER_RX)
        assert sum(v.packets for v in rx.values()) == 0, rx


class PortCounterTest(EdgeSwitchTest):
    """The egress counts every packet on the port it leaves by (port_counters.p4, port_tx:
    the controller's link loads): one routed to h1 is one packet of its length on h1's
    port, nothing on the others."""

    def runTest(self) -> None:
        self.set_weights({1: 1}, insert=True)
        pkt = (Ether(src=PEER_MAC, dst="00:00:00:00:00:01") / IP(src=REMOTE_IP, dst=HOST_IP)
               / UDP(sport=1234, dport=4321) / Raw(b"y" * 100))
        testutils.send_packet(self, PATH_PORTS[2], pkt)
        result = testutils.dp_poll(self, port_number=HOST_PORT, timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "nothing left on h1's port"
        counts = self.client.read_counter(COUNTER_PORT_TX)
        assert (counts[HOST_PORT].packets, counts[HOST_PORT].bytes) == (1, len(pkt)), counts
        others = {port: v for port, v in counts.items() if port != HOST_PORT and v.packets}
        assert others == {}, others


class WeightZeroTest(EdgeSwitchTest):
    """A weight of 0 moves every flow off a path: with 1:0 all flows take path 1,
    with 0:1 all take path 2; the per-path tx counters agree."""

    def runTest(self) -> None:
        flows = [host_packet(sport=10000 + i) for i in range(32)]
        self.set_weights({1: 1, 2: 0}, insert=True)
        assert {path_of(self, p) for p in flows} == {1}
        self.set_weights({1: 0, 2: 1})
        assert {path_of(self, p) for p in flows} == {2}
        tx = self.client.read_counter(COUNTER_TX)
        assert tuple(tx[self.cell(i)].packets for i in (1, 2, 3)) == (32, 32, 0), tx


class FlowStickinessTest(EdgeSwitchTest):
    """With weights 1:1:1 every packet of a flow takes the same path, and the flows
    spread over all three paths."""

    def runTest(self) -> None:
        self.set_weights({1: 1, 2: 1, 3: 1}, insert=True)
        chosen = {}
        for i in range(48):
            pkt = host_packet(sport=20000 + i)
            chosen[i] = path_of(self, pkt)
        for _ in range(3):
            for i in range(48):
                assert path_of(self, host_packet(sport=20000 + i)) == chosen[i], i
        assert set(chosen.values()) == {1, 2, 3}, chosen


class NoWeightsDropTest(EdgeSwitchTest):
    """Without a weights entry, or with all weights 0, traffic to the paths is dropped
    and counted at index 0."""

    def runTest(self) -> None:
        testutils.send_packet(self, HOST_PORT, host_packet())
        testutils.verify_no_other_packets(self)
        self.set_weights({1: 0, 2: 0}, insert=True)
        testutils.send_packet(self, HOST_PORT, host_packet())
        testutils.verify_no_other_packets(self)
        tx = self.client.read_counter(COUNTER_TX)
        assert tx[0].packets == 2, tx


class IPv4OptionsTest(EdgeSwitchTest):
    """A packet with IPv4 options is forwarded with its options intact."""

    def runTest(self) -> None:
        self.set_weights({1: 1}, insert=True)
        pkt = host_packet(options=b"\x94\x04\x00\x00")  # Router Alert
        testutils.send_packet(self, HOST_PORT, pkt)
        testutils.verify_packet(self, tagged(routed(pkt), 1), PATH_PORTS[1])
        testutils.verify_no_other_packets(self)


class MalformedDropTest(EdgeSwitchTest):
    """Malformed or unroutable packets are dropped, never forwarded: truncated IPv4,
    IHL < 5, wrong version, bad checksum, TTL 1, no route, non-IPv4, path-to-path."""

    def runTest(self) -> None:
        self.set_weights({1: 1}, insert=True)
        good = bytes(host_packet())
        bad_csum = host_packet()
        bad_csum[IP].chksum = 0x1234
        cases = {
            "truncated": good[:14 + 12],
            "ihl<5": bytes(host_packet(ihl=4)),
            "version 5": bytes(host_packet(version=5)),
            "bad checksum": bytes(bad_csum),
            "ttl 1": bytes(host_packet(ttl=1)),
            "no route": bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC)
                              / IP(src=HOST_IP, dst="192.0.2.1") / TCP()),
            "arp": bytes(Ether(src=HOST_MAC, dst="ff:ff:ff:ff:ff:ff", type=0x0806)
                         / Raw(b"\x00" * 28)),
            "runt": bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=0x0800)),
        }
        for name, data in cases.items():
            testutils.send_packet(self, HOST_PORT, data)
            try:
                testutils.verify_no_other_packets(self)
            except AssertionError as error:
                raise AssertionError(f"{name} packet was forwarded") from error
        # From a path towards the remote subnet: never bounced onto another path.
        testutils.send_packet(self, PATH_PORTS[1], host_packet())
        testutils.verify_no_other_packets(self)
        # The switch still forwards a good packet afterwards.
        testutils.send_packet(self, HOST_PORT, host_packet())
        testutils.verify_packet(self, tagged(routed(host_packet()), 1), PATH_PORTS[1])
