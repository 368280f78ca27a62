"""Malformed packets: the edge switch survives them and never misroutes them. Each
packet is either dropped or forwarded intact (routed: TTL - 1, IPv4 checksum fixed;
tagged onto a path, or untagged with MACs rewritten towards h1), never to a wrong
port, and a well-formed packet sent afterwards is still forwarded correctly. FuzzTest
throws the seeded frames of mpsched.testing.fuzz at the switch and checks every frame that
leaves and the drop counters. (One drop reason per test: validation.py.)

Run: make ptf    (or: python -m mpsched.ptfrun robustness.TcpDataOffsetTest)
"""

from __future__ import annotations

import itertools
import os
import random
import select
import socket
import struct
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable

import ptf
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
from forwarding import PEER_MAC, host_packet, routed
from path_tag import PathTag, out_tag, tag, tagged
from ptf.mask import Mask
from rtt import DPORT, NO_DIGEST_WAIT
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import COUNTER_DROP_REASON, DIGEST_RTT_REPORT, ETHERTYPE_PATH_TAG
from mpsched.testing import fuzz, ipv4frames

ETH_LEN = 14
TAG_LEN = len(PathTag())
SPORT = 40000


def routed_ip(ip: bytes) -> bytes:
    """IPv4 bytes as the switch forwards them: TTL - 1, header checksum recomputed.
    Fewer than 20 bytes cannot be routed intact: returned as they are (never matches)."""
    if len(ip) < 20:
        return ip
    ihl = (ip[0] & 0x0F) * 4
    out = bytearray(ip)
    out[8] -= 1
    out[10:12] = b"\x00\x00"
    out[10:12] = struct.pack("!H", ipv4frames.checksum16(bytes(out[:ihl])))
    return bytes(out)


def to_path(ip: bytes, path_id: int) -> Mask:
    """What leaves on path path_id for an IPv4 packet (bytes from the IP header on)
    that h1 sent: Ethernet unchanged, a tag (seq, tx_ts, feedback not compared), routed IPv4."""
    eth = bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=ETHERTYPE_PATH_TAG))
    mask = Mask(Raw(eth + bytes(out_tag(path_id=path_id)) + routed_ip(ip)))
    mask.set_do_not_care((ETH_LEN + 4) * 8, 32 + 48 + 64)  # seq, tx_ts, feedback
    return mask


def to_host(ip: bytes) -> bytes:
    """What reaches h1 for an IPv4 packet arriving from a path: untagged, MACs rewritten."""
    return bytes(Ether(src=SWITCH_MAC, dst=HOST_MAC, type=0x0800)) + routed_ip(ip)


def from_path(ip: bytes, path_id: int = 1) -> bytes:
    """An IPv4 packet (bytes from the IP header on) arriving tagged from path path_id."""
    return (bytes(Ether(src=PEER_MAC, dst=SWITCH_MAC, type=ETHERTYPE_PATH_TAG))
            + bytes(PathTag(path_id=path_id)) + ip)


def ip_bytes(pkt) -> bytes:
    return bytes(pkt[IP])


def tcp_raw(ip_src: str, ip_dst: str, sport: int, dport: int, offset: int,
            tail: bytes = b"", flags: int = 0x18, payload: bytes = b"p" * 16) -> bytes:
    """IPv4 + a 20-byte TCP header with data offset `offset`, then `tail` (options)
    and payload; IPv4 total length matches the bytes."""
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1000, 1, (offset & 0xF) << 4, flags,
                      65535, 0, 0) + tail + payload
    return bytes(IP(src=ip_src, dst=ip_dst, proto=6) / Raw(tcp))


