"""UDP probe: a paced sender and a timestamping receiver, plus the analysis of what arrived.

Run inside a network namespace:

    python -m mpsched.testing.udpprobe recv --port 5001 --out FILE
    python -m mpsched.testing.udpprobe send --dst 10.200.0.2 --port 5001 --pps 2000 --count 5000

Each datagram carries its sequence number and the sender's CLOCK_REALTIME
(ns) at send time; the receiver takes the kernel's receive time
(SO_TIMESTAMPNS, same clock: namespaces share it), so one-way delay is exact
up to the sender's few microseconds between reading the clock and `send`.
The receiver prints `ready` once bound, stops on `stop`/EOF on stdin (or
after --max-time), writes the records to --out and prints a JSON summary
(including SO_RXQ_OVFL: datagrams its own socket buffer dropped).

The sender paces by a schedule (packet i at start + i/pps) and, when it wakes
up late, sends what is due in bursts of at most --burst packets: Python's
sleep is too coarse for tens of kpps otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
from array import array
from dataclasses import dataclass
from pathlib import Path

HEADER = struct.Struct("!IQ")  # sequence number, sender's realtime ns
MIN_PAYLOAD = HEADER.size
FRAME_OVERHEAD = 8 + 20 + 14  # UDP + IPv4 + Ethernet header bytes per datagram
SO_RXQ_OVFL = getattr(socket, "SO_RXQ_OVFL", 40)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SOCK_BUF = 64 << 20
MAX_BURST = 32
PR_SET_PDEATHSIG = 1


# ------------------------------------------------------------------ records and analysis


@dataclass
class Records:
    """What the receiver got, in arrival order (payload bytes, ns timestamps)."""

    seq: array
    tx_ns: array
    rx_ns: array
    size: array

    def __len__(self) -> int:
        return len(self.seq)

    @classmethod
    def empty(cls) -> Records:
        return cls(array("I"), array("q"), array("q"), array("I"))

    def write(self, path: Path) -> None:
        with path.open("wb") as f:
            f.write(struct.pack("=Q", len(self)))
            for a in (self.seq, self.tx_ns, self.rx_ns, self.size):
                a.tofile(f)

    @classmethod
    def read(cls, path: Path) -> Records:
        rec = cls.empty()
        with path.open("rb") as f:
            (n,) = struct.unpack("=Q", f.read(8))
            for a in (rec.seq, rec.tx_ns, rec.rx_ns, rec.size):
                a.fromfile(f, n)
        return rec


def one_way_delays_ms(rec: Records) -> list[float]:
    return [(r - t) / 1e6 for t, r in zip(rec.tx_ns, rec.rx_ns, strict=True)]


def loss_fraction(sent: int, rec: Records) -> float:
    """Share of the `sent` sequence numbers 0..sent-1 that never arrived."""
    if sent <= 0:
        raise ValueError("nothing sent")
    got = {s for s in rec.seq if s < sent}
    return 1.0 - len(got) / sent


def loss_runs(sent: int, rec: Records) -> list[int]:
    """Lengths of the runs of consecutive lost sequence numbers among 0..sent-1."""
    got = bytearray(sent)
    for s in rec.seq:
        if s < sent:
            got[s] = 1
    runs: list[int] = []
    run = 0
    for ok in got:
        if ok:
            if run:
                runs.append(run)
            run = 0
        else:
            run += 1
    if run:
        runs.append(run)
    return runs


def reordered(rec: Records) -> int:
    """Datagrams that arrived after one with a higher sequence number."""
    count, highest = 0, -1
    for s in rec.seq:
        if s < highest:
            count += 1
        highest = max(highest, s)
    return count


def frame_rate_bps(rec: Records, skip_s: float = 0.0, tail_s: float = 0.0) -> float:
    """Receive rate in Ethernet frame bits/s between the first arrival after `skip_s`
    and the last arrival before `tail_s` from the end (the first frame in the window
    only marks its start)."""
    if not len(rec):
        raise ValueError("no records")
    t0 = rec.rx_ns[0] + skip_s * 1e9
    t1 = rec.rx_ns[-1] - tail_s * 1e9
    window = [(r, n) for r, n in zip(rec.rx_ns, rec.size, strict=True) if t0 <= r <= t1]
    if len(window) < 2 or window[-1][0] == window[0][0]:
        raise ValueError("too few arrivals in the window to measure a rate")
    bits = sum((n + FRAME_OVERHEAD) * 8 for _, n in window[1:])
    return bits / ((window[-1][0] - window[0][0]) / 1e9)


def frame_bits(payload: int) -> int:
    return (payload + FRAME_OVERHEAD) * 8


def pps_for_mbps(mbps: float, payload: int) -> float:
    """Datagrams per second that make `mbps` Mbit/s of Ethernet frames."""
    return mbps * 1e6 / frame_bits(payload)


# ------------------------------------------------------------------ sender


def _buffered_socket(kind: int, opt: int, force: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, kind)
    try:
        sock.setsockopt(socket.SOL_SOCKET, force, SOCK_BUF)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, opt, SOCK_BUF)
    return sock


def send(dst: str, port: int, payload: int, pps: float, count: int, burst: int) -> dict:
    """Send `count` datagrams at `pps`; returns a summary."""
    sock = _buffered_socket(socket.SOCK_DGRAM, socket.SO_SNDBUF, SO_SNDBUFFORCE)
    sock.connect((dst, port))
    buf = bytearray(max(payload, MIN_PAYLOAD))
    pack, clock, now_ns = HEADER.pack_into, time.monotonic, time.time_ns
    errors = 0
    bursts_late = 0
    start = clock()
    i = 0
    while i < count:
        elapsed = clock() - start
        due = min(count, int(elapsed * pps) + 1) - i
        if due <= 0:
            time.sleep((i / pps) - elapsed)
            continue
        if due > burst:
            bursts_late += 1
        for _ in range(min(due, burst)):
            pack(buf, 0, i, now_ns())
            try:
                sock.send(buf)
            except OSError:
                errors += 1
            i += 1
    elapsed = clock() - start
    sock.close()
    return {
        "sent": count,
        "send_errors": errors,
        "elapsed_s": elapsed,
        "pps": count / elapsed if elapsed > 0 else 0.0,
        "late_bursts": bursts_late,
    }


# ------------------------------------------------------------------ receiver


def _cmsg_values(ancdata: list) -> tuple[int, int | None]:
    rx_ns, ovfl = 0, None
    for level, kind, data in ancdata:
        if level != socket.SOL_SOCKET:
            continue
        if kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack_from("=qq", data)
            rx_ns = sec * 1_000_000_000 + nsec
        elif kind == SO_RXQ_OVFL and len(data) >= 4:
            (ovfl,) = struct.unpack_from("=I", data)
    return rx_ns, ovfl


class Receiver:
    """A UDP socket that records every datagram with its kernel receive time."""

    def __init__(self, port: int) -> None:
        self.sock = _buffered_socket(socket.SOCK_DGRAM, socket.SO_RCVBUF, SO_RCVBUFFORCE)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
        self.sock.bind(("0.0.0.0", port))
        self.sock.setblocking(False)
        self.rec = Records.empty()
        self.overflows = 0
        self.cmsg_space = socket.CMSG_SPACE(16) + socket.CMSG_SPACE(4)

    def drain(self) -> None:
        recvmsg, rec = self.sock.recvmsg, self.rec
        unpack = HEADER.unpack_from
        while True:
            try:
                data, anc, _, _ = recvmsg(65536, self.cmsg_space)
            except BlockingIOError:
                return
            rx_ns, ovfl = _cmsg_values(anc)
            if ovfl is not None:
                self.overflows = ovfl
            if len(data) < MIN_PAYLOAD:
                continue
            seq, tx = unpack(data)
            rec.seq.append(seq)
            rec.tx_ns.append(tx)
            rec.rx_ns.append(rx_ns or time.time_ns())
            rec.size.append(len(data))

    def run(self, max_time: float) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ, "sock")
        sel.register(sys.stdin, selectors.EVENT_READ, "ctl")
        deadline = time.monotonic() + max_time
        while time.monotonic() < deadline:
            for key, _ in sel.select(timeout=max(0.0, deadline - time.monotonic())):
                if key.data == "sock":
                    self.drain()
                    continue
                line = sys.stdin.readline()
                if not line or line.strip() == "stop":
                    self.drain()
                    return


# ------------------------------------------------------------------ command line


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m mpsched.testing.udpprobe", description=__doc__.split("\n\n")[0]
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send", help="paced UDP sender")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--size", type=int, default=1000, help="UDP payload bytes (>= 12)")
    rate = s.add_mutually_exclusive_group(required=True)
    rate.add_argument("--pps", type=float, help="datagrams per second")
    rate.add_argument("--mbps", type=float, help="Mbit/s of Ethernet frames (payload + 42)")
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--burst", type=int, default=MAX_BURST, help="most datagrams sent back to back")
    r = sub.add_parser("recv", help="timestamping UDP receiver")
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--out", type=Path, required=True, help="records file")
    r.add_argument("--max-time", type=float, default=120.0)
    return ap


def _die_with_parent() -> None:
    """SIGTERM when the process that started the probe dies (a killed benchmark)."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        raise SystemExit(1)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _die_with_parent()
    if args.cmd == "send":
        if args.size < MIN_PAYLOAD:
            raise SystemExit(f"--size: at least {MIN_PAYLOAD} bytes")
        pps = args.pps if args.pps else pps_for_mbps(args.mbps, args.size)
        print(json.dumps(send(args.dst, args.port, args.size, pps, args.count, args.burst)))
        return 0
    rx = Receiver(args.port)
    print("ready", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        rx.run(args.max_time)
    rx.rec.write(args.out)
    print(json.dumps({"received": len(rx.rec), "rcvbuf_drops": rx.overflows}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
