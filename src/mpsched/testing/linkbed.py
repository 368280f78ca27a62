"""Two network namespaces joined through linkem, for tests and benchmarks of the emulator.

    ns1: x (10.200.0.1/24) <-veth-> A ~~ linkem ~~ B <-veth-> y (10.200.0.2/24) :ns2

A and B stay in the root namespace (linkem runs there), without addresses and
without IPv6, so the only frames crossing linkem are the test's own (static
neighbour entries: no ARP either). Offloads are off on all four ends, so frames
are at most MTU-sized and carry full checksums. Direction `ab` of linkem is
ns1 -> ns2.

Names carry the owner's PID (unique per process, at most 15 characters).
`LinkBed` is a context manager that removes everything it made, also on an
exception or Ctrl-C. If the owner is killed instead, its linkem exits on
stdin EOF, `mpsched cleanup` deletes the recorded veths, and the next
`LinkBed` deletes namespaces left by owners that are gone.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mpsched.emu.linkem import Linkem
from mpsched.emu.params import LinkParams
from mpsched.proc.cleanup import Registry, alive, sweep
from mpsched.testing.udpprobe import Records

log = logging.getLogger(__name__)

ADDR1 = "10.200.0.1"
ADDR2 = "10.200.0.2"
PREFIX_LEN = 24
OFFLOADS = ("rx", "tx", "sg", "tso", "gso", "gro")
NS_RE = re.compile(r"^lkns(\d+)-\d+[12]$")
PROBE_PORT = 5001

_serial = itertools.count()


@dataclass(frozen=True)
class BedNames:
    ns1: str
    ns2: str
    x: str  # in ns1
    a: str  # root namespace, linkem's --a
    b: str  # root namespace, linkem's --b
    y: str  # in ns2

    @classmethod
    def for_owner(cls, pid: int, serial: int) -> BedNames:
        tag = f"{pid}-{serial}"
        return cls(f"lkns{tag}1", f"lkns{tag}2", f"lkx{tag}", f"lkA{tag}", f"lkB{tag}",
                   f"lky{tag}")


@dataclass
class ProbeResult:
    """One UDP probe run from ns1 to ns2: the sender's and receiver's summaries, the records."""

    sent: dict
    received: dict
    records: Records
    linkem_cpu_s: float
    wall_s: float


def _run(argv: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip() or result.returncode}")
    return result


def sweep_stale_namespaces() -> list[str]:
    """Delete namespaces named by this module for owners that no longer run."""
    out = _run(["ip", "netns", "list"], check=False).stdout
    gone = []
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = NS_RE.match(name)
        if m and not alive(int(m.group(1))):
            _run(["ip", "netns", "delete", name], check=False)
            gone.append(name)
    return gone


def ns_argv(ns: str, argv: Sequence[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def process_cpu_s(pid: int) -> float:
    """utime + stime of a process, in seconds (from /proc/<pid>/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class LinkBed:
    """ns1 - linkem - ns2 on veths; `linkem` is the running emulator."""

    def __init__(
        self, seed: int = 0, registry: Registry | None = None, binary: Path | None = None,
    ) -> None:
        self.seed = seed
        self.binary = binary
        self.names = BedNames.for_owner(os.getpid(), next(_serial))
        self._own_registry = registry is None
        self.registry = registry or Registry()
        self.linkem: Linkem | None = None
        self._namespaces: list[str] = []
        self._links: list[str] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="linkbed-")

    # ---------------------------------------------------------------- set-up

    def open(self) -> LinkBed:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def _build(self) -> None:
        n = self.names
        sweep()
        for name in sweep_stale_namespaces():
            log.info("deleted stale namespace %s", name)
        for ns in (n.ns1, n.ns2):
            _run(["ip", "netns", "add", ns])
            self._namespaces.append(ns)
        for root_end, ns, peer in ((n.a, n.ns1, n.x), (n.b, n.ns2, n.y)):
            _run(["ip", "link", "add", root_end, "type", "veth", "peer", "name", peer,
                  "netns", ns])
            self._links.append(root_end)
            self.registry.add_link(root_end)
        self._configure_end(None, n.a)
        self._configure_end(None, n.b)
        self._configure_end(n.ns1, n.x, f"{ADDR1}/{PREFIX_LEN}")
        self._configure_end(n.ns2, n.y, f"{ADDR2}/{PREFIX_LEN}")
        self._neighbour(n.ns1, n.x, ADDR2, self._mac(n.ns2, n.y))
        self._neighbour(n.ns2, n.y, ADDR1, self._mac(n.ns1, n.x))
        self.linkem = Linkem.start(n.a, n.b, seed=self.seed, registry=self.registry,
                                   binary=self.binary)

    def _in(self, ns: str | None, argv: Sequence[str]) -> list[str]:
        return ns_argv(ns, argv) if ns else list(argv)

    def _configure_end(self, ns: str | None, iface: str, addr: str | None = None) -> None:
        _run(self._in(ns, ["sysctl", "-qw", f"net.ipv6.conf.{iface}.disable_ipv6=1"]))
        offloads = [w for f in OFFLOADS for w in (f, "off")]
        _run(self._in(ns, ["ethtool", "-K", iface, *offloads]), check=False)
        if addr:
            _run(self._in(ns, ["ip", "addr", "add", addr, "dev", iface]))
            _run(self._in(ns, ["ip", "link", "set", "lo", "up"]))
        _run(self._in(ns, ["ip", "link", "set", iface, "up"]))

    def _mac(self, ns: str, iface: str) -> str:
        out = _run(ns_argv(ns, ["ip", "-j", "link", "show", "dev", iface])).stdout
        return json.loads(out)[0]["address"]

    def _neighbour(self, ns: str, iface: str, addr: str, mac: str) -> None:
        _run(ns_argv(ns, ["ip", "neigh", "replace", addr, "lladdr", mac, "dev", iface,
                          "nud", "permanent"]))

    # ---------------------------------------------------------------- tear-down

    def close(self) -> None:
        """Remove what was made; each step runs even if another fails."""
        if self.linkem is not None:
            with contextlib.suppress(Exception):
                self.linkem.close()
            self.linkem = None
        for name in self._links:
            _run(["ip", "link", "delete", name], check=False)
            self.registry.forget_link(name)
        self._links.clear()
        for ns in self._namespaces:
            _run(["ip", "netns", "delete", ns], check=False)
        self._namespaces.clear()
        if self._own_registry:
            self.registry.close()
        self._tmp.cleanup()

    def __enter__(self) -> LinkBed:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- use

    @property
    def em(self) -> Linkem:
        if self.linkem is None:
            raise RuntimeError("LinkBed is not open")
        return self.linkem

    def restart(self, seed: int | None = None) -> Linkem:
        """Replace the running linkem by a fresh one (default parameters, given seed)."""
        if seed is not None:
            self.seed = seed
        self.em.close()
        self.linkem = None
        self.linkem = Linkem.start(self.names.a, self.names.b, seed=self.seed,
                                   registry=self.registry, binary=self.binary)
        return self.linkem

    def set_both(self, params: LinkParams) -> None:
        self.em.set("ab", params)
        self.em.set("ba", params)

    def wait_idle(self, timeout: float = 5.0) -> None:
        """Until linkem holds no frames in either direction."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.em.stats()
            if s["ab"]["queued"] == 0 and s["ba"]["queued"] == 0:
                return
            time.sleep(0.02)
        raise TimeoutError("linkem still holds frames")

    def ping(self, count: int = 5, interval: float = 0.05, wait_s: float = 1.0) -> list[float]:
        """RTTs (ms) of the echo replies ns1 got from ns2; lost ones are missing."""
        argv = ["ping", "-n", "-c", str(count), "-i", f"{interval:g}", "-W", f"{wait_s:g}",
                ADDR2]
        out = _run(ns_argv(self.names.ns1, argv), check=False).stdout
        return [float(m) for m in re.findall(r"time=([\d.]+) ms", out)]

    def probe(
        self, *, pps: float, count: int, size: int = 1000, drain_s: float = 0.3,
        burst: int | None = None, port: int = PROBE_PORT,
    ) -> ProbeResult:
        """Send `count` UDP datagrams from ns1 to ns2 at `pps`; wait `drain_s` after the
        last one; return what arrived."""
        out = Path(self._tmp.name) / f"rec-{port}-{time.monotonic_ns()}.bin"
        python = [sys.executable, "-m", "mpsched.testing.udpprobe"]
        recv = subprocess.Popen(
            ns_argv(self.names.ns2, [*python, "recv", "--port", str(port), "--out", str(out)]),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            if recv.stdout is None or recv.stdout.readline().strip() != "ready":
                raise RuntimeError(f"udp receiver did not start: {recv.stderr.read()}")
            send_argv = [*python, "send", "--dst", ADDR2, "--port", str(port), "--size",
                         str(size), "--pps", f"{pps:.6f}", "--count", str(count)]
            if burst is not None:
                send_argv += ["--burst", str(burst)]
            cpu0, t0 = process_cpu_s(self.em.pid), time.monotonic()
            sent = json.loads(_run(ns_argv(self.names.ns1, send_argv)).stdout)
            time.sleep(drain_s)
            cpu1, t1 = process_cpu_s(self.em.pid), time.monotonic()
            summary, err = recv.communicate("stop\n", timeout=30)
            if recv.returncode != 0:
                raise RuntimeError(f"udp receiver failed: {err.strip()}")
            return ProbeResult(sent, json.loads(summary), Records.read(out), cpu1 - cpu0,
                               t1 - t0)
        finally:
            if recv.poll() is None:
                recv.kill()
                recv.wait()
            out.unlink(missing_ok=True)