class RobustnessTest(EdgeSwitchTest):
    """All weight on path 1; helpers that accept a drop or an intact forward."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights({1: 1}, insert=True)

    def dropped_or(self, name: str, port: int, frame: bytes, expected: dict) -> str:
        """Send frame on port; it must be dropped or leave on a port in `expected`
        (port -> Mask or bytes) matching it. Returns "dropped" or "forwarded"."""
        testutils.send_packet(self, port, frame)
        result = testutils.dp_poll(self, timeout=0.5)
        if isinstance(result, self.dataplane.PollSuccess):
            assert result.port in expected, f"{name}: left on wrong port {result.port}"
            exp = expected[result.port]
            ok = exp.pkt_match(result.packet) if isinstance(exp, Mask) else \
                bytes(result.packet) == exp
            assert ok, f"{name}: forwarded altered: {bytes(result.packet).hex()}"
            outcome = "forwarded"
        else:
            outcome = "dropped"
        try:
            testutils.verify_no_other_packets(self)
        except AssertionError as error:
            raise AssertionError(f"{name}: more than one packet left") from error
        return outcome

    def from_host(self, name: str, ip: bytes) -> str:
        frame = bytes(Ether(src=HOST_MAC, dst=SWITCH_MAC, type=0x0800)) + ip
        return self.dropped_or(name, HOST_PORT, frame, {PATH_PORTS[1]: to_path(ip, 1)})

    def toward_host(self, name: str, ip: bytes) -> str:
        return self.dropped_or(name, PATH_PORTS[1], from_path(ip), {HOST_PORT: to_host(ip)})

    def still_alive(self) -> None:
        """A well-formed packet each way is still forwarded correctly."""
        pkt = host_packet()
        testutils.send_packet(self, HOST_PORT, pkt)
        testutils.verify_packet(self, tagged(routed(pkt), 1), PATH_PORTS[1])
        back = Ether(src=PEER_MAC, dst=SWITCH_MAC) / IP(src=REMOTE_IP, dst=HOST_IP) \
            / UDP(sport=1, dport=2) / Raw(b"z" * 20)
        testutils.send_packet(self, PATH_PORTS[2], tag(back, 2))
        testutils.verify_packet(self, to_host(ip_bytes(back)), HOST_PORT)
        testutils.verify_no_other_packets(self)


def bad_offset_cases(src: str, dst: str, sport: int, dport: int, flags: int = 0x18):
    cases = {f"doff {d}": tcp_raw(src, dst, sport, dport, d, flags=flags) for d in (0, 1, 4)}
    # Data offset 15 (60 bytes of header) in a segment of 20 + 16 bytes of TCP.
    cases["doff 15 over the header"] = tcp_raw(src, dst, sport, dport, 15, flags=flags)
    return cases


class TcpDataOffsetTest(RobustnessTest):
    """TCP with data offset 0, 1, 4 and 15 past the end of the packet, from h1 towards the
    remote subnet and from a path towards h1: dropped or forwarded intact, never to a
    wrong port; the switch still forwards afterwards."""

    def runTest(self) -> None:
        outcomes = {}
        for name, ip in bad_offset_cases(HOST_IP, REMOTE_IP, SPORT, DPORT).items():
            outcomes["out " + name] = self.from_host(name, ip)
        for name, ip in bad_offset_cases(REMOTE_IP, HOST_IP, DPORT, SPORT, 0x10).items():
            outcomes["in " + name] = self.toward_host(name, ip)
        print(outcomes)
        self.still_alive()


class TcpDataOffsetNoRttSampleTest(RobustnessTest):
    """A segment with a bad data offset starts no RTT sample: the ACK covering it yields no
    rtt_report digest, while the same exchange with a well-formed segment does."""

    def runTest(self) -> None:
        self.client.insert(self.pipeline.rtt_config(PEER_EDGE, 1, 0))
        self.client.insert_digest(DIGEST_RTT_REPORT, max_timeout_ns=0, max_list_size=1)
        rtt_id = self.client.p4info.digest_id(DIGEST_RTT_REPORT)

        def reports() -> int:
            n = 0
            while (d := self.client.read_digest_list(NO_DIGEST_WAIT)) is not None:
                n += d.digest_id == rtt_id
            return n

        ack = (Ether(src=PEER_MAC, dst=SWITCH_MAC) / IP(src=REMOTE_IP, dst=HOST_IP, ttl=63)
               / TCP(sport=DPORT, flags="A", seq=1, ack=5000))
        for i, (name, ip) in enumerate(bad_offset_cases(HOST_IP, REMOTE_IP, 0, DPORT).items()):
            sport = SPORT + 1 + i
            ip = bytearray(ip)
            ip[20:22] = struct.pack("!H", sport)
            self.from_host(name, bytes(ip))
            ack[TCP].dport = sport
            testutils.send_packet(self, PATH_PORTS[1], tag(Ether(bytes(ack)), 1))
            testutils.verify_packet(self, to_host(ip_bytes(Ether(bytes(ack)))), HOST_PORT)
            assert reports() == 0, f"{name}: an RTT sample was started"
        # Control: a well-formed segment and its ACK do give a report.
        good = tcp_raw(HOST_IP, REMOTE_IP, SPORT, DPORT, 5)
        assert self.from_host("good", good) == "forwarded"
        ack[TCP].dport = SPORT
        testutils.send_packet(self, PATH_PORTS[1], tag(Ether(bytes(ack)), 1))
        testutils.verify_packet(self, to_host(ip_bytes(Ether(bytes(ack)))), HOST_PORT)
        assert reports() == 1
        self.still_alive()


class TcpOptionLengthTest(RobustnessTest):
    """TCP options with option length 0, 1 and one running past the header, on a data
    segment (options not walked) and on a pure ACK (walked: the walk stops at the bad
    option): forwarded unchanged, and the switch does not crash. (MPTCP options and
    more malformed cases: mptcp.MalformedOptionsTest.)"""

    def runTest(self) -> None:
        tails = {
            "optlen 0": b"\x08\x00\x00\x00",
            "optlen 1": b"\x08\x01\x00\x00",
            "optlen past header": b"\x08\x28\x00\x00",  # says 40 bytes, 4 in the header
        }
        for name, tail in tails.items():
            out = tcp_raw(HOST_IP, REMOTE_IP, SPORT, DPORT, 6, tail)
            assert self.from_host(name, out) == "forwarded", name
            back = tcp_raw(REMOTE_IP, HOST_IP, DPORT, SPORT, 6, tail, flags=0x10)
            assert self.toward_host(name, back) == "forwarded", name
        self.still_alive()


class TruncatedHeaderTest(RobustnessTest):
    """Ethernet only, IPv4 cut at 10 bytes, TCP cut at 8, UDP cut at 4, and a path tag cut
    in the middle arriving from a path: dropped or forwarded intact, never to a wrong
    port; the switch still forwards afterwards."""

    def runTest(self) -> None:
        tcp = ip_bytes(host_packet())
        udp = bytes(IP(src=HOST_IP, dst=REMOTE_IP) / UDP(sport=1, dport=2) / Raw(b"u" * 8))
        outcomes = {
            "ethernet only": self.from_host("ethernet only", b""),
            "ipv4 cut at 10": self.from_host("ipv4 cut at 10", tcp[:10]),
            "tcp cut at 8": self.from_host("tcp cut at 8", tcp[:20 + 8]),
            "udp cut at 4": self.from_host("udp cut at 4", udp[:20 + 4]),
        }
        back = bytes(IP(src=REMOTE_IP, dst=HOST_IP) / UDP(sport=1, dport=2) / Raw(b"v" * 8))
        for name, ip in {"ipv4 cut at 10": back[:10], "udp cut at 4": back[:24]}.items():
            outcomes["in " + name] = self.toward_host(name, ip)
        cut_tag = from_path(back)[:ETH_LEN + TAG_LEN // 2]
        outcomes["tag cut"] = self.dropped_or(
            "tag cut", PATH_PORTS[1], cut_tag, {HOST_PORT: b"<never>"})
        print(outcomes)
        assert outcomes["tag cut"] == "dropped"
        self.still_alive()


class NonTcpUdpTest(RobustnessTest):
    """ICMP, GRE (protocol 47) and an unassigned protocol (253) are routed by destination
    like any other packet: onto path 1 from h1, to h1 from a path."""

    def runTest(self) -> None:
        for name, l4 in {"icmp": ICMP() / Raw(b"i" * 16), "gre": GRE() / Raw(b"g" * 16),
                         "proto 253": Raw(b"n" * 16)}.items():
            kw = {"proto": 253} if name == "proto 253" else {}
            out = ip_bytes(IP(src=HOST_IP, dst=REMOTE_IP, **kw) / l4)
            assert self.from_host(name, out) == "forwarded", name
            back = ip_bytes(IP(src=REMOTE_IP, dst=HOST_IP, **kw) / l4)
            assert self.toward_host(name, back) == "forwarded", name
        self.still_alive()


class RandomBurstTest(RobustnessTest):
    """200 random-byte frames (seeded) on every port: none is forwarded (a random
    EtherType is almost never IPv4 or the path tag; this seed makes none), and a valid
    packet sent afterwards is still forwarded correctly."""

    def runTest(self) -> None:
        rng = random.Random(20261122)
        for port in (HOST_PORT, *PATH_PORTS.values()):
            for _ in range(200):
                frame = bytes(rng.getrandbits(8) for _ in range(rng.randint(14, 200)))
                testutils.send_packet(self, port, frame)
        time.sleep(1)
        testutils.verify_no_other_packets(self, timeout=1)
        self.still_alive()


FUZZ_SEED = 20261125
FUZZ_FRAMES = 10_000  # from h1's port; as many again, tagged, from the three path ports
FUZZ_RATE = 4000  # frames/s offered (BMv2 forwards about 20 000/s of this program)
PACKET_OUTGOING = 4  # sll_pkttype of a frame this host sent itself
SO_RCVBUFFORCE = 33  # Linux: a receive buffer above rmem_max (root)
ETH_P_ALL = 0x0003
# The header reasons ipv4_header_valid and the switch attribute alike (same order of checks).
HEADER_REASONS = ("ipv4_version", "ipv4_ihl", "ipv4_total_len_short", "ipv4_total_len_long",
                  "ipv4_checksum")


class Sniffer:
    """Every frame arriving on the PTF ends of the switch's ports (raw AF_PACKET sockets, a
    thread), by port, in arrival order. Frames this host sent itself are left out."""

    def __init__(self, ifaces: dict[int, str]) -> None:
        self.frames: list[tuple[int, bytes]] = []
        self._socks = {}
        for port, iface in ifaces.items():
            # protocol 0 until bound: a socket created for every protocol would take frames
            # of every interface (loopback too) until bind() narrows it to one
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
            sock.bind((iface, ETH_P_ALL))
            sock.setblocking(False)
            self._socks[sock] = port
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fuzz-sniffer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select(list(self._socks), [], [], 0.05)
            for sock in ready:
                while True:
                    try:
                        data, addr = sock.recvfrom(65535)
                    except BlockingIOError:
                        break
                    if addr[2] != PACKET_OUTGOING:
                        self.frames.append((self._socks[sock], data))

    def close(self) -> list[tuple[int, bytes]]:
        self._stop.set()
        self._thread.join()
        for sock in self._socks:
            sock.close()
        return self.frames


def switch_pid(grpc_address: str) -> int | None:
    """The PID of the process listening on the switch's gRPC port (ss), None if none."""
    port = grpc_address.rsplit(":", 1)[1]
    out = subprocess.run(["ss", "-Hltnp", f"sport = :{port}"], capture_output=True,
                         text=True, check=False).stdout
    for part in out.split("pid=")[1:]:
        return int(part.split(",", 1)[0])
    return None


