"""UDP-heavy roles: `cbr` (constant bit rate) and `vbr` (Pareto on/off with the papers'
packet-size mix, a share of it over TCP)."""

from __future__ import annotations

import argparse
import contextlib
import random
import socket
import time
from typing import Any

from mpsched.traffic.gen.base import HEADER, Stopper
from mpsched.traffic.gen.sender import PORT_TRIES, SOURCE_PORTS, connect, port_rng

PACKET_MIX = ((44, 0.49), (576, 0.012), (628, 0.021), (1300, 0.017), (1500, 0.46))


def pareto(rng: random.Random, shape: float, mean: float) -> float:
    """A Pareto sample with the given shape and mean (scale = mean*(shape-1)/shape)."""
    return rng.paretovariate(shape) * mean * (shape - 1) / shape


def role_vbr(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    rng = random.Random(args.seed)
    sizes, weights = zip(*PACKET_MIX, strict=True)
    mean_size = sum(s * w for s, w in PACKET_MIX) / sum(weights)
    duty = args.on_ms / (args.on_ms + args.off_ms)
    peak_pps = args.rate_mbps * 1e6 / 8 / mean_size / duty
    sent = {"tcp_packets": 0, "udp_packets": 0, "bytes": 0, "on_periods": 0}
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        tcp = connect(args, rng=port_rng(args.seed, 0))
        tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        tcp.sendall(HEADER.pack(0))
        tcp.setblocking(False)
    except OSError as exc:
        return {"role": "vbr", "error": f"connect {args.dst}:{args.port}: {exc}"}
    while not stop.done():
        on_end = time.monotonic() + pareto(rng, args.shape, args.on_ms / 1000)
        sent["on_periods"] += 1
        next_send = time.monotonic()
        while time.monotonic() < on_end and not stop.done():
            size = rng.choices(sizes, weights)[0]
            try:
                if rng.random() * 100 < args.tcp_pct:
                    tcp.send(b"\0" * max(1, size - 40))
                    sent["tcp_packets"] += 1
                else:
                    udp.sendto(b"\0" * max(1, size - 28), (args.dst, args.udp_port))
                    sent["udp_packets"] += 1
                sent["bytes"] += size
            except (BlockingIOError, OSError):
                pass  # a full TCP buffer or no route: the packet is not sent, as in a real source
            next_send += rng.expovariate(peak_pps)
            delay = next_send - time.monotonic()
            if delay > 0:
                stop.wait(delay)
        stop.wait(pareto(rng, args.shape, args.off_ms / 1000))
    tcp.close()
    return {"role": "vbr", "sent": sent}


def role_cbr(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    """Constant-bit-rate UDP: `--flows` flows (seeded source ports), each sending datagrams
    of `--size` payload bytes, `--rate-mbps` (IP bits) in all."""
    socks = []
    for k in range(args.flows):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if args.flows > 1 or args.seed:
            rng = port_rng(args.seed, k)
            for _ in range(PORT_TRIES):
                try:
                    sock.bind(("0.0.0.0", rng.randrange(*SOURCE_PORTS)))
                    break
                except OSError:
                    continue
        socks.append(sock)
    payload = b"\0" * args.size
    interval = (args.size + 28) * 8 / (args.rate_mbps * 1e6)
    sent = 0
    next_send = time.monotonic()
    while not stop.done():
        # no route / buffer full: the datagram is lost, as on a real host
        with contextlib.suppress(OSError):
            socks[sent % len(socks)].sendto(payload, (args.dst, args.udp_port))
        sent += 1
        next_send += interval
        delay = next_send - time.monotonic()
        if delay > 0:
            stop.wait(delay)
    return {"role": "cbr", "sent": {"udp_packets": sent, "bytes": sent * args.size}}
