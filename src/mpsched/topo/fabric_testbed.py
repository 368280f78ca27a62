"""The fabric testbed: one BMv2 switch per fabric switch, hosts behind every edge, one
emulated link per fabric link (docs/fabric-lab.md, "Lab").

The layout is `fabric_plan.plan` (names, device ids, ports, hosts); each link's emulator
(src/mpsched/topo/emulink.py: linkem on kernels without netem, netem elsewhere) gets the rate,
delay,
jitter, loss and queue of each direction of its fabric link (forward = a -> b) and runs the
link's schedules from `start_schedules`. A link crossed by several paths is one emulator: one
queue per direction, shared by them all. Host k of edge e (`h<e>_<k>`, 10.0.e.k) has its
default route via the edge's gateway; static ARP entries give the gateway and the other
hosts of its edge the edge's router MAC (the switch answers no ARP). Edge switches get the
program's probe port (a veth to the controller), transit switches originate no probes and
get none. The network description (`mpsched.fabric.netdesc.describe`, with the switches'
P4Runtime addresses and probe interfaces, and the controller's TLS certificate unless
`p4rt_plaintext`: src/mpsched/topo/bed.py) is written to `netcfg_path`.

`FabricTestbed` is a context manager like the two-edge `Testbed` (src/mpsched/topo/bed.py): whatever
it
started is stopped on exit, on an exception and on Ctrl-C, and recorded for `mpsched cleanup`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from mininet.link import Link
from mininet.net import Mininet

from mpsched import addressing as ap
from mpsched.emu.params import LinkParams
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import Fabric
from mpsched.fabric.names import EMULATOR_PREFIX
from mpsched.fabric.netdesc import describe
from mpsched.netcfg import NetCfg
from mpsched.proc.layout import build_dir

from .bed import Bed, Schedule, resolve_probe_port
from .bmv2_switch import Bmv2MininetSwitch
from .emulink import LinkemNode, NetemOnLink
from .fabric_plan import FabricPlan, HostPlan, LinkPlan, intf_name, plan

log = logging.getLogger(__name__)

PLACEHOLDER_GRPC = "127.0.0.1:1"  # the plan needs no P4Runtime address


@dataclass(frozen=True)
class FabricSpec:
    """A fabric testbed: `section` is the scenario's fabric section as written (it goes into
    the network description), `fabric` its model (parsed from it when not given)."""

    section: dict
    fabric: Fabric | None = None
    backend: str = "auto"
    seed: int = 0
    log_dir: Path = field(default_factory=lambda: build_dir() / "logs")
    probe_port: int | None = None  # None: the compiled program's, if it has one
    host_addresses: int = 1  # every host's addresses (MPTCP's subflows; 1: its own only)

    @cached_property
    def model(self) -> Fabric:
        return self.fabric if self.fabric is not None else parse_fabric(self.section)

    def description(self, grpc_address: Callable[[int], str] = lambda _i: PLACEHOLDER_GRPC,
                    probe_ifaces: dict[str, str] | None = None,
                    extra: dict[str, Any] | None = None) -> NetCfg:
        return describe(self.section, self.model, grpc_address, extra=extra,
                        probe_ifaces=probe_ifaces, host_addresses=self.host_addresses)

    @cached_property
    def plan(self) -> FabricPlan:
        return plan(self.model, self.description())


class FabricTestbed(Bed):
    """A fabric in Mininet (module docstring); `links` by fabric link name.
    `p4rt_plaintext`: P4Runtime in plaintext without client authentication
    (src/mpsched/topo/bed.py)."""

    def __init__(self, spec: FabricSpec, p4rt_plaintext: bool = False) -> None:
        self.spec = spec
        self.plan = spec.plan  # ValueError early: names that clash
        super().__init__(spec.backend, spec.log_dir, p4rt_plaintext)
        self.netcfg: NetCfg | None = None

    def __enter__(self) -> FabricTestbed:
        super().__enter__()
        return self

    # ---- construction -------------------------------------------------

    # the node and link classes (the cluster variant's are remote ones: cluster_testbed.py)
    switch_cls: type = Bmv2MininetSwitch
    host_cls: type | None = None  # None: Mininet's Host
    linkem_cls: type = LinkemNode
    link_cls: type = Link

    def start(self) -> None:
        net = self.new_net()
        probe_port = resolve_probe_port(self.spec.probe_port)
        self.open_tls()
        switches = {
            s.name: net.addSwitch(
                s.name, cls=self.switch_cls, device_id=s.device_id, dpid=f"{s.device_id:x}",
                registry=self.registry, log_dir=self.spec.log_dir,
                probe_port=probe_port if s.edge_id and self.probes_beside(s.name) else None,
                **({"tls": self.switch_tls(s.name)} | self.node_params(s.name)),
            )
            for s in self.plan.switches
        }  # fmt: skip
        hosts = {h.name: self._add_host(net, h, switches[h.switch]) for h in self.plan.hosts}
        emulated = {link.name: self._add_link(net, link, switches) for link in self.plan.links}
        net.build()
        self.links = (
            {name: NetemOnLink(link) for name, link in emulated.items()}
            if self.backend == "netem" else emulated
        )
        self.prepare_switch_ports(net)
        for link in self.spec.model.links:
            self.links[link.name].set("ab", link.segment.forward)
            self.links[link.name].set("ba", link.segment.reverse)
        self.record_nodes([*hosts.values(), *switches.values()])
        net.start()
        self.after_start(net)
        for h in self.plan.hosts:
            self.prepare_host(hosts[h.name], self.plan.arp_entries(h))
            for ip in h.extra_ips:
                hosts[h.name].cmd(f"ip addr add {ip}/{ap.PREFIX_LEN} dev {intf_name(h.name, 0)}")
        self.netcfg = self._netcfg(switches)
        self.netcfg.dump(self.netcfg_path)

    def node_params(self, name: str) -> dict[str, Any]:
        """Extra parameters of node `name` (the cluster variant's: its server)."""
        return {}

    def probes_beside(self, switch: str) -> bool:
        """Whether the edge switch gets a probe port (a veth to the controller)."""
        return True

    def _add_host(self, net: Mininet, h: HostPlan, switch: Any) -> Any:
        extra = {"cls": self.host_cls} if self.host_cls is not None else {}
        host = net.addHost(h.name, ip=f"{h.ip}/{ap.PREFIX_LEN}", mac=h.mac,
                           defaultRoute=f"via {ap.gateway_ip(h.edge_id)}",
                           **extra, **self.node_params(h.name))
        net.addLink(host, switch, port1=0, port2=h.port, intfName1=intf_name(h.name, 0),
                    intfName2=intf_name(h.switch, h.port), cls=self.link_cls)
        return host

    def _add_link(self, net: Mininet, link: LinkPlan, switches: dict[str, Any]) -> Any:
        """The fabric link's emulator: a linkem node between the switches, or (netem) the
        veth that joins them."""
        a, b = switches[link.a], switches[link.b]
        a_intf, b_intf = intf_name(link.a, link.a_port), intf_name(link.b, link.b_port)
        if self.backend != "linkem":
            return net.addLink(a, b, port1=link.a_port, port2=link.b_port,
                               intfName1=a_intf, intfName2=b_intf)
        index = int(link.emulator.removeprefix(EMULATOR_PREFIX))
        emu = net.addSwitch(link.emulator, cls=self.linkem_cls,
                            seed=self.spec.seed * 1000 + index, registry=self.registry,
                            **self.node_params(link.emulator))
        net.addLink(a, emu, port1=link.a_port, port2=1, intfName1=a_intf,
                    intfName2=intf_name(link.emulator, 1), cls=self.link_cls)
        net.addLink(emu, b, port1=2, port2=link.b_port, intfName1=intf_name(link.emulator, 2),
                    intfName2=b_intf, cls=self.link_cls)
        return emu

    def _netcfg(self, switches: dict[str, Bmv2MininetSwitch]) -> NetCfg:
        by_device = {s.device_id: switches[s.name] for s in self.plan.switches}

        def grpc(device_id: int) -> str:
            bmv2 = by_device[device_id].bmv2
            assert bmv2 is not None, "switch not started"
            return bmv2.grpc_address

        probes = {name: sw.probe_iface for name, sw in switches.items() if sw.probe_iface}
        return self.spec.description(grpc, probes, self.description_extra())

    def description_extra(self) -> dict[str, Any] | None:
        """Top-level keys of the network description beyond the fabric: `tls`, the way to
        the switches over TLS (the cluster variant's: its own certificates')."""
        tls = self.description_tls()
        return {"tls": tls} if tls else None

    # ---- run-time -------------------------------------------------------

    def hosts(self) -> dict[int, list[str]]:
        """{edge id: the names of the hosts behind it, host 1 first}: where workloads run."""
        return self.plan.hosts_by_edge()

    def host_names(self) -> list[str]:
        return [h.name for h in self.plan.hosts]

    def host_ip(self, name: str) -> str:
        """A host's address (the network description's)."""
        return next(h.ip for h in self.plan.hosts if h.name == name)

    def enable_mptcp(self, subflows: int, initiators: Iterable[str] | None = None) -> None:
        """Kernel MPTCP on every host for connections of up to `subflows` subflows: the path
        manager's limits, and on the `initiators` (default every host) their addresses
        2..subflows as subflow endpoints (a connection such a host opens gets one MP_JOIN
        subflow from each), as the two-edge testbed does for h1 (src/mpsched/topo/testbed.py). A
        listener with endpoints would open subflows of its own back towards the initiator."""
        if not 1 <= subflows <= self.spec.host_addresses:
            raise ValueError(f"subflows: between 1 and host_addresses "
                             f"({self.spec.host_addresses})")
        wanted = None if initiators is None else set(initiators)
        for h in self.plan.hosts:
            host = self.host(h.name)
            host.cmd("sysctl -qw net.mptcp.enabled=1")
            host.cmd(f"ip mptcp limits set subflows {subflows} add_addr_accepted {subflows}")
            if wanted is not None and h.name not in wanted:
                continue
            for ip in h.extra_ips[: subflows - 1]:
                host.cmd(f"ip mptcp endpoint add {ip} dev {intf_name(h.name, 0)} subflow")

    def set_link(self, name: str, direction: str, params: LinkParams) -> None:
        """Change one direction (`ab` = forward, a -> b) of fabric link `name` now."""
        self.links[name].set(direction, params)

    def link_stats(self) -> dict[str, dict]:
        """The counters of every emulated link by fabric link name (per direction)."""
        return {name: link.stats() for name, link in sorted(self.links.items())}

    def segment_stats(self) -> dict[str, dict]:
        """The same as `link_stats` (the runner saves it as links.json)."""
        return self.link_stats()

    def link_label(self, key: Any, link: Any) -> str:
        """A link emulator is known by its fabric link's name."""
        return str(key)

    def start_schedules(
        self, horizon_s: float, on_error: Callable[[Exception], None] | None = None
    ) -> None:
        """Run every link's schedules from now for `horizon_s` seconds."""
        schedules = []
        for link in self.spec.model.links:
            seg, emu = link.segment, self.links[link.name]
            schedules += [
                Schedule(f"{link.name}-ab", emu, "ab", seg.forward, seg.forward_events),
                Schedule(f"{link.name}-ba", emu, "ba", seg.reverse, seg.reverse_events),
            ]
        self.run_schedules(schedules, horizon_s, on_error)

    def dead_switches(self) -> list[str]:
        """Names of the switches and links whose process (BMv2, linkem) has died."""
        return self.dead_bmv2() + [n for n, link in self.links.items() if not link.alive()]