FUZZ_WINDOW = 256  # frames sent that the switch has not yet accounted for, at most
FUZZ_CHECK = 64  # how often (in frames sent) the sender looks at what the switch accounted for
FUZZ_STALL_S = 2.0  # no progress for this long: the missing frames are lost, go on


def paced_send(
    batches: list[tuple[socket.socket, list[bytes]]],
    rate: int,
    accounted: Callable[[], int] | None = None,
) -> int:
    """Send the batches' frames interleaved (one of each batch in turn), each on its batch's
    socket, 1 / rate apart; a sender that fell behind (descheduled) goes on from now instead
    of catching up in a burst the switch could not take. With `accounted` (frames the
    switch has forwarded or counted as drops so far), at most FUZZ_WINDOW frames are ahead
    of it: on a machine too busy for the rate the sender waits for the switch rather than
    overflowing the queues in front of it, so a frame lost there is the switch's doing, not
    the load's. Returns the number sent."""
    order = [pair for row in itertools.zip_longest(
        *[[(sock, frame) for frame in frames] for sock, frames in batches]) for pair in row
        if pair is not None]
    base = accounted() if accounted is not None else 0
    due = time.monotonic()
    for sent, (sock, frame) in enumerate(order):
        # checked every FUZZ_CHECK frames: reading the switch's counters costs a round trip
        if accounted is not None and sent % FUZZ_CHECK == 0 and sent - (
            accounted() - base
        ) >= FUZZ_WINDOW:
            wait_for_switch(accounted, base + sent - FUZZ_WINDOW // 2)
            due = time.monotonic()
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        else:
            due = now
        sock.send(frame)
        due += 1 / rate
    return len(order)


def wait_for_switch(accounted: Callable[[], int], target: int) -> None:
    """Until `accounted()` reaches `target`, or makes no progress for FUZZ_STALL_S."""
    last, progress_at = accounted(), time.monotonic()
    while last < target and time.monotonic() - progress_at < FUZZ_STALL_S:
        time.sleep(0.005)
        now = accounted()
        if now > last:
            last, progress_at = now, time.monotonic()


class FuzzTest(RobustnessTest):
    """10 000 seeded frames of mpsched.testing.fuzz from h1's port, and 10 000 more, tagged,
    from the three path ports (paced at FUZZ_RATE): the switch process is still alive;
    every frame leaving any port has a valid IPv4 header (ipv4_header_valid), host frames
    leave only on path 1, path frames only to h1; every frame is forwarded or counted as a
    drop, but for at most 1 % unaccounted (lost before the switch, or a probe-like tag the
    far edge consumes); within that slack exactly the well-formed frames leave (and, from the
    path ports, the tagged segments whose TCP header runs past the frame: no option of a
    tagged segment is walked, so like any router the switch forwards their valid IPv4), each
    single-defect kind counts at least its frames under its drop reason, each IPv4 header
    reason exactly the frames whose header has that defect; all drops together are no more
    than the malformed frames sent; a normal flow passes afterwards."""

    def drops(self) -> dict[str, int]:
        return {name: v.packets for name, v in self.pipeline.drop_counts(
            self.client.read_counter(COUNTER_DROP_REASON)).items()}

    def settle(self, sniffer: Sniffer) -> None:
        """Wait until the switch is done: frames left plus drops stop changing."""
        last, deadline = -1, time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.3)
            now = len(sniffer.frames) + sum(self.drops().values())
            if now == last:
                return
            last = now

    def runTest(self) -> None:
        pid = switch_pid(testutils.test_params_get()["grpcaddr"])
        assert pid is not None, "no process listens on the switch's gRPC port"
        ifaces = {port: iface for (_, port), iface in ptf.config["port_map"].items()}
        phases = {
            "host": [(HOST_PORT, fuzz.frames(FUZZ_SEED, FUZZ_FRAMES, src=HOST_IP,
                                             dst=REMOTE_IP))],
            "paths": [(port, fuzz.frames(FUZZ_SEED + pid_, FUZZ_FRAMES // 3 + 1, src=REMOTE_IP,
                                         dst=HOST_IP, src_mac=PEER_MAC, path_id=pid_))
                      for pid_, port in PATH_PORTS.items()],
        }
        sent: Counter = Counter()  # kind -> frames sent
        # tagged segments whose TCP header runs past the frame (parser.p4 walks no option of a
        # tagged segment): an IPv4-valid packet, forwarded as a router does; its host drops it
        tagged_cuts = 0
        header_reasons: Counter = Counter()  # reason -> frames sent with that header defect
        left: dict[str, Counter] = {}
        for phase, batches in phases.items():
            sniffer = Sniffer(ifaces)
            socks = []
            for port, frames in batches:
                # a frame shorter than Ethernet cannot leave a veth: not sent
                frames = [(kind, f) for kind, f in frames if len(f) >= ipv4frames.ETH_LEN]
                sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
                sock.bind((ifaces[port], 0))
                socks.append((sock, [f for _, f in frames]))
                for kind, frame in frames:
                    sent[kind] += 1
                    tagged_cuts += phase == "paths" and kind == "mptcp_frame_cut"
                    ok, reason = ipv4frames.ipv4_header_valid(frame, min_ttl=2)
                    header_reasons[reason] += not ok
            n = paced_send(
                socks, FUZZ_RATE, lambda s=sniffer: len(s.frames) + sum(self.drops().values())
            )
            self.settle(sniffer)
            captured = sniffer.close()
            for sock, _ in socks:
                sock.close()
            left[phase] = Counter(port for port, _ in captured)
            print(f"{phase}: {n} frames sent, left by port {dict(left[phase])}")
            for port, frame in captured:
                ok, reason = ipv4frames.ipv4_header_valid(frame)
                assert ok, f"{phase}: invalid IPv4 ({reason}) left on port {port}: {frame.hex()}"
            allowed = {PATH_PORTS[1]} if phase == "host" else {HOST_PORT}
            assert set(left[phase]) <= allowed, f"{phase}: left on {set(left[phase])}"
        os.kill(pid, 0)  # raises if the switch process is gone
        self.dataplane.flush()

        drops = self.drops()
        total = sum(sent.values())
        well_formed = sum(n for kind, n in sent.items() if kind in fuzz.WELL_FORMED_KINDS)
        forwarded = sum(sum(c.values()) for c in left.values())
        slack = total - forwarded - sum(drops.values())
        print("drops:", {k: v for k, v in drops.items() if v})
        print("sent:", dict(sent), "unaccounted:", slack)
        assert 0 <= slack <= total // 100, \
            f"{slack} of {total} frames neither forwarded nor counted as drops"
        assert well_formed - slack <= forwarded <= well_formed + tagged_cuts, \
            f"{forwarded} frames left, {well_formed} well-formed and {tagged_cuts} tagged " \
            "segments cut in their options sent"
        for reason in set(fuzz.KIND_REASON.values()):
            kinds = [k for k, r in fuzz.KIND_REASON.items() if r == reason]
            expected = sum(sent[k] for k in kinds)
            assert drops[reason] >= expected - slack, \
                f"{reason}: {drops[reason]} < {expected} ({kinds})"
        for reason in HEADER_REASONS:
            assert header_reasons[reason] - slack <= drops[reason] <= header_reasons[reason], \
                f"{reason}: counted {drops[reason]}, sent {header_reasons[reason]}"
        assert sum(drops.values()) <= total - well_formed - tagged_cuts, \
            f"{sum(drops.values())} drops > {total - well_formed - tagged_cuts} malformed frames"
        self.still_alive()
