"""TCP/MPTCP senders: connecting from seeded source ports, one flow of a given size with its
flow completion time (the open-loop roles start many, `openloop.py`), and the `bulk`
(long-lived streams) and `flows` (closed-loop, again and again) roles."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import random
import select
import socket
import threading
import time
from typing import Any

from mpsched.traffic.gen.base import CHUNK, HEADER, SAMPLE_S, Stopper, tcp_info, tcp_socket

SOURCE_PORTS = (20_000, 60_000)
PORT_TRIES = 20
CONNECT_TIMEOUT_S = 15.0  # a SYN lost in a full queue costs 1 s, two 3 s, ...


def port_rng(seed: int, flow: int) -> random.Random:
    """The source-port generator of flow number `flow` of a role seeded with `seed`."""
    return random.Random(seed * 100_003 + flow)


def connect(
    args: argparse.Namespace,
    timeout: float = 5.0,
    rng: random.Random | None = None,
    stop: Stopper | None = None,
) -> socket.socket:
    """Connect to the sink, from a source port drawn from `rng` when given.

    Seeded source ports make a run's 5-tuples, and so hash-based path choices,
    the same in every run with the same seed (a port in use is skipped: the
    next draw is taken). Without `rng` the kernel picks the port. The wait for
    the handshake (lost SYNs are retried by the kernel after 1, 3, 7 s) ends at
    `timeout` or when `stop` is set.
    """
    last: OSError | None = None
    for _ in range(PORT_TRIES if rng is not None else 1):
        sock = tcp_socket(args.mptcp)
        try:
            if rng is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind(("0.0.0.0", rng.randrange(*SOURCE_PORTS)))
            _handshake(sock, (args.dst, args.port), timeout, stop)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
            if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL):
                raise
    raise last or OSError("no source port")


def _handshake(
    sock: socket.socket, address: tuple[str, int], timeout: float, stop: Stopper | None
) -> None:
    sock.setblocking(False)
    err = sock.connect_ex(address)
    deadline = time.monotonic() + timeout
    while err in (errno.EINPROGRESS, errno.EALREADY):
        _, writable, _ = select.select([], [sock], [], 0.2)
        if writable:
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            break
        if time.monotonic() >= deadline or (stop is not None and stop.done()):
            raise TimeoutError(f"connect to {address[0]}:{address[1]} timed out")
    if err:
        raise OSError(err, os.strerror(err))
    sock.setblocking(True)
    sock.settimeout(timeout)


def role_bulk(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    streams: list[dict[str, Any]] = []
    socks: list[socket.socket] = []
    payload = b"\0" * CHUNK

    def run(sock: socket.socket, rec: dict[str, Any]) -> None:
        try:
            sock.sendall(HEADER.pack(0))
            sock.settimeout(0.5)
            while not stop.done():
                try:
                    rec["bytes"] += sock.send(payload)
                except TimeoutError:
                    continue
        except OSError as exc:
            rec["error"] = str(exc)

    for n in range(args.streams):
        try:
            sock = connect(args, rng=port_rng(args.seed, n))
        except OSError as exc:
            return {"role": "bulk", "error": f"connect {args.dst}:{args.port}: {exc}"}
        socks.append(sock)
        streams.append({"bytes": 0, "rtt_ms": [], "start": time.time()})
    threads = [
        threading.Thread(target=run, args=(s, r), daemon=True)
        for s, r in zip(socks, streams, strict=True)
    ]
    for t in threads:
        t.start()
    while not stop.wait(SAMPLE_S):
        for sock, rec in zip(socks, streams, strict=True):
            info = tcp_info(sock)
            if info:
                rec["rtt_ms"].append(info["rtt_ms"])
    for t in threads:
        t.join(timeout=2)
    for sock, rec in zip(socks, streams, strict=True):
        info = tcp_info(sock)
        rec["retrans"] = info["total_retrans"] if info else None
        rec["end"] = time.time()
        with contextlib.suppress(OSError):
            sock.close()
    return {"role": "bulk", "streams": streams}


def transfer(
    args: argparse.Namespace,
    size: int,
    stop: Stopper,
    rng: random.Random,
    arrival: float | None = None,
) -> dict[str, Any]:
    """One flow of `size` bytes; its FCT runs from `arrival` (a time.monotonic(); default:
    now) to the sink's reply, so time spent waiting before connect() counts."""
    t0 = time.monotonic() if arrival is None else arrival
    rec: dict[str, Any] = {"size": size, "start": time.time()}
    if arrival is not None:
        rec["wait_s"] = max(0.0, time.monotonic() - arrival)
    try:
        with connect(args, timeout=CONNECT_TIMEOUT_S, rng=rng, stop=stop) as sock:
            sock.settimeout(1.0)  # short waits: the deadline is checked between them
            sock.sendall(HEADER.pack(size))
            left = size
            chunk = b"\0" * min(CHUNK, size)
            while left > 0 and not stop.done():
                try:
                    left -= sock.send(chunk[: min(len(chunk), left)])
                except TimeoutError:
                    continue
            while not stop.done():
                try:
                    if sock.recv(1):
                        rec["fct_s"] = time.monotonic() - t0
                    else:
                        rec["error"] = "the sink closed without a reply"
                    break
                except TimeoutError:
                    continue
            if "fct_s" not in rec and "error" not in rec:
                rec["incomplete"] = True  # still running at the deadline
            info = tcp_info(sock)
            if info:
                rec["rtt_ms"] = info["rtt_ms"]
                rec["retrans"] = info["total_retrans"]
    except OSError as exc:
        rec["error"] = str(exc)
    return rec


def role_flows(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def loop(k: int) -> None:
        rng = port_rng(args.seed, k)
        while not stop.done():
            rec = transfer(args, args.size_kb * 1000, stop, rng)
            with lock:
                results.append(rec)
            if "error" in rec:
                stop.wait(0.2)

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(args.flows)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, (stop.deadline or time.monotonic()) - time.monotonic()) + 3)
    with lock:
        return {"role": "flows", "transfers": list(results)}
