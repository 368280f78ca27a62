"""The walking-skeleton testbed: h1 - s1 =(path 1..n)= s2 - h2.

Each path is a veth link between the two edge switches, shaped with HTB to
its rate in both directions with HTB and a bounded pfifo (this kernel has no netem).
`Testbed` is a context manager: whatever it started is stopped on exit, on an
exception and on Ctrl-C; if the process itself is killed, `mpsched cleanup`
(or the next run) removes the leftovers recorded in its registry.
"""

from __future__ import annotations

import logging
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from mininet.link import Link
from mininet.log import setLogLevel
from mininet.net import Mininet

from mpsched.cleanup import Registry, sweep
from mpsched.layout import build_dir
from mpsched.netcfg import HostCfg, NetCfg, PathCfg, SwitchCfg

from .bmv2_switch import Bmv2MininetSwitch

log = logging.getLogger(__name__)

OFFLOADS = ["rx", "tx", "sg", "tso", "gso", "gro"]


@dataclass(frozen=True)
class TopoSpec:
    """Path rates in Mbit/s (one entry per path, ids 1..n) and the HTB queue per path."""

    path_rates_mbps: tuple[float, ...] = (10.0, 5.0)
    queue_packets: int = 100
    log_dir: Path = field(default_factory=lambda: build_dir() / "logs")


def _mac(subnet: int, host: int) -> str:
    return f"00:00:0a:00:{subnet:02x}:{host:02x}"


def disable_offloads(run, iface: str) -> None:
    """Veth TX checksum offload hands BMv2 packets it cannot fix: turn offloads off."""
    args = []
    for feature in OFFLOADS:
        args += [feature, "off"]
    run(f"ethtool -K {iface} {' '.join(args)} >/dev/null 2>&1")


def shape(iface: str, rate_mbps: float, queue_packets: int) -> None:
    """HTB at `rate_mbps` with a `queue_packets` FIFO on one direction of a path.

    Mininet's TCLink puts the queue limit into netem, which this kernel lacks;
    HTB and pfifo are all that is needed for rate and a bounded queue.
    """
    rate = f"{rate_mbps:g}mbit"
    for cmd in (
        f"tc qdisc replace dev {iface} root handle 1: htb default 1",
        f"tc class add dev {iface} parent 1: classid 1:1 htb rate {rate} ceil {rate}",
        f"tc qdisc add dev {iface} parent 1:1 handle 10: pfifo limit {queue_packets}",
    ):
        result = subprocess.run(cmd.split(), capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"{cmd}: {result.stderr.strip()}")


class Testbed:
    def __init__(self, spec: TopoSpec | None = None) -> None:
        self.spec = spec or TopoSpec()
        if not 1 <= len(self.spec.path_rates_mbps) <= 4:
            raise ValueError("between 1 and 4 paths")
        self.registry = Registry()
        self.net: Mininet | None = None
        self.netcfg: NetCfg | None = None
        self.netcfg_path = self.spec.log_dir / "netcfg.json"

    def __enter__(self) -> Testbed:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        for line in sweep():
            log.info("cleaned up a previous run: %s", line)
        setLogLevel("warning")
        spec = self.spec
        net = Mininet(build=False, controller=None, autoSetMacs=False, autoStaticArp=False)
        self.net = net
        switches = []
        for n in (1, 2):
            switches.append(
                net.addSwitch(
                    f"s{n}",
                    cls=Bmv2MininetSwitch,
                    device_id=n,
                    registry=self.registry,
                    log_dir=spec.log_dir,
                )
            )
        hosts = [
            net.addHost(
                f"h{n}", ip=f"10.0.{n}.1/24", mac=_mac(n, 1), defaultRoute=f"via 10.0.{n}.254"
            )
            for n in (1, 2)
        ]
        for n in (0, 1):
            net.addLink(hosts[n], switches[n], port1=0, port2=1, cls=Link)
        path_links = [
            net.addLink(switches[0], switches[1], port1=i + 1, port2=i + 1, cls=Link)
            for i in range(1, len(spec.path_rates_mbps) + 1)
        ]
        net.build()
        for sw in switches:
            for intf in sw.intfList():
                if intf.name != "lo":
                    self.registry.add_link(intf.name)
                    disable_offloads(
                        lambda c: subprocess.run(c, shell=True, check=False), intf.name
                    )
        for link, rate in zip(path_links, spec.path_rates_mbps, strict=True):
            for intf in (link.intf1, link.intf2):
                shape(intf.name, rate, spec.queue_packets)
        for node in hosts + switches:
            self.registry.add_process(node.pid)
        net.start()
        for n, host in enumerate(hosts, start=1):
            disable_offloads(host.cmd, host.defaultIntf().name)
            host.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
            host.cmd(f"arp -s 10.0.{n}.254 {_mac(n, 0xfe)}")
        self.netcfg = NetCfg(
            switches=tuple(
                SwitchCfg(
                    name=sw.name,
                    device_id=sw.device_id,
                    grpc_address=sw.bmv2.grpc_address,
                    mac=_mac(n, 0xFE),
                    subnets=(f"10.0.{n}.0/24",),
                    hosts=(HostCfg(hosts[n - 1].name, f"10.0.{n}.1", _mac(n, 1), 1),),
                    paths=tuple(
                        PathCfg(i, i + 1, rate)
                        for i, rate in enumerate(spec.path_rates_mbps, start=1)
                    ),
                )
                for n, sw in enumerate(switches, start=1)
            )
        )
        self.netcfg.dump(self.netcfg_path)

    def host(self, name: str):
        return self.net.get(name)

    def dead_switches(self) -> list[str]:
        """Names of switches whose BMv2 process has died."""
        return [s.name for s in self.net.switches if not s.bmv2 or not s.bmv2.alive()]

    def _interrupt_hosts(self) -> None:
        """Stop commands still running in host shells (e.g. iperf3 at Ctrl-C)."""
        for host in self.net.hosts:
            if not host.waiting:
                continue
            host.sendInt()
            deadline = time.monotonic() + 3
            while host.waiting and time.monotonic() < deadline:
                host.monitor(timeoutms=200)
            host.waiting = False

    def stop(self) -> None:
        if self.net is not None:
            self._interrupt_hosts()
            try:
                self.net.stop()
            except Exception:
                log.exception("Mininet stop failed; cleaning up what the registry recorded")
            self.net = None
        self.registry.close()
