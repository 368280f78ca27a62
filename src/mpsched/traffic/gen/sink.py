"""The `sink` role: the TCP/MPTCP (and optional UDP) receiver of every sender role.

Per connection its bytes; every SAMPLE_S the bytes received in all (`total`) and, with
`--peers`, per peer address (`peers`: a fabric's goodput per pair of edges). A header of
length > 0 is answered with one byte after its last data byte (the sender's FCT ends there).
Once its ports are open it prints `listening on port <port>` (`READY`): the lab runner starts
the senders then (src/mpsched/lab/ready.py), not after a guess of how long a start takes.
"""

from __future__ import annotations

import argparse
import logging
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from mpsched.traffic.gen.base import CHUNK, HEADER, SAMPLE_S, Stopper, tcp_socket

log = logging.getLogger(__name__)

READY = "listening on"  # as tcpdump says it once its capture is open: one marker for both


@dataclass
class Conn:
    peer: str
    start: float
    bytes: int = 0
    end: float | None = None


def _by_peer(conns: list[Conn]) -> dict[str, int]:
    """Bytes received so far per peer address (the port left out)."""
    out: dict[str, int] = {}
    for c in conns:
        address = c.peer.rsplit(":", 1)[0]
        out[address] = out.get(address, 0) + c.bytes
    return out


def _recv_exact(sock: socket.socket, n: int, stop: Stopper) -> bytes | None:
    buf = b""
    while len(buf) < n and not stop.done():
        try:
            data = sock.recv(n - len(buf))
        except TimeoutError:
            continue
        if not data:
            return None
        buf += data
    return buf if len(buf) == n else None


class Sink:
    """The receiver's state, shared by its accept loop, its connections' threads, the sampler
    and the UDP counter (under `lock`)."""

    def __init__(self, args: argparse.Namespace, stop: Stopper) -> None:
        self.args = args
        self.stop = stop
        self.conns: list[Conn] = []
        self.total: list[tuple[float, int]] = []
        self.peers: dict[str, list[tuple[float, int]]] = {}
        self.lock = threading.Lock()
        self.udp = {"packets": 0, "bytes": 0}

    def run(self) -> dict[str, Any]:
        """Accept until stopped; the report."""
        server = self._listen()
        if self.args.udp_port:
            usock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            usock.bind((self.args.bind, self.args.udp_port))
            threading.Thread(target=self._serve_udp, args=(usock,), daemon=True).start()
        print(f"{READY} port {self.args.port}", flush=True)  # the runner waits for it
        threading.Thread(target=self._sample, daemon=True).start()
        while not self.stop.done():
            try:
                sock, peer = server.accept()
            except TimeoutError:
                continue
            conn = Conn(f"{peer[0]}:{peer[1]}", time.time())
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self._serve, args=(sock, conn), daemon=True).start()
        server.close()
        with self.lock:
            self._sample_peers(time.time())  # a last sample: what arrived after the previous one
            return {
                "role": "sink",
                "connections": [c.__dict__ for c in self.conns],
                "total": self.total,
                **({"peers": self.peers} if self.args.peers else {}),
                "udp": self.udp,
            }

    def _listen(self) -> socket.socket:
        """An MPTCP listener (it takes plain TCP too), TCP where the kernel has no MPTCP."""
        try:
            server = tcp_socket(True)
        except OSError:
            server = tcp_socket(False)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((self.args.bind, self.args.port))
        server.listen(512)
        server.settimeout(0.2)
        return server

    def _serve(self, sock: socket.socket, conn: Conn) -> None:
        with sock:
            sock.settimeout(1.0)
            try:
                header = _recv_exact(sock, HEADER.size, self.stop)
                if header is None:
                    return
                (size,) = HEADER.unpack(header)
                self._receive(sock, conn, size)
            except OSError as exc:
                log.debug("connection from %s: %s", conn.peer, exc)
            finally:
                conn.end = time.time()

    def _receive(self, sock: socket.socket, conn: Conn, size: int) -> None:
        """Count the data; after `size` bytes (0: until EOF) answer one byte."""
        while not self.stop.done():
            try:
                data = sock.recv(CHUNK)
            except TimeoutError:
                continue
            if not data:
                break
            with self.lock:
                conn.bytes += len(data)
            if size and conn.bytes >= size:
                sock.sendall(b"\x01")
                break

    def _sample_peers(self, now: float) -> None:
        for address, got in _by_peer(self.conns).items() if self.args.peers else ():
            self.peers.setdefault(address, []).append((now, got))

    def _sample(self) -> None:
        while not self.stop.wait(SAMPLE_S):
            now = time.time()
            with self.lock:
                self.total.append((now, sum(c.bytes for c in self.conns)))
                self._sample_peers(now)

    def _serve_udp(self, usock: socket.socket) -> None:
        usock.settimeout(0.2)
        while not self.stop.done():
            try:
                data = usock.recv(65535)
            except TimeoutError:
                continue
            self.udp["packets"] += 1
            self.udp["bytes"] += len(data)


def role_sink(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    """Receive until stopped (see the module's docstring)."""
    return Sink(args, stop).run()
