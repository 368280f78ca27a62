"""MPTCP-aware mode (p4src/include/mptcp.p4, parser.p4): handshake options parsed on SYNs
and pure ACKs and reported as digests (mptcp_capable_t, mptcp_join_t, mptcp_close_t),
subflow pins overriding the class's placement, and option walks that survive malformed
options.

Run: make ptf    (or: python -m mpsched.ptfrun mptcp.CapableKeysTest)
"""

from __future__ import annotations

import struct
import time

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
from failover import probe_from_path
from forwarding import path_of
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import (
    COUNTER_RX,
    DIGEST_MPTCP_CAPABLE,
    DIGEST_MPTCP_CLOSE,
    DIGEST_MPTCP_JOIN,
    DIGESTS_MPTCP,
    TABLE_SUBFLOW_PIN,
)
from tests.waiting import wait_until

NO_DIGEST_WAIT = 0.5  # seconds to wait before concluding no digest came
SPORT, DPORT = 40000, 5201
KEY_A = 0x1122334455667788
KEY_B = 0x99AABBCCDDEEFF00
TOKEN = 0xCAFEF00D

# Options as Linux sends them around the MPTCP option: MSS, SACK permitted, timestamps,
# NOP, window scale on SYNs; NOP, NOP, timestamps on ACKs.
SYN_OPTS = (b"\x02\x04\x05\xb4" + b"\x04\x02" + b"\x08\x0a" + bytes(8) + b"\x01"
            + b"\x03\x03\x07")
ACK_OPTS = b"\x01\x01\x08\x0a" + bytes(8)


def mp_capable(*keys: int, tail: bytes = b"") -> bytes:
    """MP_CAPABLE v1 (RFC 8684 §3.1) with 0, 1 or 2 keys and an optional data tail."""
    body = b"".join(struct.pack("!Q", k) for k in keys) + tail
    return bytes([30, 4 + len(body), 0x01, 0x01]) + body


def mp_join_syn(token: int, addr_id: int, nonce: int = 0x01020304) -> bytes:
    """MP_JOIN on a SYN (RFC 8684 §3.2): length 12, receiver's token, sender's nonce."""
    return bytes([30, 12, 0x10, addr_id]) + struct.pack("!II", token, nonce)


