"""The fabric testbed over several servers, on Mininet's cluster edition
(mininet.examples.cluster; docs/scaling.md, "Mininet cluster edition").

`ClusterFabricTestbed` is the `FabricTestbed` (topo/fabric_testbed.py) with the cluster
edition's pieces in place of the local ones: `MininetCluster` as the network (it checks
before anything starts that every server takes `ssh user@server sudo true`), the remote node
classes of topo/cluster_nodes.py for hosts, BMv2 switches and link emulators, and
`RemoteSSHLink` for every link, which is a veth pair on one server and an ssh Ethernet tunnel
(``ssh -w``, a tap device at each end) between two. Where each node runs is `placement`:
the scenario's per-node overrides, else the cluster edition's placer over the switches,
hosts beside their edge switch, a link's emulator beside the link's first switch.

The controller runs here, as the lab does: it reaches a switch on another server at that
server's address (BMv2's P4Runtime listens there), and probes that switch with PacketOuts
(its probe port would be a veth beside it); with the cluster's `tls`, over TLS with client
authentication (docs/security.md). Life cycle: as the local testbed's (topo/bed.py),
stopping is Mininet's `stop()`, which ends every node and deletes every interface on each
server through the node's own shell; what runs here on behalf of another server (the ssh
clients of its shells, tunnels and link emulators) is in the cleanup registry, and a remote
process ends with its ssh session.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from mininet.examples.cluster import (
    MininetCluster,
    RemoteMixin,
    RemoteSSHLink,
    RoundRobinPlacer,
    SwitchBinPlacer,
)
from mininet.net import Mininet

from mpsched.certs import CONTROLLER
from mpsched.lab.scenario_cluster import ClusterSpec
from mpsched.proc.bmv2 import ServerTls

from .bed import PATH_MTU, disable_offloads, on_switch_link
from .cluster_nodes import ClusterBmv2Switch, ClusterHost, ClusterLinkem, ssh_options
from .fabric_plan import FabricPlan
from .fabric_testbed import FabricSpec, FabricTestbed

log = logging.getLogger(__name__)

PLACERS = {"switchbin": SwitchBinPlacer, "roundrobin": RoundRobinPlacer}


class ClusterError(RuntimeError):
    """A server the cluster cannot use (its ssh check failed)."""


def placement(plan: FabricPlan, cluster: ClusterSpec) -> dict[str, str]:
    """{node: server} for every node of `plan` (module docstring): pure, the cluster
    edition's placer (`cluster.placement`) deciding the switches not overridden."""
    overrides = dict(cluster.nodes)
    for link in plan.links:  # a fabric link's name places its emulator
        if link.name in overrides:
            overrides.setdefault(link.emulator, overrides.pop(link.name))
    names = [s.name for s in plan.switches]
    placer = PLACERS[cluster.placement](
        servers=cluster.server_names, nodes=names, hosts=[], switches=names, links=[],
    )
    out = {name: overrides.get(name) or placer.place(name) for name in names}
    for h in plan.hosts:
        out[h.name] = overrides.get(h.name, out[h.switch])
    for link in plan.links:
        out[link.emulator] = overrides.get(link.emulator, out[link.a])
    return out


class ClusterNet(MininetCluster):
    """MininetCluster whose server check uses the cluster's ssh options and raises
    ClusterError (the cluster edition's exits the process)."""

    def __init__(self, *args: Any, ssh_options: tuple[str, ...] = (), **params: Any) -> None:
        self.sshcmd = [*MininetCluster.sshcmd, *ssh_options]
        super().__init__(*args, **params)

    def precheck(self) -> None:
        try:
            super().precheck()
        except SystemExit:
            raise ClusterError(
                "a server of the cluster fails `ssh user@server sudo true` (the message "
                "above names it): docs/scaling.md, Mininet cluster edition") from None


