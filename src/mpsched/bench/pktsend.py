"""Send one Ethernet frame on an interface for a while, paced or as fast as possible.

`python -m mpsched.bench.pktsend --iface IF --frame HEX --seconds S [--rate PPS]`; prints the
number of frames sent. Runs in its own process so that it has a core of its own. With
`--rate`, frame k leaves at start + k / rate (busy-waiting between frames); a sender that fell
more than `MAX_LAG_S` behind its schedule (descheduled) drops the missed slots instead of
sending them as a burst, so the offered load never exceeds the rate by more than a few frames
and the caller compares the number sent with the rate to see whether it kept up.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time

MAX_LAG_S = 0.001


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mpsched.bench.pktsend", description=__doc__)
    p.add_argument("--iface", required=True)
    p.add_argument("--frame", required=True, help="the frame, hex")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--rate", type=float, default=0.0, help="frames/s; 0: as fast as possible")
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.rate < 0:
        p.error("--seconds must be > 0 and --rate >= 0")
    frame = bytes.fromhex(args.frame)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((args.iface, 0))
    sent = 0
    clock = time.perf_counter
    deadline = clock() + args.seconds
    if args.rate == 0:
        while clock() < deadline:
            for _ in range(256):
                try:
                    sock.send(frame)
                    sent += 1
                except BlockingIOError:
                    pass
    else:
        interval = 1.0 / args.rate
        due = clock()
        while True:
            now = clock()
            if now >= deadline:
                break
            if now >= due:
                try:
                    sock.send(frame)
                    sent += 1
                except BlockingIOError:
                    pass
                due += interval
                if now - due > MAX_LAG_S:
                    due = now
    print(sent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
