"""What the two Mininet testbeds share: the two-edge `Testbed` (src/mpsched/topo/testbed.py) and the
`FabricTestbed` (src/mpsched/topo/fabric_testbed.py).

`Bed` is the life cycle: a context manager whose `stop()` runs on exit, on an exception and
on Ctrl-C, a cleanup `Registry` (src/mpsched/proc/cleanup.py) recording every process and link it
starts (so `mpsched cleanup` removes what a killed owner left), the link emulators' schedules,
and the port and host preparation both topologies need (offloads off, IPv6 off, the path
MTU on switch-to-switch links, static ARP for the hosts' gateway). Unless told
`p4rt_plaintext`, the switches serve P4Runtime over TLS with client authentication, with
certificates of a CA the testbed makes when it starts and removes when it stops, or, the
owner killed, the next sweep (its directory is in the registry; src/mpsched/proc/labtls.py;
docs/security.md, "Local users").
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from mininet.log import setLogLevel
from mininet.net import Mininet

from mpsched.emu.params import LinkParams
from mpsched.emu.schedule import Event, LinkScheduler
from mpsched.p4rt.pipeline import program_probe_port
from mpsched.proc.bmv2 import ServerTls
from mpsched.proc.cleanup import Registry, sweep
from mpsched.proc.labtls import LabTls
from mpsched.proc.layout import p4_artifacts

from .bmv2_switch import Bmv2MininetSwitch
from .emulink import CoreBridge, choose_backend

log = logging.getLogger(__name__)

OFFLOADS = ["rx", "tx", "sg", "tso", "gso", "gro"]

# MTU of every interface on the links between switches (switch ports, linkem node ports,
# core bridges and their ports): the path tag (24 bytes, docs/fabric-dataplane.md) is added to the
# hosts' 1500-byte MTU frames, and a veth drops frames above its MTU (+ Ethernet header).
# Host links keep 1500.
PATH_MTU = 1600


def disable_offloads(run: Callable[[str], Any], iface: str) -> None:
    """Veth TX checksum offload hands BMv2 packets it cannot fix: turn offloads off."""
    args = []
    for feature in OFFLOADS:
        args += [feature, "off"]
    run(f"ethtool -K {iface} {' '.join(args)} >/dev/null 2>&1")


def on_switch_link(intf: Any, hosts: list) -> bool:
    """Whether a switch interface is on a link between switches (its peer is no host)."""
    link = intf.link
    if link is None:
        return False
    peer = link.intf2 if link.intf1 is intf else link.intf1
    return peer.node not in hosts


def sh(cmd: str) -> None:
    """A command line in the root namespace; its failure is not an error (best effort)."""
    subprocess.run(cmd, shell=True, check=False)


def resolve_probe_port(given: int | None) -> int | None:
    """The switches' probe port: `given`, else the compiled program's (its P4Info's @ports;
    None when it has none)."""
    return given if given is not None else program_probe_port(p4_artifacts().p4info)


@dataclass(frozen=True)
class Schedule:
    """One direction's schedule of one emulated link: `label` names it in errors."""

    label: str
    link: Any  # an emulated link: set(direction, params)
    direction: str
    base: LinkParams
    events: tuple[Event, ...]


