"""SYN copies (p4src/include/path_select.p4, syn_copy; docs/scheduling.md, "SYN copies"): in
a class whose placement has syn_copy, a TCP SYN (or SYN-ACK) leaves on its path and, as a
copy, on the first usable path after it, cloned at the end of the egress to the clone session
of (destination edge, copy path); the copy's tag names the copy path and carries
PATH_FLAG_COPY, the rest of it as the original's. Other packets, and classes without
syn_copy, are not copied. The far edge delivers an arriving copy untagged and measures
nothing of it.

Run: make ptf    (or: python -m mpsched.ptfrun syn_copy.SynCopyTest)
"""

from __future__ import annotations

import ptf.testutils as testutils
from base import HOST_IP, HOST_MAC, HOST_PORT, PATH_PORTS, PEER_EDGE, REMOTE_IP, SWITCH_MAC
from fabric import NO_DIGEST_WAIT, FabricTest
from path_tag import PathTag, tag
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from telemetry import delivered, remote_packet

from mpsched.p4rt.pipeline import DIGEST_PATH_REPORT, PATH_FLAG_COPY

PORT_PATH = {port: pid for pid, port in PATH_PORTS.items()}


def tcp_packet(flags: str, sport: int = 40000):
    """A TCP segment of h1 towards the remote subnet with these flags."""
    return (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=HOST_IP, dst=REMOTE_IP, ttl=64)
            / TCP(sport=sport, dport=80, flags=flags, seq=1000))


class SynCopyTest(FabricTest):
    """The switch's clone sessions are those of its path next hops (the controller's
    forwarding.copy_sessions)."""

    def setUp(self) -> None:
        super().setUp()
        self.client.insert_clone_sessions(
            *[self.pipeline.copy_session(PEER_EDGE, pid, port) for pid, port in PATH_PORTS.items()])

    def sent(self, count: int) -> dict[int, PathTag]:
        """The tags of the next `count` packets onto the paths, by port; then nothing else."""
        out = {}
        for _ in range(count):
            result = testutils.dp_poll(self, timeout=2)
            assert isinstance(result, self.dataplane.PollSuccess), f"{len(out)} of {count}"
            assert result.port in PORT_PATH and result.port not in out, result.port
            out[result.port] = Ether(result.packet)[PathTag]
        testutils.verify_no_other_packets(self)
        return out


class CopiedTest(SynCopyTest):
    """A SYN and a SYN-ACK of a class with syn_copy over paths 1 and 3 (path 2 has no
    weight) leave on their hashed path and, copied, on the other one: the copy's tag has the
    other path's id and PATH_FLAG_COPY, the original's flags 0, and the same sequence number,
    time stamp and TCP segment; path 2 gets nothing."""

    def runTest(self) -> None:
        self.set_weights({1: 1, 3: 1}, insert=True, syn_copy=True)
        for flags in ("S", "SA"):
            testutils.send_packet(self, HOST_PORT, tcp_packet(flags))
            tags = self.sent(2)
            assert set(tags) == {PATH_PORTS[1], PATH_PORTS[3]}, sorted(tags)
            assert all(t.path_id == PORT_PATH[port] for port, t in tags.items()), tags
            assert sorted(t.flags for t in tags.values()) == [0, PATH_FLAG_COPY], tags
            orig, copy = sorted(tags.values(), key=lambda t: t.flags)
            assert (copy.seq, copy.tx_ts, copy.src_edge, copy.dst_edge) == (
                orig.seq, orig.tx_ts, orig.src_edge, orig.dst_edge), (copy, orig)
            assert bytes(copy[TCP]) == bytes(orig[TCP])


class NotCopiedTest(SynCopyTest):
    """Only SYNs are copied, and only in a class with syn_copy: an ACK and a data segment of
    that class leave once; a SYN leaves once when its class has no syn_copy, and when no path
    but its own is usable (one weighted path)."""

    def runTest(self) -> None:
        self.set_weights({1: 1, 2: 1}, insert=True, syn_copy=True)
        for flags in ("A", "PA", "FA"):
            testutils.send_packet(self, HOST_PORT, tcp_packet(flags))
            assert len(self.sent(1)) == 1
        self.set_weights({1: 1, 2: 1}, syn_copy=False)
        testutils.send_packet(self, HOST_PORT, tcp_packet("S"))
        (only,) = self.sent(1).values()
        assert only.flags == 0
        self.set_weights({2: 1}, syn_copy=True)
        testutils.send_packet(self, HOST_PORT, tcp_packet("S"))
        assert list(self.sent(1)) == [PATH_PORTS[2]]


class CopyArrivalTest(FabricTest):
    """At the far edge a copy (PATH_FLAG_COPY, sequence number 7 on path 2) reaches the host
    untagged, like any packet, and enters no measurement: no path report comes for it, and
    the path's next packet, sequence number 0, is reported as its first (nothing lost)."""

    def runTest(self) -> None:
        p = self.pipeline
        self.client.insert(*[p.report_config(PEER_EDGE, pid, 0) for pid in PATH_PORTS])
        self.client.insert_digest(DIGEST_PATH_REPORT, max_timeout_ns=0, max_list_size=1)
        pkt = remote_packet()
        copy = tag(pkt, 2, seq=7, tx_ts=900)
        copy[PathTag].flags = PATH_FLAG_COPY
        testutils.send_packet(self, PATH_PORTS[2], Ether(bytes(copy)))
        testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        assert self.client.read_digest_list(NO_DIGEST_WAIT) is None, "the copy was measured"
        testutils.send_packet(self, PATH_PORTS[2], tag(pkt, 2, seq=0, tx_ts=1000))
        testutils.verify_packet(self, delivered(pkt), HOST_PORT)
        r = self.report()
        assert (r["path_id"], r["rx_packets"], r["lost"], r["reordered"]) == (2, 1, 0, 0), r
