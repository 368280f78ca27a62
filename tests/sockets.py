"""The kernel's socket tables (/proc/net/{tcp,tcp6,udp,udp6}): which addresses a port is
bound to, and a UDP socket's receive queue and drops, without touching the socket (a probe
connection would be counted by the server under test); in this network namespace or in a
process's (/proc/PID/net: a server started in a Mininet host's), and a wait for a server to
listen there."""

from __future__ import annotations

import ipaddress
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.waiting import wait_until

TCP_LISTEN = "0A"  # include/net/tcp_states.h TCP_LISTEN


@dataclass(frozen=True)
class SockRow:
    address: str
    port: int
    state: str
    rx_queue: int
    drops: int  # UDP only (last column); 0 for TCP
    inode: int


def _address(hexaddr: str) -> str:
    raw = bytes.fromhex(hexaddr)
    # the kernel prints each 32-bit word of the address in host byte order
    words = struct.unpack(f"<{len(raw) // 4}I", raw)
    address = ipaddress.ip_address(struct.pack(f">{len(words)}I", *words))
    # an IPv6 socket bound to an IPv4 address shows it mapped (::ffff:127.0.0.1)
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped or address)


def rows(proto: str, pid: int | None = None) -> list[SockRow]:
    """Every socket of `proto` ("tcp" or "udp", IPv4 and IPv6) in this network namespace, or
    in process `pid`'s."""
    out = []
    for name in (proto, proto + "6"):
        path = Path(f"/proc/{pid or 'self'}/net/{name}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            f = line.split()
            addr, port = f[1].split(":")
            rx = int(f[4].split(":")[1], 16)
            drops = int(f[12]) if proto == "udp" and len(f) > 12 else 0
            out.append(SockRow(_address(addr), int(port, 16), f[3], rx, drops, int(f[9])))
    return out


def tcp_listeners(port: int, pid: int | None = None) -> set[str]:
    """The addresses a TCP socket listens on at `port` (empty: nothing listens), in this
    network namespace or in process `pid`'s."""
    return {r.address for r in rows("tcp", pid) if r.port == port and r.state == TCP_LISTEN}


def udp_bound(port: int, pid: int | None = None) -> list[SockRow]:
    """The UDP sockets bound to `port`, in this network namespace or in process `pid`'s."""
    return [r for r in rows("udp", pid) if r.port == port]


def wait_listening(server: subprocess.Popen, port: int, udp: bool = False,
                   timeout: float = 30.0) -> None:
    """Until TCP `port` (and UDP `port` too when `udp`) is open in `server`'s network
    namespace: a server started a moment ago is ready for its clients. Fails naming the
    port when the server exits first or `timeout` s pass."""

    def ready() -> bool:
        if server.poll() is not None:
            raise AssertionError(f"the server for port {port} exited ({server.returncode}) "
                                 "before it listened")
        return bool(tcp_listeners(port, server.pid)) and (not udp or
                                                           bool(udp_bound(port, server.pid)))

    wait_until(ready, timeout=timeout, interval=0.05,
               what=f"a server listening on port {port}" + (" (TCP and UDP)" if udp else ""))


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets process `pid` holds open."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes

