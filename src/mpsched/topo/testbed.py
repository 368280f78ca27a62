"""The testbed: h1 - s1 =(path 1..n, emulated)= s2 - h2, plus optional cross-traffic hosts.

Every path is an emulated link (src/mpsched/topo/emulink.py: linkem on kernels without
netem, netem elsewhere) with its own delay, jitter, loss, rate, queue and
time schedule per direction; `forward` is s1 -> s2. Hosts: h1 (edge 1, 10.0.1.0/24,
behind s1) and h2 (edge 2, 10.0.2.0/24, behind s2; the plan: src/mpsched/addressing.py), each
with `host_addresses` addresses (for MPTCP) on `host_interfaces` interfaces: address k lives on
interface min(k, host_interfaces) - 1, so a single-homed host carries all of
them on eth0, and a multi-homed one has one link to its edge switch per
address (source-address policy routing picks the interface). A path with cross traffic gets a host
x<i> on s1 and y<i> on s2 whose addresses are pinned to that path.

`Testbed` is a context manager: whatever it started is stopped on exit, on an
exception and on Ctrl-C; if the process itself is killed, `mpsched cleanup`
(or the next run) removes the leftovers recorded in its registry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mininet.link import Link
from mininet.net import Mininet

from mpsched import addressing as ap
from mpsched.emu.params import LinkParams
from mpsched.emu.segment import MAX_PATHS, PathSpec
from mpsched.netcfg import HostCfg, NetCfg, PathCfg, PinCfg, SwitchCfg, TlsCfg
from mpsched.proc.layout import build_dir

from .bed import PATH_MTU, Bed, Schedule, resolve_probe_port
from .bmv2_switch import Bmv2MininetSwitch
from .emulink import CoreBridge, LinkemNode, NetemOnLink

__all__ = ["PATH_MTU", "PathSpec", "Testbed", "TopoSpec"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TopoSpec:
    """The whole testbed. `backend`: auto | linkem | netem; `seed` seeds the emulators."""

    paths: tuple[PathSpec, ...] = (
        PathSpec(LinkParams(rate_mbps=10.0), LinkParams(rate_mbps=10.0)),
        PathSpec(LinkParams(rate_mbps=5.0), LinkParams(rate_mbps=5.0)),
    )
    backend: str = "auto"
    seed: int = 0
    host_addresses: int = 1
    host_interfaces: int = 1
    log_dir: Path = field(default_factory=lambda: build_dir() / "logs")
    # the switches' probe port (a veth to the controller for its probes); None: the compiled
    # program's (its P4Info's @ports), if it has one
    probe_port: int | None = None

    @classmethod
    def from_rates(cls, rates: tuple[float, ...], queue_packets: int = 100, **kw: Any) -> TopoSpec:
        """Paths that differ only in rate (both directions), as the demo uses."""
        paths = tuple(
            PathSpec(
                LinkParams(rate_mbps=r, queue_packets=queue_packets),
                LinkParams(rate_mbps=r, queue_packets=queue_packets),
            )
            for r in rates
        )
        return cls(paths=paths, **kw)


class Testbed(Bed):
    """h1 - s1 =(paths)= s2 - h2 (module docstring); `links` by (path id, segment).
    `p4rt_plaintext`: P4Runtime in plaintext without client authentication
    (src/mpsched/topo/bed.py)."""

    def __init__(self, spec: TopoSpec | None = None, p4rt_plaintext: bool = False) -> None:
        spec = spec or TopoSpec()
        self.spec = spec
        if not 1 <= len(self.spec.paths) <= MAX_PATHS:
            raise ValueError(f"paths: between 1 and {MAX_PATHS} paths")
        if not 1 <= self.spec.host_addresses <= 8:
            raise ValueError("host_addresses: between 1 and 8")
        if not 1 <= self.spec.host_interfaces <= min(4, self.spec.host_addresses):
            raise ValueError("host_interfaces: between 1 and min(4, host_addresses)")
        super().__init__(spec.backend, spec.log_dir, p4rt_plaintext)
        self.netcfg: NetCfg | None = None

    def __enter__(self) -> Testbed:
        super().__enter__()
        return self

    # ---- construction -------------------------------------------------

    def _hosts(self, net: Mininet) -> dict[str, Any]:
        hosts = {
            f"h{n}": net.addHost(
                f"h{n}", ip=f"{ap.host_ip(n)}/{ap.PREFIX_LEN}", mac=ap.host_mac(n),
                defaultRoute=f"via {ap.gateway_ip(n)}",
            )
            for n in ap.EDGES
        }
        for i, path in enumerate(self.spec.paths, start=1):
            if path.cross_traffic:
                for n, prefix in ((1, "x"), (2, "y")):
                    hosts[f"{prefix}{i}"] = net.addHost(
                        f"{prefix}{i}",
                        ip=f"{ap.cross_host_ip(n, i)}/{ap.PREFIX_LEN}",
                        mac=ap.cross_host_mac(n, i),
                        defaultRoute=f"via {ap.gateway_ip(n)}",
                    )
        return hosts

    def start(self) -> None:
        spec = self.spec
        net = self.new_net()
        probe_port = resolve_probe_port(spec.probe_port)
        self.open_tls()
        switches = [
            net.addSwitch(
                f"s{n}",
                cls=Bmv2MininetSwitch,
                device_id=n,
                registry=self.registry,
                log_dir=spec.log_dir,
                probe_port=probe_port,
                tls=self.switch_tls(f"s{n}"),
            )
            for n in (1, 2)
        ]
        hosts = self._hosts(net)
        net.addLink(hosts["h1"], switches[0], port1=0, port2=1, cls=Link)
        net.addLink(hosts["h2"], switches[1], port1=0, port2=1, cls=Link)
        for i, path in enumerate(spec.paths, start=1):
            self._add_path(net, switches, i, path)
        next_port = len(spec.paths) + 2
        cross_ports: dict[str, int] = {}
        for name, host in hosts.items():
            if name[0] in "xy":
                sw = switches[0] if name[0] == "x" else switches[1]
                net.addLink(host, sw, port1=0, port2=next_port, cls=Link)
                cross_ports[name] = next_port
                if name[0] == "y":
                    next_port += 1
        self.host_ports = {(1, 0): 1, (2, 0): 1}
        for j in range(1, spec.host_interfaces):
            for n in (1, 2):
                net.addLink(
                    hosts[f"h{n}"], switches[n - 1], port1=j, port2=next_port,
                    addr1=ap.host_if_mac(n, j), cls=Link,
                )  # fmt: skip
                self.host_ports[(n, j)] = next_port
            next_port += 1
        net.build()
        if self.backend == "netem":
            self.links = {key: NetemOnLink(link) for key, link in self.links.items()}
        self.prepare_switch_ports(net)
        for i, path in enumerate(spec.paths, start=1):
            for k, seg in enumerate(path.segments()):
                self.links[(i, k)].set("ab", seg.forward)
                self.links[(i, k)].set("ba", seg.reverse)
        self.record_nodes([*hosts.values(), *switches])
        net.start()
        self.after_start(net)
        for name, host in hosts.items():
            n = 1 if name == "h1" or name.startswith("x") else 2
            self.prepare_host(host, [(ap.gateway_ip(n), ap.router_mac(n))])
        for n in (1, 2):
            self._addresses(hosts[f"h{n}"], n)
        self.netcfg = self._netcfg(switches, hosts, cross_ports)
        self.netcfg.dump(self.netcfg_path)

    def _add_path(self, net: Mininet, switches: list, i: int, path: PathSpec) -> None:
        """s1 port i+1 ... s2 port i+1: one emulated link, or two joined by core switch c<i>."""
        port = i + 1
        ends: list[tuple[Any, int]] = [(switches[0], port)]
        if path.core is not None:
            ends.append((net.addSwitch(f"c{i}", cls=CoreBridge, registry=self.registry), 1))
        ends.append((switches[1], port))
        for k in range(len(ends) - 1):
            (left, lport), (right, rport) = ends[k], ends[k + 1]
            if right.name.startswith("c"):
                rport = 1
            if left.name.startswith("c"):
                lport = 2
            if self.backend == "linkem":
                name = f"e{i}" if k == 0 else f"f{i}"
                seed = self.spec.seed * 1000 + i + 100 * k
                emu = net.addSwitch(name, cls=LinkemNode, seed=seed, registry=self.registry)
                net.addLink(left, emu, port1=lport, port2=1, cls=Link)
                net.addLink(emu, right, port1=2, port2=rport, cls=Link)
                self.links[(i, k)] = emu
            else:
                self.links[(i, k)] = net.addLink(left, right, port1=lport, port2=rport)

    def host_address(self, n: int, k: int) -> tuple[str, str]:
        """(address, interface) of address k (1-based) of host h<n>."""
        idx = min(k, self.spec.host_interfaces) - 1
        return ap.host_ip(n, k), f"h{n}-eth{idx}"

    def _addresses(self, host: Any, n: int) -> None:
        """Extra addresses; per extra interface, a routing table chosen by source address."""
        for k in range(2, self.spec.host_addresses + 1):
            ip, dev = self.host_address(n, k)
            host.cmd(f"ip addr add {ip}/{ap.PREFIX_LEN} dev {dev}")
        if self.spec.host_interfaces > 1:
            host.cmd("sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0")
            host.cmd("sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2")
        for j in range(1, self.spec.host_interfaces):
            ip, dev = self.host_address(n, j + 1)
            host.cmd(f"sysctl -qw net.ipv4.conf.{dev}.rp_filter=0")
            host.cmd(f"ip route add {ap.subnet(n)} dev {dev} src {ip} table {100 + j}")
            host.cmd(f"ip route add default via {ap.gateway_ip(n)} dev {dev} table {100 + j}")
        for k in range(2, self.spec.host_addresses + 1):
            ip, dev = self.host_address(n, k)
            j = int(dev.rsplit("eth", 1)[1])
            if j:
                host.cmd(f"ip rule add from {ip} table {100 + j}")

    def _netcfg(self, switches: list, hosts: dict[str, Any], cross_ports: dict[str, int]) -> NetCfg:
        spec = self.spec
        cfgs = []
        for n, sw in enumerate(switches, start=1):
            local = []
            for k in range(1, spec.host_addresses + 1):
                idx = min(k, spec.host_interfaces) - 1
                mac = ap.host_mac(n) if idx == 0 else ap.host_if_mac(n, idx)
                local.append(HostCfg(f"h{n}", ap.host_ip(n, k), mac, self.host_ports[(n, idx)]))
            prefix = "x" if n == 1 else "y"
            other = 2 if n == 1 else 1
            pins = []
            for i, path in enumerate(spec.paths, start=1):
                if path.cross_traffic:
                    local.append(
                        HostCfg(
                            f"{prefix}{i}",
                            ap.cross_host_ip(n, i),
                            ap.cross_host_mac(n, i),
                            cross_ports[f"{prefix}{i}"],
                        )
                    )
                    pins.append(PinCfg(f"{ap.cross_host_ip(other, i)}/32", i))
            cfgs.append(
                SwitchCfg(
                    name=sw.name,
                    device_id=sw.device_id,
                    grpc_address=sw.bmv2.grpc_address,
                    mac=ap.router_mac(n),
                    subnets=(ap.subnet(n),),
                    hosts=tuple(local),
                    paths=tuple(
                        PathCfg(i, i + 1, p.rate_at(0.0) or None)
                        for i, p in enumerate(spec.paths, start=1)
                    ),
                    pins=tuple(pins),
                    probe_iface=sw.probe_iface,
                )
            )
        tls = self.description_tls()
        return NetCfg(switches=tuple(cfgs), tls=TlsCfg(tls["ca_cert"], tls["cert"], tls["key"])
                      if tls else None)

    # ---- run-time -------------------------------------------------------

    def hosts(self) -> dict[int, list[str]]:
        """{edge id: the names of the hosts behind it}: h1 and the x<i> behind s1 (edge 1),
        h2 and the y<i> behind s2 (edge 2)."""
        cross = [i for i, p in enumerate(self.spec.paths, start=1) if p.cross_traffic]
        return {1: ["h1", *(f"x{i}" for i in cross)], 2: ["h2", *(f"y{i}" for i in cross)]}

    def host_ip(self, name: str) -> str:
        """A host's primary address."""
        edge = 1 if name == "h1" or name.startswith("x") else 2
        if name in ("h1", "h2"):
            return ap.host_ip(edge)
        return ap.cross_host_ip(edge, int(name[1:]))

    def enable_mptcp(self, subflows: int) -> None:
        """Kernel MPTCP on h1 and h2 for connections of up to `subflows` subflows: the
        path manager's limits, and h1's addresses 2..subflows as subflow endpoints (each
        connection from h1 opens one MP_JOIN subflow from each)."""
        if not 1 <= subflows <= self.spec.host_addresses:
            raise ValueError(f"subflows: between 1 and host_addresses ({self.spec.host_addresses})")
        for name in ("h1", "h2"):
            host = self.host(name)
            host.cmd("sysctl -qw net.mptcp.enabled=1")
            host.cmd(f"ip mptcp limits set subflows {subflows} add_addr_accepted {subflows}")
        h1 = self.host("h1")
        for k in range(2, subflows + 1):
            ip, dev = self.host_address(1, k)
            h1.cmd(f"ip mptcp endpoint add {ip} dev {dev} subflow")

    def set_path(
        self, path_id: int, direction: str, params: LinkParams, segment: int = 0
    ) -> None:
        """Change one direction (`ab` = forward, `ba` = reverse) of a path's link now
        (`segment` 1 is the core link of a path with a core switch)."""
        self.links[(path_id, segment)].set(direction, params)

    def link_stats(self) -> dict[int, dict]:
        """Per path, the counters of the link that delivers to s2 (the last segment)."""
        out: dict[int, dict] = {}
        for (i, _k), link in sorted(self.links.items()):
            out[i] = link.stats()  # a core segment comes after, and overwrites, the first
        return out

    def segment_stats(self) -> dict[str, dict]:
        """Counters of every emulated link: `path<i>` and `path<i>-core`."""
        return {
            f"path{i}{'-core' if k else ''}": link.stats()
            for (i, k), link in sorted(self.links.items())
        }

    def start_schedules(
        self, horizon_s: float, on_error: Callable[[Exception], None] | None = None
    ) -> None:
        """Run every path's schedules from now for `horizon_s` seconds."""
        schedules = []
        for (i, k), link in self.links.items():
            seg = self.spec.paths[i - 1].segments()[k]
            label = f"path{i}{'-core' if k else ''}"
            schedules += [
                Schedule(f"{label}-ab", link, "ab", seg.forward, seg.forward_events),
                Schedule(f"{label}-ba", link, "ba", seg.reverse, seg.reverse_events),
            ]
        self.run_schedules(schedules, horizon_s, on_error)

    def dead_switches(self) -> list[str]:
        """Names of switches (and link emulators) whose process has died."""
        dead = self.dead_bmv2()
        dead += [
            f"{'f' if k else 'e'}{i}" for (i, k), link in self.links.items() if not link.alive()
        ]
        return dead
