"""Raw Ethernet frames in and out of a testbed host: send the fuzz generator's frames on an
interface, paced, and capture what arrives on another (run inside the hosts' namespaces).

    python -m mpsched.bench.framecap send --iface h1-eth0 --seed 1 --count 10000 --rate 2000 \
        --out sent.json
    python -m mpsched.bench.framecap capture --iface h2-eth0 --out got.bin  # until SIGTERM

`send` writes {"sent", "skipped", "kinds"} (frames shorter than an Ethernet header cannot go
out on a veth: skipped, and others sent in their place). `capture` keeps the frames arriving
on the interface (not the ones the host sends) in a file of length-prefixed records that
`read_frames` reads back.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import struct
import sys
import time
from collections import Counter
from pathlib import Path

from mpsched.testing.fuzz import frames
from mpsched.testing.ipv4frames import ETH_LEN

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
RECORD = struct.Struct("!I")


def send(iface: str, seed: int, count: int, rate: float) -> dict:
    """Send `count` frames of the generator's seed `seed` at `rate` frames/s (paced, no
    bursts); the frames too short for a veth are skipped and others drawn in their place."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    kinds: Counter[str] = Counter()
    sent = skipped = 0
    next_at = time.monotonic()
    for kind, frame in frames(seed, count + count // 10 + 16):
        if sent == count:
            break
        if len(frame) < ETH_LEN:
            skipped += 1
            continue
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            next_at = time.monotonic()  # fell behind: go on from now, never catch up in a burst
        sock.send(frame)
        kinds[kind] += 1
        sent += 1
        next_at += 1.0 / rate
    sock.close()
    return {"sent": sent, "skipped": skipped, "kinds": dict(kinds)}


def capture(iface: str, out: Path, max_seconds: float) -> int:
    """Record the frames arriving on `iface` until SIGTERM/SIGINT or `max_seconds`."""
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    sock.bind((iface, 0))
    sock.settimeout(0.1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    n = 0
    deadline = time.monotonic() + max_seconds
    with out.open("wb") as f:
        while not stopping and time.monotonic() < deadline:
            try:
                data, addr = sock.recvfrom(65535)
            except TimeoutError:
                continue
            if addr[2] == PACKET_OUTGOING:
                continue
            f.write(RECORD.pack(len(data)) + data)
            n += 1
    sock.close()
    return n


def read_frames(path: Path) -> list[bytes]:
    """The frames a `capture` recorded."""
    data = path.read_bytes()
    out, i = [], 0
    while i + RECORD.size <= len(data):
        (n,) = RECORD.unpack_from(data, i)
        out.append(data[i + RECORD.size : i + RECORD.size + n])
        i += RECORD.size + n
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mpsched.bench.framecap", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = p.add_subparsers(dest="role", required=True)
    s = sub.add_parser("send", help="send the fuzz generator's frames")
    s.add_argument("--iface", required=True)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--count", type=int, default=10_000)
    s.add_argument("--rate", type=float, default=2000.0, help="frames per second")
    s.add_argument("--out", type=Path, required=True, help="JSON summary")
    c = sub.add_parser("capture", help="record the frames arriving on an interface")
    c.add_argument("--iface", required=True)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--max-seconds", type=float, default=600.0)
    args = p.parse_args(argv)
    if args.role == "send":
        if args.count < 0 or args.rate <= 0:
            p.error("--count must be >= 0 and --rate > 0")
        args.out.write_text(json.dumps(send(args.iface, args.seed, args.count, args.rate)))
    else:
        capture(args.iface, args.out, args.max_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
