"""The plain ECMP program (p4src/bench/plain_ecmp.p4), the fabric's plain-forwarding
reference: the switch under test is leaf1 of a 3-leaf x 2-spine fabric with one host per
leaf, programmed with the entries the lab derives (src/mpsched/fabric/ecmp.py): h1_1 on port 1,
spine1 on port 2, spine2 on port 3. One behaviour per test class.

Run: make ptf TEST=plain_ecmp.HashSpreadTest   (or: python -m mpsched.ptfrun plain_ecmp)
"""

from __future__ import annotations

import ptf
import ptf.testutils as testutils
from ptf.base_tests import BaseTest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched import addressing as ap
from mpsched.fabric.ecmp import fabric_entries
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.netdesc import describe
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.plain_ecmp import COUNTER_DROP_REASON, TABLES, PlainEcmpPipeline
from mpsched.proc.layout import plain_ecmp_artifacts

SECTION = {"leaf_spine": {"leaves": 3, "spines": 2, "hosts_per_leaf": 1,
                          "link": {"rate_mbps": 10, "delay_ms": 1}}}
NET = describe(SECTION, parse_fabric(SECTION), lambda _i: "127.0.0.1:1")
LEAF = NET.switch("leaf1")
HOST_PORT = 1
SPINE_PORTS = {"spine1": 2, "spine2": 3}
SPINE_MAC = {name: NET.switch(name).mac for name in SPINE_PORTS}
HOST_IP, HOST_MAC = ap.host_ip(1, 1), ap.host_mac(1, 1)
REMOTE_IP = ap.host_ip(2, 1)  # h2_1, behind leaf2


def from_host(sport: int = 40000, dport: int = 5001, ttl: int = 64, udp: bool = False,
              **ip: object) -> Ether:
    """A TCP (or UDP) packet of h1_1 towards h2_1, as h1_1 sends it (to its gateway's
    MAC)."""
    l4 = UDP(sport=sport, dport=dport) if udp else TCP(sport=sport, dport=dport)
    return (Ether(src=HOST_MAC, dst=LEAF.mac) / IP(src=HOST_IP, dst=REMOTE_IP, ttl=ttl, **ip)
            / l4 / Raw(b"x" * 32))


def routed(pkt: Ether, smac: str, dmac: str) -> Ether:
    """What the switch forwards: new MACs, TTL - 1, the checksum right again."""
    out = pkt.copy()
    out[Ether].src, out[Ether].dst = smac, dmac
    out[IP].ttl -= 1
    del out[IP].chksum
    return Ether(bytes(out))


class PlainEcmpTest(BaseTest):
    """Pushes the plain ECMP program and leaf1's entries; removes them afterwards."""

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        params = testutils.test_params_get()
        art = plain_ecmp_artifacts()
        if art.missing():
            self.skipTest(f"{art.missing()[0]}: missing; run `make p4`")
        p4info = P4Info.from_file(art.p4info)
        self.pipeline = PlainEcmpPipeline(p4info)
        self.client = P4RuntimeClient(params["grpcaddr"], int(params["device_id"]), p4info)
        self.client.connect()
        self.client.set_pipeline(str(art.bmv2_json))
        self.client.insert(*fabric_entries(self.pipeline, NET)["leaf1"])

    def tearDown(self) -> None:
        for table in TABLES:
            self.client.clear_table(table)
        self.client.close()
        BaseTest.tearDown(self)

    def drops(self) -> dict[str, int]:
        return self.pipeline.drop_counts(self.client.read_counter(COUNTER_DROP_REASON))

    def spine_of(self, pkt: Ether) -> str:
        """Send `pkt` from the host; the spine it left towards, checking it left routed
        (the leaf's MAC to that spine's) and only once."""
        testutils.send_packet(self, HOST_PORT, pkt)
        result = testutils.dp_poll(self, timeout=2)
        assert isinstance(result, self.dataplane.PollSuccess), "no packet left the switch"
        spine = next((s for s, p in SPINE_PORTS.items() if p == result.port), None)
        assert spine is not None, f"left on port {result.port}, not an uplink"
        expected = routed(pkt, LEAF.mac, SPINE_MAC[spine])
        assert bytes(expected) == bytes(result.packet)[:len(expected)], result.packet
        return spine