class ClusterFabricTestbed(FabricTestbed):
    """A fabric over the servers of `cluster` (module docstring)."""

    switch_cls = ClusterBmv2Switch
    host_cls = ClusterHost
    linkem_cls = ClusterLinkem
    link_cls = RemoteSSHLink

    def __init__(self, spec: FabricSpec, cluster: ClusterSpec) -> None:
        backend = "linkem" if spec.backend == "auto" else spec.backend
        if backend != "linkem":
            raise ValueError("a cluster emulates links with linkem nodes; backend "
                             f"{spec.backend!r} is not one")
        super().__init__(replace(spec, backend=backend))
        self.cluster = cluster
        self.ssh_options = ssh_options(cluster.ssh_config)
        self.placement = placement(self.plan, cluster)
        self.switch_names = {s.name for s in self.plan.switches}
        self.plan_links = {link.name: link for link in self.plan.links}
        self.server_ip = {
            s.name: s.address or RemoteMixin.findServerIP(s.name) for s in cluster.servers
        }
        for name, ip in self.server_ip.items():
            if ip is None:
                raise ClusterError(f"server {name!r}: no address (give `address`)")

    def new_net(self) -> Mininet:
        super().new_net()  # the sweep of killed runs, Mininet's log level
        params: dict[str, Any] = {}
        if self.cluster.user:
            params["user"] = self.cluster.user
        self.net = ClusterNet(
            servers=self.cluster.server_names, serverIP=self.server_ip,
            ssh_options=self.ssh_options, build=False, controller=None, autoSetMacs=False,
            autoStaticArp=False, **params,
        )
        return self.net

    def node_params(self, name: str) -> dict[str, Any]:
        server = self.placement[name]
        params: dict[str, Any] = {"server": server, "serverIP": self.server_ip[server],
                                  "ssh_options": self.ssh_options}
        if self.cluster.user:
            params["user"] = self.cluster.user
        if self.cluster.tls is not None and name in self.switch_names:
            tls = self.cluster.tls
            params["tls"] = ServerTls(tls / f"{name}.pem", tls / f"{name}.key",
                                      tls / "ca.pem", client_auth=True)
        return params

    def description_extra(self) -> dict[str, Any] | None:
        """With `tls`: the controller's CA and client certificate (docs/security.md)."""
        tls = self.cluster.tls
        if tls is None:
            return None
        return {"tls": {"ca_cert": str(tls / "ca.pem"), "cert": str(tls / f"{CONTROLLER}.pem"),
                        "key": str(tls / f"{CONTROLLER}.key")}}

    def probes_beside(self, switch: str) -> bool:
        """Only a switch on this machine has a probe port to the controller."""
        return self.placement[switch] == "localhost"

    def prepare_switch_ports(self, net: Mininet) -> None:
        """As the local testbed's (topo/bed.py), each command on the switch's server; the
        interfaces of this machine recorded for cleanup."""
        for sw in net.switches:
            for intf in sw.intfList():
                if intf.name == "lo":
                    continue
                if not sw.isRemote:
                    self.registry.add_link(intf.name)
                disable_offloads(sw.cmd, intf.name)
                sw.cmd(f"sysctl -qw net.ipv6.conf.{intf.name}.disable_ipv6=1")
                if on_switch_link(intf, net.hosts):
                    sw.cmd(f"ip link set dev {intf.name} mtu {PATH_MTU}")
        for link in net.links:  # the tunnels' ssh clients (RemoteSSHLink)
            tunnel = getattr(link, "tunnel", None)
            if tunnel is not None:
                self.registry.add_process(tunnel.pid, " ".join(str(a) for a in tunnel.args))

    def record_nodes(self, nodes: Any) -> None:
        for node in nodes:
            for pid, cmd in node.local_processes():
                self.registry.add_process(pid, cmd or None)

    def emulator_pids(self) -> dict[str, int]:
        """linkem's PID per link emulator on this machine (the CPU sampler's roles; one on
        another server is known here only by its ssh client)."""
        pids = super().emulator_pids()
        return {name: pid for name, pid in pids.items()
                if self.placement[self.plan_links[name].emulator] == "localhost"}

    def servers_of(self) -> dict[str, list[str]]:
        """{server: the nodes placed on it}, in the plan's order."""
        out: dict[str, list[str]] = {name: [] for name in self.cluster.server_names}
        for node, server in self.placement.items():
            out[server].append(node)
        return out
