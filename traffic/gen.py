"""Traffic sources and sinks that run inside the testbed's hosts.

`python -m mpsched.traffic.gen <role> …` (the runner starts these in the
hosts' namespaces; every role writes one JSON report to `--out` when it ends,
also on SIGTERM/SIGINT). Times in reports are wall-clock seconds (the
namespaces share one clock).

Roles:
  sink    TCP/MPTCP (and optional UDP) receiver: per-connection bytes over time
          (and per peer address with `--peers`).
  bulk    long-lived streams for `--seconds`.
  files   transfers of given sizes (cycled, shuffled), Poisson arrivals: FCT.
  poisson open-loop Poisson arrivals at a given offered load, sizes drawn from
          a published data-centre CDF (`flowsizes.py`: web search, data
          mining): FCT per flow.
  plan    open-loop flows of a given schedule, each to its own destination
          (`--flows FILE`: a fabric's host sends to hosts behind other edges,
          mpsched/lab/fabric_workload.py): FCT per flow.
  flows   closed-loop many-flow load: `--flows` connections each sending
          `--size-kb`, again and again.
  cbr     constant-bit-rate UDP.
  vbr     Pareto on/off source with the papers' packet-size mix, a share over
          TCP (TCP_NODELAY, one write per packet) and the rest over UDP.

Open loop (files, poisson): every flow starts in a thread of its own at its
arrival time, and its FCT counts from that arrival to the sink's reply. An
explicit `--concurrency N` (files) / `--max-concurrent N` (poisson) bounds
the flows in progress: a flow arriving while N are running waits for a slot,
and the wait is part of its FCT (`wait_s` says how long); 0, the default, is
no bound.

Flows connect from source ports drawn from a generator seeded with `--seed`,
so a run's 5-tuples (and so the path a hash gives each flow) repeat with the seed.

Wire protocol (TCP): the client sends an 8-byte big-endian length (0 = until
EOF), then the data; for a length > 0 the sink answers one byte after the
last one, which ends the client's flow completion time.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpsched.traffic import flowsizes

log = logging.getLogger("mpsched.traffic.gen")

IPPROTO_MPTCP = 262
HEADER = struct.Struct("!Q")
CHUNK = 64 * 1024
SAMPLE_S = 0.25
SOURCE_PORTS = (20_000, 60_000)
PORT_TRIES = 20
CONNECT_TIMEOUT_S = 15.0  # a SYN lost in a full queue costs 1 s, two 3 s, ...
PACKET_MIX = ((44, 0.49), (576, 0.012), (628, 0.021), (1300, 0.017), (1500, 0.46))


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


# ---- sink ------------------------------------------------------------------------


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


def role_sink(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    """Per connection its bytes; every SAMPLE_S the bytes received in all (`total`) and, with
    `--peers`, per peer address (`peers`: a fabric's goodput per pair of edges)."""
    conns: list[Conn] = []
    total: list[tuple[float, int]] = []
    peers: dict[str, list[tuple[float, int]]] = {}
    lock = threading.Lock()
    udp = {"packets": 0, "bytes": 0}
    try:
        server = tcp_socket(True)
    except OSError:
        server = tcp_socket(False)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((args.bind, args.port))
    server.listen(512)
    server.settimeout(0.2)

    def serve(sock: socket.socket, conn: Conn) -> None:
        with sock:
            sock.settimeout(1.0)
            try:
                header = _recv_exact(sock, HEADER.size, stop)
                if header is None:
                    return
                (size,) = HEADER.unpack(header)
                while not stop.done():
                    try:
                        data = sock.recv(CHUNK)
                    except TimeoutError:
                        continue
                    if not data:
                        break
                    with lock:
                        conn.bytes += len(data)
                    if size and conn.bytes >= size:
                        sock.sendall(b"\x01")
                        break
            except OSError as exc:
                log.debug("connection from %s: %s", conn.peer, exc)
            finally:
                conn.end = time.time()

    def sample() -> None:
        while not stop.wait(SAMPLE_S):
            now = time.time()
            with lock:
                total.append((now, sum(c.bytes for c in conns)))
                for address, got in _by_peer(conns).items() if args.peers else ():
                    peers.setdefault(address, []).append((now, got))

    def serve_udp() -> None:
        usock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        usock.bind((args.bind, args.udp_port))
        usock.settimeout(0.2)
        while not stop.done():
            try:
                data = usock.recv(65535)
            except TimeoutError:
                continue
            udp["packets"] += 1
            udp["bytes"] += len(data)

    threading.Thread(target=sample, daemon=True).start()
    if args.udp_port:
        threading.Thread(target=serve_udp, daemon=True).start()
    while not stop.done():
        try:
            sock, peer = server.accept()
        except TimeoutError:
            continue
        conn = Conn(f"{peer[0]}:{peer[1]}", time.time())
        with lock:
            conns.append(conn)
        threading.Thread(target=serve, args=(sock, conn), daemon=True).start()
    server.close()
    with lock:
        now = time.time()  # a last sample: what arrived after the previous one
        for address, got in _by_peer(conns).items() if args.peers else ():
            peers.setdefault(address, []).append((now, got))
        return {
            "role": "sink",
            "connections": [c.__dict__ for c in conns],
            "total": total,
            **({"peers": peers} if args.peers else {}),
            "udp": udp,
        }


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


# ---- senders ---------------------------------------------------------------------


def port_rng(seed: int, flow: int) -> random.Random:
    """The source-port generator of flow number `flow` of a role seeded with `seed`."""
    return random.Random(seed * 100_003 + flow)


def _connect(
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
            sock = _connect(args, rng=port_rng(args.seed, n))
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


def _transfer(
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
        with _connect(args, timeout=CONNECT_TIMEOUT_S, rng=rng, stop=stop) as sock:
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


def open_loop(
    args: argparse.Namespace,
    stop: Stopper,
    arrivals: Iterable[tuple[float, int] | tuple[float, int, str]],
    max_concurrent: int = 0,
    until_s: float | None = None,
) -> list[dict[str, Any]]:
    """Start one flow per `(arrival s after now, size bytes)` at its arrival, each in a thread
    of its own, until `until_s` (or the deadline); returns the flows' records in arrival
    order. `max_concurrent` > 0 bounds the flows in progress: a flow that arrives while that
    many run waits for a slot inside its own thread (later arrivals are not held back), and
    its FCT includes the wait. Each record has `arrival` (wall-clock time of its arrival).
    An arrival `(s, size, dst)` goes to address `dst` instead of `--dst` (its record says
    `dst`)."""
    slots = threading.Semaphore(max_concurrent) if max_concurrent > 0 else None
    records: list[dict[str, Any]] = []
    threads = []
    t0 = time.monotonic()
    wall0 = time.time()

    def one(size: int, flow: int, arrival: float, rec: dict[str, Any]) -> None:
        to = args if "dst" not in rec else argparse.Namespace(**{**vars(args), "dst": rec["dst"]})
        if slots is not None:
            while not slots.acquire(timeout=0.2):
                if stop.done():
                    rec.update(wait_s=time.monotonic() - arrival, incomplete=True)
                    return
        try:
            rec.update(_transfer(to, size, stop, port_rng(args.seed, flow), arrival))
        finally:
            if slots is not None:
                slots.release()

    for flow, (at, size, *dst) in enumerate(arrivals):
        if until_s is not None and at >= until_s:
            break
        if stop.wait(max(0.0, t0 + at - time.monotonic())):
            break
        rec: dict[str, Any] = {"arrival": wall0 + at, "size": size}
        if dst:
            rec["dst"] = dst[0]
        records.append(rec)
        t = threading.Thread(target=one, args=(size, flow, t0 + at, rec), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(timeout=max(0.0, (stop.deadline or time.monotonic()) - time.monotonic()) + 1)
    return [dict(r) for r in records]


def role_files(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    rng = random.Random(args.seed)
    sizes = [int(s) * 1000 for s in args.sizes_kb.split(",")]
    plan = [sizes[i % len(sizes)] for i in range(args.count)]
    rng.shuffle(plan)
    arrivals = []
    at = 0.0
    for size in plan:
        at += rng.expovariate(1000.0 / args.interarrival_ms)
        arrivals.append((at, size))
    results = open_loop(args, stop, arrivals, args.concurrency)
    return {"role": "files", "transfers": results, "planned": len(plan)}


def role_poisson(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    dist = flowsizes.distribution(args.sizes, args.max_kb * 1000, args.scale)
    arrivals = flowsizes.poisson_arrivals(random.Random(args.seed), dist, args.rate_mbps)
    results = open_loop(args, stop, arrivals, args.max_concurrent, args.arrivals_s)
    return {
        "role": "poisson",
        "transfers": results,
        "planned": len(results),
        "sizes": args.sizes,
        "rate_mbps": args.rate_mbps,
        "mean_size": dist.mean(),
    }


def read_flows(path: str) -> list[tuple[float, int, str]]:
    """A `plan` role's schedule: the JSON file's ``flows``, each ``[at_s, dst, size]``."""
    doc = json.loads(Path(path).read_text())
    return [(float(at), int(size), str(dst)) for at, dst, size in doc["flows"]]


def role_plan(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    flows = read_flows(args.flows)
    results = open_loop(args, stop, flows, args.max_concurrent)
    return {"role": "plan", "transfers": results, "planned": len(flows)}


def role_flows(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def loop(k: int) -> None:
        rng = port_rng(args.seed, k)
        while not stop.done():
            rec = _transfer(args, args.size_kb * 1000, stop, rng)
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
        tcp = _connect(args, rng=port_rng(args.seed, 0))
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


ROLES: dict[str, Callable[[argparse.Namespace, Stopper], dict[str, Any]]] = {
    "cbr": role_cbr,
    "sink": role_sink,
    "bulk": role_bulk,
    "files": role_files,
    "poisson": role_poisson,
    "plan": role_plan,
    "flows": role_flows,
    "vbr": role_vbr,
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.traffic.gen",
        description="Traffic roles run inside testbed hosts; each writes a JSON report to --out.",
    )
    sub = p.add_subparsers(dest="role", required=True)

    def common(sp: argparse.ArgumentParser, client: bool = True) -> None:
        sp.add_argument("--out", required=True, help="JSON report written at the end")
        sp.add_argument("--port", type=int, required=True, help="TCP port of the sink")
        sp.add_argument("--seconds", type=float, default=None, help="stop after this long")
        if client:
            sp.add_argument("--dst", required=True, help="sink address")
            sp.add_argument("--mptcp", action="store_true", help="use kernel MPTCP (proto 262)")
            sp.add_argument("--seed", type=int, default=0)

    sp = sub.add_parser("sink", help="receiver")
    common(sp, client=False)
    sp.add_argument("--bind", default="0.0.0.0")
    sp.add_argument("--udp-port", type=int, default=0, help="also count UDP on this port")
    sp.add_argument("--peers", action="store_true",
                    help="also sample the bytes received per peer address")
    sp = sub.add_parser("bulk", help="long-lived streams")
    common(sp)
    sp.add_argument("--streams", type=int, default=1)
    sp = sub.add_parser("files", help="file transfers (FCT)")
    common(sp)
    sp.add_argument("--sizes-kb", required=True, help="comma-separated sizes in kB")
    sp.add_argument("--count", type=int, required=True)
    sp.add_argument(
        "--concurrency",
        type=int,
        default=0,
        help="at most this many flows in progress, later arrivals wait (0: no bound)",
    )
    sp.add_argument("--interarrival-ms", type=float, default=100.0, help="mean (exponential)")
    sp = sub.add_parser("poisson", help="open-loop Poisson arrivals, published size CDF (FCT)")
    common(sp)
    sp.add_argument("--sizes", required=True, choices=sorted(flowsizes.DISTRIBUTIONS))
    sp.add_argument(
        "--rate-mbps",
        type=float,
        required=True,
        help="offered load: application Mbit/s (arrival rate = rate / mean size)",
    )
    sp.add_argument(
        "--max-kb",
        type=float,
        default=flowsizes.DEFAULT_MAX_BYTES / 1000,
        help="sizes above are censored to this (default: %(default)g)",
    )
    sp.add_argument("--scale", type=float, default=1.0, help="sizes are multiplied by this")
    sp.add_argument(
        "--max-concurrent",
        type=int,
        default=0,
        help="at most this many flows in progress, later arrivals wait (0: no bound)",
    )
    sp.add_argument(
        "--arrivals-s",
        type=float,
        default=None,
        help="no arrivals after this many seconds (default: until --seconds)",
    )
    sp = sub.add_parser("plan", help="open-loop flows of a schedule, each to its destination")
    common(sp)
    sp.add_argument("--flows", required=True,
                    help="JSON file: {\"flows\": [[at_s, dst address, size bytes], ...]}")
    sp.add_argument(
        "--max-concurrent",
        type=int,
        default=0,
        help="at most this many flows in progress, later arrivals wait (0: no bound)",
    )
    sp = sub.add_parser("flows", help="many concurrent closed-loop flows")
    common(sp)
    sp.add_argument("--flows", type=int, required=True)
    sp.add_argument("--size-kb", type=int, required=True)
    sp = sub.add_parser("cbr", help="constant-bit-rate UDP")
    common(sp)
    sp.add_argument("--udp-port", type=int, required=True)
    sp.add_argument("--rate-mbps", type=float, required=True, help="IP-level rate")
    sp.add_argument("--size", type=int, default=1200, help="UDP payload bytes")
    sp.add_argument("--flows", type=int, default=1, help="flows (source ports), round robin")
    sp = sub.add_parser("vbr", help="Pareto on/off cross traffic with the papers' packet mix")
    common(sp)
    sp.add_argument("--udp-port", type=int, required=True)
    sp.add_argument("--rate-mbps", type=float, required=True, help="long-run mean rate")
    sp.add_argument("--shape", type=float, default=1.5, help="Pareto shape of on/off periods")
    sp.add_argument("--on-ms", type=float, default=500.0, help="mean on period")
    sp.add_argument("--off-ms", type=float, default=500.0, help="mean off period")
    sp.add_argument("--tcp-pct", type=float, default=90.0, help="share of packets over TCP")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    stop = Stopper(args.seconds)
    started = time.time()
    try:
        report = ROLES[args.role](args, stop)
    except Exception as exc:  # the runner reads the error from the report
        log.exception("role %s failed", args.role)
        report = {"role": args.role, "error": repr(exc)}
    report.update({"started": started, "ended": time.time()})
    write_report(args.out, report)
    return 1 if "error" in report else 0


if __name__ == "__main__":
    sys.exit(main())