class DeliverToHostTest(PlainEcmpTest):
    """A packet from a spine for h1_1 leaves on h1_1's port: the leaf's MAC to the host's,
    TTL decremented, the checksum right."""

    def runTest(self) -> None:
        pkt = (Ether(src=SPINE_MAC["spine2"], dst=LEAF.mac)
               / IP(src=REMOTE_IP, dst=HOST_IP, ttl=20) / UDP(sport=1234, dport=4321)
               / Raw(b"y" * 20))
        testutils.send_packet(self, SPINE_PORTS["spine2"], pkt)
        testutils.verify_packet(self, routed(pkt, LEAF.mac, HOST_MAC), HOST_PORT)
        testutils.verify_no_other_packets(self)
        assert sum(self.drops().values()) == 0


class HashSpreadTest(PlainEcmpTest):
    """Flows towards another leaf (different 5-tuples: source ports, a UDP flow among them)
    spread over both uplinks of the group."""

    def runTest(self) -> None:
        spines = {self.spine_of(from_host(sport=40000 + i)) for i in range(24)}
        self.spine_of(from_host(sport=5353, udp=True))
        testutils.verify_no_other_packets(self)
        assert spines == set(SPINE_PORTS), spines


class OneFlowOneNextHopTest(PlainEcmpTest):
    """Every packet of one flow (one 5-tuple) leaves by the same uplink, whatever else
    differs between them (TTL, IP id, payload)."""

    def runTest(self) -> None:
        for sport in (40001, 40002, 40003):
            seen = set()
            for i in range(12):
                pkt = from_host(sport=sport, ttl=64 - i, id=i)
                pkt[Raw].load = bytes([i]) * (16 + i)
                seen.add(self.spine_of(Ether(bytes(pkt))))
            assert len(seen) == 1, (sport, seen)
        testutils.verify_no_other_packets(self)


class BadChecksumDropTest(PlainEcmpTest):
    """A packet with a wrong IPv4 header checksum (RFC 1812 5.2.2) leaves nowhere and is
    counted once, as IPV4_CHECKSUM only."""

    def runTest(self) -> None:
        pkt = Ether(bytes(from_host()))
        pkt[IP].chksum ^= 0x0101
        testutils.send_packet(self, HOST_PORT, pkt)
        testutils.verify_no_other_packets(self)
        drops = self.drops()
        assert drops["ipv4_checksum"] == 1, drops
        assert sum(drops.values()) == 1, drops


class TtlExpiredDropTest(PlainEcmpTest):
    """A packet with TTL 1 (RFC 1812 5.3.1: it would expire here) leaves nowhere and is
    counted once, as TTL_EXPIRED only; TTL 2 is still forwarded."""

    def runTest(self) -> None:
        testutils.send_packet(self, HOST_PORT, from_host(ttl=1))
        testutils.verify_no_other_packets(self)
        drops = self.drops()
        assert drops["ttl_expired"] == 1 and sum(drops.values()) == 1, drops
        self.spine_of(from_host(ttl=2))


class NoRouteDropTest(PlainEcmpTest):
    """A destination no route covers (outside every edge's subnet) is dropped and counted
    as NO_ROUTE."""

    def runTest(self) -> None:
        pkt = from_host()
        pkt[IP].dst = "192.0.2.1"  # RFC 5737 documentation address
        testutils.send_packet(self, HOST_PORT, Ether(bytes(pkt)))
        testutils.verify_no_other_packets(self)
        drops = self.drops()
        assert drops["no_route"] == 1 and sum(drops.values()) == 1, drops
