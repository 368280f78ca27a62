"""The Mininet layout of a fabric (docs/fabric-lab.md, "Lab"): pure, so that it is tested
without root; src/mpsched/topo/fabric_testbed.py builds it.

- **switches**: one BMv2 node per fabric switch, named as in the fabric, with the device id
  of the network description (`mpsched.fabric.netdesc.describe`: 1, 2, ... in the fabric's
  order) and the ports of `mpsched.fabric.ports.port_map` (host k on port k of its edge, then
  one port per link in the order of the neighbours' names);
- **hosts**: host k of edge e is `h<e>_<k>` at the address the description gives it, with
  static ARP entries for its gateway and the other hosts of its edge (`arp_entries`);
- **links**: one emulated link per fabric link. With linkem, a root-namespace node `lk<i>`
  (i = the link's place in the fabric's links, from 1) between the link's two switches:
  its port 1 faces `a`, port 2 `b`, so its direction `ab` is the link's forward one.

Interface names: Linux allows 15 characters. A node's port n is Mininet's `<node>-eth<n>`
where that fits; a switch name of up to 10 characters (the fabric's rule) with a port of
two digits does not, and then the port is `<node>-p<n>` (at most 10 + 2 + 3 characters).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mpsched import addressing as ap
from mpsched.fabric.model import Fabric
from mpsched.fabric.names import EMULATOR_PREFIX, emulator_name
from mpsched.fabric.ports import port_map
from mpsched.netcfg import NetCfg

IFNAMSIZ = 15  # the longest Linux interface name (IFNAMSIZ - 1)


def intf_name(node: str, port: int) -> str:
    """The name of port `port` of Mininet node `node` (module docstring)."""
    name = f"{node}-eth{port}"
    if len(name) <= IFNAMSIZ:
        return name
    short = f"{node}-p{port}"
    if len(short) > IFNAMSIZ:
        raise ValueError(f"{node}: port {port} has no interface name of at most "
                         f"{IFNAMSIZ} characters")
    return short


@dataclass(frozen=True)
class HostPlan:
    """Host `name` (k-th of edge `edge_id`) on port `port` of switch `switch`; `extra_ips`
    its further addresses on the same interface (MPTCP's subflows)."""

    name: str
    edge_id: int
    switch: str
    port: int
    ip: str
    mac: str
    router_mac: str  # its edge switch's, the static ARP entry of its gateway
    extra_ips: tuple[str, ...] = ()


@dataclass(frozen=True)
class SwitchPlan:
    name: str
    device_id: int
    edge_id: int  # 0: a transit switch


@dataclass(frozen=True)
class LinkPlan:
    """Fabric link `name`: switch `a` port `a_port` to switch `b` port `b_port`, emulated by
    node `emulator` (linkem) or on the veth between the two switches (netem)."""

    name: str
    a: str
    a_port: int
    b: str
    b_port: int
    emulator: str


@dataclass(frozen=True)
class FabricPlan:
    switches: tuple[SwitchPlan, ...]
    hosts: tuple[HostPlan, ...]
    links: tuple[LinkPlan, ...]

    def hosts_by_edge(self) -> dict[int, list[str]]:
        """{edge id: its hosts' names, host 1 first}."""
        out: dict[int, list[str]] = {}
        for h in self.hosts:
            out.setdefault(h.edge_id, []).append(h.name)
        return out

    def arp_entries(self, host: HostPlan) -> list[tuple[str, str]]:
        """(address, MAC) of the static ARP entries of `host`: its gateway and every other
        host of its edge (same subnet, so the host would ask for them), all at the edge's
        router MAC. The switch answers no ARP and routes even between hosts of one edge."""
        peers = [h.ip for h in self.hosts if h.edge_id == host.edge_id and h.name != host.name]
        return [(ap.gateway_ip(host.edge_id), host.router_mac),
                *((ip, host.router_mac) for ip in peers)]

    def interfaces(self) -> list[str]:
        """Every interface name the layout creates in the root namespace (switch ports and
        linkem ports; hosts' interfaces live in their own namespaces)."""
        names = [intf_name(h.switch, h.port) for h in self.hosts]
        for link in self.links:
            names += [intf_name(link.a, link.a_port), intf_name(link.b, link.b_port)]
            names += [intf_name(link.emulator, 1), intf_name(link.emulator, 2)]
        return names


def plan(fabric: Fabric, description: NetCfg) -> FabricPlan:
    """The layout of `fabric`, whose network description is `description` (any P4Runtime
    addresses: only names, device ids, hosts and MACs are taken from it). ValueError if two
    nodes or interfaces would share a name."""
    ports = port_map(fabric)
    switches = tuple(
        SwitchPlan(s.name, s.device_id, description.edge_id(s)) for s in description.switches
    )
    hosts = _hosts(description)
    links = tuple(
        LinkPlan(link.name, link.a, ports[link.a].neighbours[link.b],
                 link.b, ports[link.b].neighbours[link.a], emulator_name(i))
        for i, link in enumerate(fabric.links, start=1)
    )
    out = FabricPlan(switches, hosts, links)
    _unique("node", [s.name for s in switches] + [h.name for h in hosts]
            + [link.emulator for link in links])
    _unique("interface", out.interfaces())
    return out


def _hosts(description: NetCfg) -> tuple[HostPlan, ...]:
    """One host per name: its first address in the description is its own, any later one
    under the same name an extra address (`HostPlan.extra_ips`, MPTCP's subflows)."""
    out: dict[str, HostPlan] = {}
    for s in description.edge_switches():
        for h in s.hosts:
            first = out.get(h.name)
            if first is None:
                out[h.name] = HostPlan(h.name, description.edge_id(s), s.name, h.port, h.ip,
                                       h.mac, s.mac)
            else:
                out[h.name] = replace(first, extra_ips=(*first.extra_ips, h.ip))
    return tuple(out.values())


def _unique(what: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"two {what}s named {name!r} (a switch named like a host h<e>_<k> "
                             f"or a link emulator {EMULATOR_PREFIX}<i>?)")
        seen.add(name)
