"""What every traffic role shares: the stop signal, TCP/MPTCP sockets, TCP_INFO, the report
file, and the wire protocol's header (see the package's docstring)."""

from __future__ import annotations

import json
import signal
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

IPPROTO_MPTCP = 262
HEADER = struct.Struct("!Q")
CHUNK = 64 * 1024
SAMPLE_S = 0.25


def tcp_socket(mptcp: bool) -> socket.socket:
    """A TCP socket, or an MPTCP one (kernel MPTCP, protocol 262) when asked."""
    if mptcp:
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    return socket.socket(socket.AF_INET, socket.SOCK_STREAM)


def tcp_info(sock: socket.socket) -> dict[str, float] | None:
    """rtt/retransmission figures of a socket from TCP_INFO (None if unavailable)."""
    from mpsched.lab.tcpstats import tcp_info as read_tcp_info

    try:
        info = read_tcp_info(sock)
    except (OSError, ValueError):
        return None
    return {
        "rtt_ms": info.rtt / 1000,
        "rttvar_ms": info.rttvar / 1000,
        "total_retrans": info.total_retrans,
    }


class Stopper:
    """Set by SIGTERM/SIGINT or a deadline; roles poll it."""

    def __init__(self, seconds: float | None) -> None:
        self.event = threading.Event()
        self.deadline = time.monotonic() + seconds if seconds else None
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.event.set())

    def done(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.event.set()
        return self.event.is_set()

    def wait(self, seconds: float) -> bool:
        if self.deadline is not None:
            seconds = max(0.0, min(seconds, self.deadline - time.monotonic()))
        self.event.wait(seconds)
        return self.done()


def write_report(path: str, report: dict[str, Any]) -> None:
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(report))
    tmp.replace(path)