class Bed:
    """A Mininet testbed's life cycle (module docstring). Subclasses build the network in
    `start()` and keep their emulated links in `links`."""

    def __init__(self, backend: str, log_dir: Path, p4rt_plaintext: bool = False) -> None:
        self.backend = choose_backend(backend)
        self.p4rt_plaintext = p4rt_plaintext
        self.tls: LabTls | None = None  # the switches' certificates, once started
        self.registry = Registry()
        self.net: Mininet | None = None
        self.log_dir = log_dir
        self.netcfg_path = log_dir / "netcfg.json"
        self.links: dict[Any, Any] = {}
        self.schedulers: list[LinkScheduler] = []

    def __enter__(self) -> Bed:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        raise NotImplementedError

    # ---- construction -------------------------------------------------

    def new_net(self) -> Mininet:
        """A fresh, empty Mininet (after sweeping what killed runs left)."""
        for line in sweep():
            log.info("cleaned up a previous run: %s", line)
        setLogLevel("warning")
        self.net = Mininet(build=False, controller=None, autoSetMacs=False, autoStaticArp=False)
        return self.net

    def open_tls(self) -> None:
        """The testbed's CA and the controller's certificate (module docstring), unless
        P4Runtime is to be plaintext."""
        if not self.p4rt_plaintext:
            tls = LabTls.under(self.log_dir)
            # recorded before it exists: `mpsched cleanup` removes it if this run is killed
            self.registry.add_dir(tls.dir)
            self.tls = tls.create()

    def switch_tls(self, name: str) -> ServerTls | None:
        """How switch `name` serves P4Runtime: over TLS with its own certificate once
        `open_tls` made the CA, else (None) in plaintext."""
        return self.tls.switch(name) if self.tls is not None else None

    def description_tls(self) -> dict[str, str] | None:
        """The network description's top-level `tls`: the controller's way to the switches
        (None: plaintext)."""
        return self.tls.description() if self.tls is not None else None

    def prepare_switch_ports(self, net: Mininet) -> None:
        """After `net.build()`: every switch interface recorded for cleanup, offloads and
        IPv6 off, PATH_MTU on the links between switches."""
        for sw in net.switches:
            for intf in sw.intfList():
                if intf.name == "lo":
                    continue
                self.registry.add_link(intf.name)
                disable_offloads(sh, intf.name)
                sh(f"sysctl -qw net.ipv6.conf.{intf.name}.disable_ipv6=1")
                if on_switch_link(intf, net.hosts):
                    sh(f"ip link set dev {intf.name} mtu {PATH_MTU}")

    def record_nodes(self, nodes: Iterable[Any]) -> None:
        """The nodes' shells in the registry (a killed owner leaves them running)."""
        for node in nodes:
            self.registry.add_process(node.pid)

    def after_start(self, net: Mininet) -> None:
        """After `net.start()`: PATH_MTU on core bridges."""
        for sw in net.switches:
            if isinstance(sw, CoreBridge):
                sh(f"ip link set dev {sw.bridge} mtu {PATH_MTU}")

    @staticmethod
    def prepare_host(host: Any, arp: list[tuple[str, str]]) -> None:
        """IPv6 and offloads off; `arp`, (address, MAC) pairs, as static ARP entries on
        every interface (the edge switch answers no ARP: its gateway address at least)."""
        host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        for intf in host.intfList():
            if intf.name != "lo":
                disable_offloads(host.cmd, intf.name)
                for ip, mac in arp:
                    host.cmd(f"arp -i {intf.name} -s {ip} {mac}")

    # ---- run-time -------------------------------------------------------

    def hosts(self) -> dict[int, list[str]]:
        """{edge id: the names of the hosts behind it}: where workloads run."""
        raise NotImplementedError

    def host_ip(self, name: str) -> str:
        """A host's (primary) address."""
        raise NotImplementedError

    def host(self, name: str) -> Any:
        assert self.net is not None, "the testbed is not started"
        return self.net.get(name)

    def bmv2_switches(self) -> list[Bmv2MininetSwitch]:
        if self.net is None:
            return []
        return [s for s in self.net.switches if isinstance(s, Bmv2MininetSwitch)]

    def dead_bmv2(self) -> list[str]:
        """Names of the BMv2 switches whose process has died."""
        return [s.name for s in self.bmv2_switches() if not s.bmv2 or not s.bmv2.alive()]

    def link_label(self, key: Any, link: Any) -> str:
        """The name a link emulator goes by (CPU roles, errors): its node's."""
        return str(link.name)

    def emulator_pids(self) -> dict[str, int]:
        """linkem's PID per link emulator (`link_label`); none with netem (no process)."""
        out = {}
        for key, link in list(self.links.items()):
            em = getattr(link, "linkem", None)
            if em is not None:
                out[self.link_label(key, link)] = em.pid
        return out

    def run_schedules(
        self, schedules: Iterable[Schedule], horizon_s: float,
        on_error: Callable[[Exception], None] | None = None,
    ) -> None:
        """Run the given schedules from now for `horizon_s` seconds."""
        t0 = time.monotonic()
        for s in schedules:
            if not s.events:
                continue
            sched = LinkScheduler(
                s.label, s.base, list(s.events),
                partial(s.link.set, s.direction),
                horizon_s, on_error,
            )  # fmt: skip
            sched.start_at(t0)
            self.schedulers.append(sched)

    def stop_schedules(self) -> None:
        for sched in self.schedulers:
            sched.stop()
        for sched in self.schedulers:
            sched.join(timeout=2)
        self.schedulers.clear()

    def _interrupt_hosts(self) -> None:
        """Stop commands still running in host shells (e.g. iperf3 at Ctrl-C)."""
        assert self.net is not None
        for host in self.net.hosts:
            if not host.waiting:
                continue
            host.sendInt()
            deadline = time.monotonic() + 3
            while host.waiting and time.monotonic() < deadline:
                host.monitor(timeoutms=200)
            host.waiting = False

    def stop(self) -> None:
        try:
            self.stop_schedules()
            self._close_links()  # before Mininet deletes the interfaces under the emulators
            if self.net is not None:
                try:
                    self._interrupt_hosts()
                    self.net.stop()
                except Exception:
                    log.exception("Mininet stop failed; cleaning up what the registry recorded")
                self.net = None
            self._close_links()
        finally:
            self.registry.close()
            if self.tls is not None:
                self.tls.remove()
                self.tls = None

    def _close_links(self) -> None:
        for link in self.links.values():
            try:
                link.close()
            except Exception:
                log.exception("closing a link emulator failed")
        self.links = {}
