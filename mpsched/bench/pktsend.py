"""Send one Ethernet frame as fast as possible on an interface for a while (a load generator).

`python -m mpsched.bench.pktsend --iface IF --frame HEX --seconds S`; prints the number of
frames sent. Runs in its own process so that it has a core of its own.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mpsched.bench.pktsend", description=__doc__)
    p.add_argument("--iface", required=True)
    p.add_argument("--frame", required=True, help="the frame, hex")
    p.add_argument("--seconds", type=float, default=5.0)
    args = p.parse_args(argv)
    frame = bytes.fromhex(args.frame)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((args.iface, 0))
    sent = 0
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline:
        for _ in range(256):
            try:
                sock.send(frame)
                sent += 1
            except BlockingIOError:
                pass
    print(sent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