def segment(options: bytes, flags: str, sport: int = SPORT, dport: int = DPORT,
            payload: bytes = b"", pad: bool = True, src: str = HOST_IP, dst: str = REMOTE_IP):
    """A TCP segment from h1 whose option area is exactly `options` (padded with NOPs
    to a multiple of 4 bytes unless pad is False; then the data offset rounds down)."""
    if pad and len(options) % 4:
        options = options + b"\x01" * (4 - len(options) % 4)
    pkt = (Ether(src=HOST_MAC, dst=SWITCH_MAC) / IP(src=src, dst=dst)
           / TCP(sport=sport, dport=dport, flags=flags, seq=1000, ack=2000,
                 dataofs=5 + len(options) // 4) / Raw(options + payload))
    return Ether(bytes(pkt))


class MptcpTest(EdgeSwitchTest):
    """An edge switch with all weight on path 1 (hash mode) and the MPTCP digests enabled."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights({1: 1}, insert=True)
        for name in DIGESTS_MPTCP:
            self.client.insert_digest(name, max_timeout_ns=0, max_list_size=1)

    def reports(self, timeout: float = NO_DIGEST_WAIT) -> list[dict[str, int]]:
        """Every MPTCP report that arrives until none came for `timeout` seconds, each
        with its digest's name under "digest"."""
        out = []
        while (digest := self.client.read_digest_list(timeout)) is not None:
            if digest.digest_id in self.pipeline.mptcp_digests:
                name, _ = self.pipeline.mptcp_digests[digest.digest_id]
                out += [{"digest": name, **values}
                        for values in self.client.decode_digest_list(name, digest)]
        return out

    def report(self) -> dict[str, int]:
        got = self.reports()
        assert len(got) == 1, got
        return got[0]

    def still_alive(self) -> None:
        """A plain TCP segment still leaves on path 1 unchanged."""
        assert path_of(self, segment(b"", "PA", payload=b"alive")) == 1


class CapableKeysTest(MptcpTest):
    """A SYN/ACK with MP_CAPABLE after Linux's usual options reports its one key; the third
    ACK (NOP, NOP, timestamps, MP_CAPABLE of length 20) reports both keys; one of length 24
    (data-level length and checksum) too. Each is forwarded unchanged on its path. The
    SYN's MP_CAPABLE (no key) is not reported."""

    def runTest(self) -> None:
        assert path_of(self, segment(SYN_OPTS + mp_capable(), "S")) == 1
        assert self.reports() == []
        assert path_of(self, segment(SYN_OPTS + mp_capable(KEY_A), "SA")) == 1
        r = self.report()
        assert r["digest"] == DIGEST_MPTCP_CAPABLE and r["key_a"] == KEY_A, r
        assert (r["src_port"], r["dst_port"], r["tcp_flags"]) == (SPORT, DPORT, 0x12), r
        assert path_of(self, segment(ACK_OPTS + mp_capable(KEY_A, KEY_B), "A")) == 1
        r = self.report()
        assert (r["digest"], r["key_a"], r["key_b"], r["tcp_flags"]) == (
            DIGEST_MPTCP_CAPABLE, KEY_A, KEY_B, 0x10), r
        with_data = mp_capable(KEY_B, KEY_A, tail=b"\x00\x10\xab\xcd")
        assert len(with_data) == 24
        assert path_of(self, segment(ACK_OPTS + with_data, "A")) == 1
        r = self.report()
        assert (r["key_a"], r["key_b"]) == (KEY_B, KEY_A), r


class JoinTokenTest(MptcpTest):
    """An MP_JOIN SYN reports the receiver's token and the sender's address id; the
    MP_JOIN SYN/ACK (length 16) and an MP_CAPABLE on a data segment (options are not
    walked there) are forwarded without a report."""

    def runTest(self) -> None:
        assert path_of(self, segment(SYN_OPTS + mp_join_syn(TOKEN, 3), "S", sport=40001)) == 1
        r = self.report()
        assert (r["digest"], r["token"], r["addr_id"], r["src_port"]) == (
            DIGEST_MPTCP_JOIN, TOKEN, 3, 40001), r
        synack = bytes([30, 16, 0x10, 3]) + bytes(12)
        assert path_of(self, segment(SYN_OPTS + synack, "SA", sport=40001)) == 1
        assert path_of(self, segment(ACK_OPTS + mp_capable(KEY_A, KEY_B), "PA",
                                     payload=b"data")) == 1
        assert self.reports() == []


class SubflowPinTest(MptcpTest):
    """A pinned subflow leaves on its pin's path (3) while the class puts everything on
    path 1, in hash and in flowlet mode, and its packets count on the pin's direct counter;
    the reverse 5-tuple and other flows are not pinned; a FIN of the pinned subflow is
    reported (CLOSE), one of an unpinned flow is not. Deleting the pin hands the subflow
    back to the class."""

    def runTest(self) -> None:
        pin = self.pipeline.subflow_pin(HOST_IP, REMOTE_IP, SPORT, DPORT, 3)
        self.client.insert(pin)
        for mode in ("hash", "flowlet"):
            self.set_weights({1: 1}, mode=mode, gap_us=1_000_000)
            assert path_of(self, segment(b"", "PA", payload=b"pinned")) == 3, mode
            assert path_of(self, segment(b"", "PA", sport=SPORT + 1, payload=b"other")) == 1
        counts = self.client.read_direct_counters(TABLE_SUBFLOW_PIN)
        assert len(counts) == 1, counts
        match, value = counts[0]
        assert (match["src_port"], match["dst_port"], value.packets) == (SPORT, DPORT, 2), counts
        assert path_of(self, segment(b"", "FA")) == 3
        r = self.report()
        assert (r["digest"], r["src_port"], r["tcp_flags"]) == (DIGEST_MPTCP_CLOSE, SPORT, 0x11), r
        assert path_of(self, segment(b"", "R", sport=SPORT + 1)) == 1
        assert self.reports() == []
        self.client.delete(pin)
        assert path_of(self, segment(b"", "PA", payload=b"free")) == 1


class PinnedDeadPathTest(MptcpTest):
    """A subflow pinned to path 3 leaves on path 3 while path 3 is alive; once path 3
    is dead (one probe, then silence past dead_after) it fails over to one of the class's
    alive weighted paths instead of being black-holed."""

    DEAD_AFTER_S = 0.5

    def runTest(self) -> None:
        self.set_weights({1: 1, 2: 1})
        self.client.insert(self.pipeline.liveness_config(PEER_EDGE, 3,
                                                         int(self.DEAD_AFTER_S * 1e6)),
                           self.pipeline.subflow_pin(HOST_IP, REMOTE_IP, SPORT, DPORT, 3))
        heard = self.pinned_while_alive()
        # silence past dead_after since the last probe (received before `heard`)
        time.sleep(max(0.0, heard + self.DEAD_AFTER_S + 0.15 - time.monotonic()))
        got = path_of(self, segment(b"", "PA", payload=b"dead"))
        assert got in (1, 2), got

    def pinned_while_alive(self) -> float:
        """A probe from path 3, then the pinned segment leaves on path 3, checked only when
        its round trip ended within dead_after of the probe (a busy machine tries again,
        twice, then fails saying so). Returns a time by which the probe was received."""
        for probes in range(1, 4):
            sent = time.monotonic()
            testutils.send_packet(self, PATH_PORTS[3], probe_from_path(3))
            got = path_of(self, segment(b"", "PA", payload=b"alive"))
            # the probe may be processed after the segment (another port): wait for it
            cell = self.cell(3)
            wait_until(lambda n=probes, c=cell: self.client.read_counter(COUNTER_RX, c)[c].packets
                       >= n,
                       timeout=10, interval=0.01, what="the probe from path 3")
            done = time.monotonic()
            if done - sent < self.DEAD_AFTER_S:
                assert got == 3, got
                return done
        raise AssertionError(f"a round trip took longer than dead_after ({self.DEAD_AFTER_S} "
                             "s) three times: the machine is too busy for this test")


class MalformedOptionsTest(MptcpTest):
    """Option lists the walk must stop on (length 0 or 1, running past the header, an
    MPTCP option shorter than 4 bytes or past the header, EOL, more options than the walk
    keeps, a lone trailing NOP at the segment's end, unknown MPTCP subtypes and lengths):
    each segment is forwarded unchanged on path 1, none is reported, and the switch keeps
    forwarding. A segment whose data offset runs past its end is dropped, not forwarded."""

    def runTest(self) -> None:
        cases = {
            "optlen 0": (b"\x08\x00" + bytes(10), "A"),
            "optlen 1": (b"\x08\x01" + bytes(2), "S"),
            "optlen past header": (b"\x08\x28" + bytes(2), "S"),
            "mptcp len 2": (b"\x1e\x02\x00\x00", "S"),
            "mptcp len 3": (b"\x1e\x03\x00\x00", "A"),
            "mptcp past header": (b"\x1e\x14\x00\x01" + bytes(4), "A"),
            "capable after EOL": (b"\x00" + bytes(3) + mp_capable(KEY_A), "SA"),
            "40 NOPs": (b"\x01" * 40, "S"),
            "16 NOPs then capable": (b"\x01" * 16 + mp_capable(KEY_A), "SA"),
            "trailing NOP, no payload": (b"\x02\x04\x05\xb4" * 2 + b"\x01\x01\x01\x01", "A"),
            "unknown subtype": (bytes([30, 12, 0xF0, 0]) + bytes(8), "SA"),
            "capable len 16": (bytes([30, 16, 0x01, 0x01]) + bytes(12), "SA"),
            "join len 12 on SYN/ACK": (mp_join_syn(TOKEN, 1), "SA"),
        }
        for name, (options, flags) in cases.items():
            assert path_of(self, segment(options, flags)) == 1, name
            assert self.reports(timeout=0.2) == [], name
        # data offset 15 (40 option bytes) but only 8 present: truncated, dropped
        cut = segment(SYN_OPTS + mp_capable(KEY_A), "SA")
        raw = bytearray(bytes(cut))
        raw[14 + 20 + 12] = 0xF0
        testutils.send_packet(self, HOST_PORT, bytes(raw[:14 + 20 + 20 + 8]))
        testutils.verify_no_other_packets(self, timeout=0.5)
        assert self.reports(timeout=0.2) == []
        self.still_alive()
        testutils.verify_no_other_packets(self)
