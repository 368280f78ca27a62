"""The seeded frames of mpsched.testing.fuzz thrown at the edge switch (FuzzTest): the switch
survives them, every frame that leaves is a valid IPv4 packet on the right port, and every
frame is forwarded or counted under its drop reason. (Malformed packets one case at a time:
robustness.py; one drop reason per test: validation.py.)

Run: make ptf    (or: python -m mpsched.ptfrun fuzzing.FuzzTest)
"""

from __future__ import annotations

import itertools
import os
import select
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable

import ptf
import ptf.testutils as testutils
from base import HOST_IP, HOST_PORT, PATH_PORTS, REMOTE_IP
from forwarding import PEER_MAC
from robustness import RobustnessTest

from mpsched.p4rt.pipeline import COUNTER_DROP_REASON
from mpsched.testing import fuzz, ipv4frames

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
