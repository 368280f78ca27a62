"""The fabric testbed over several servers, on Mininet's cluster edition
(mininet.examples.cluster; docs/scaling.md, "Mininet cluster edition").

`ClusterFabricTestbed` is the `FabricTestbed` (src/mpsched/topo/fabric_testbed.py) with the cluster
edition's pieces in place of the local ones: `MininetCluster` as the network (it checks
before anything starts that every server takes `ssh user@server sudo true`), the remote node
classes of src/mpsched/topo/cluster_nodes.py for hosts, BMv2 switches and link emulators, and
`ClusterLink` (src/mpsched/topo/cluster_links.py, the cluster edition's `RemoteSSHLink` with
deadlines)
for every link, which is a veth pair on one server and an ssh Ethernet tunnel (``ssh -w``, a
tap device at each end) between two. Where each node runs is `placement`:
the scenario's per-node overrides, else the cluster edition's placer over the switches,
hosts beside their edge switch, a link's emulator beside the link's first switch.

The controller runs here, as the lab does: it reaches a switch on another server at that
server's address (BMv2's P4Runtime listens there), and probes that switch with PacketOuts
(its probe port would be a veth beside it); with the cluster's `tls`, over TLS with client
authentication (docs/security.md). Life cycle: as the local testbed's (src/mpsched/topo/bed.py),
stopping is Mininet's `stop()`, which ends every node and deletes every interface on each
server through the node's own shell (going on past a node that fails to stop), then one ssh
command per other server removes what a failed shell could not (src/mpsched/topo/cluster_sweep.py);
what
runs here on behalf of another server (the ssh clients of its shells, tunnels and link
emulators) is in the cleanup registry, and a remote process ends with its ssh session. Every
wait on a server has a deadline (src/mpsched/topo/cluster_shell.py): a server that stops answering
fails the run with its name, it does not hang it.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from mininet.examples.cluster import (
    MininetCluster,
    RemoteMixin,
    RoundRobinPlacer,
    SwitchBinPlacer,
    findUser,
)
from mininet.net import Mininet

from mpsched.certs import CONTROLLER
from mpsched.lab.scenario_cluster import ClusterSpec
from mpsched.proc.bmv2 import ServerTls

from .bed import PATH_MTU, disable_offloads, on_switch_link
from .cluster_links import ClusterLink
from .cluster_nodes import (
    KEEPALIVE,
    ClusterBmv2Switch,
    ClusterHost,
    ClusterLinkem,
    RemoteBmv2,
    ssh_options,
)
from .cluster_sweep import sweep_script, sweep_server
from .fabric_plan import FabricPlan
from .fabric_testbed import FabricSpec, FabricTestbed

log = logging.getLogger(__name__)

PLACERS = {"switchbin": SwitchBinPlacer, "roundrobin": RoundRobinPlacer}
PRECHECK_TIMEOUT_S = 30.0  # `ssh user@server sudo true`: a login and sudo


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
    """MininetCluster whose server check has a deadline and raises ClusterError (the
    cluster edition's waits without one and exits the process), and whose stop goes on past
    a node or link that fails to stop (each failure logged), so that every other node ends."""

    def __init__(self, *args: Any, ssh_options: tuple[str, ...] = (), **params: Any) -> None:
        self.sshcmd = [*MininetCluster.sshcmd, *KEEPALIVE, *ssh_options]
        super().__init__(*args, **params)

    def precheck(self) -> None:
        for server in self.servers:
            if server == "localhost":
                continue
            cmd = ["sudo", "-E", "-u", self.user, *self.sshcmd, "-n",
                   f"{self.user}@{self.serverIP[server]}", "sudo", "true"]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True,
                                      timeout=PRECHECK_TIMEOUT_S, check=False)
            except subprocess.TimeoutExpired:
                raise ClusterError(f"server {server}: `{shlex.join(cmd)}` did not end within "
                                   f"{PRECHECK_TIMEOUT_S:g} s (docs/scaling.md, Mininet "
                                   "cluster edition)") from None
            if done.returncode != 0:
                raise ClusterError(f"server {server}: `{shlex.join(cmd)}` failed (exit "
                                   f"{done.returncode}): {done.stderr.strip()[-500:]} "
                                   "(docs/scaling.md, Mininet cluster edition)")

    def stop(self) -> None:
        for link in self.links:
            _each(link.stop, f"stopping link {link}")
        for switch in self.switches:
            _each(switch.stop, f"stopping {switch.name}")
            _each(switch.terminate, f"ending {switch.name}'s shell")
        for host in self.hosts:
            _each(host.terminate, f"ending {host.name}'s shell")


def _each(step: Callable[[], Any], what: str) -> None:
    try:
        step()
    except Exception:
        log.exception("%s failed; the cluster's stop goes on", what)


class ClusterFabricTestbed(FabricTestbed):
    """A fabric over the servers of `cluster` (module docstring)."""

    switch_cls = ClusterBmv2Switch
    host_cls = ClusterHost
    linkem_cls = ClusterLinkem
    link_cls = ClusterLink

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

    def stop(self) -> None:
        """The local testbed's stop (src/mpsched/topo/bed.py), then each other server swept."""
        switches = self.bmv2_switches()
        lost = self.lost_shells()
        try:
            super().stop()
        finally:
            self.sweep_servers(switches, lost)

    def lost_shells(self) -> dict[str, list[int]]:
        """{server: the PIDs there of the remote shells whose session ended here}."""
        out: dict[str, list[int]] = {}
        nodes = [*self.net.hosts, *self.net.switches] if self.net is not None else []
        for node in nodes:
            if getattr(node, "isRemote", False) and node.pid and (
                    node.shell_failed is not None or node.shell_ended() is not None):
                out.setdefault(node.server, []).append(int(node.pid))
        return out

    def sweep_servers(self, switches: list,
                      lost: dict[str, list[int]] | None = None) -> dict[str, list[str]]:
        """What the stop left on each other server removed (src/mpsched/topo/cluster_sweep.py):
        {server:
        what was removed}."""
        out: dict[str, list[str]] = {}
        user = self.cluster.user or findUser()
        for server in self.cluster.server_names:
            if server == "localhost":
                continue
            names = [n for n in self.plan.interfaces() if self.interface_server(n) == server]
            pids = [sw.bmv2.remote_pid for sw in switches if self.placement[sw.name] == server
                    and getattr(sw.bmv2, "remote_pid", None)]
            ssh = ["sudo", "-E", "-u", user, "ssh", "-o", "BatchMode=yes", *KEEPALIVE,
                   *self.ssh_options, f"{user}@{self.server_ip[server]}"]
            script = sweep_script(os.getpid(), names, pids, (lost or {}).get(server, []))
            out[server] = sweep_server(ssh, script, server)
        return out

    def why_dead(self) -> dict[str, str]:
        """{switch: how its BMv2 ended} for every switch whose BMv2 is not running."""
        out = {}
        for sw in self.bmv2_switches():
            bmv2 = sw.bmv2
            if bmv2 is None or bmv2.alive():
                continue
            if isinstance(bmv2, RemoteBmv2):
                out[sw.name] = bmv2.exit_status()
            else:
                code = bmv2.process.returncode if bmv2.process is not None else None
                out[sw.name] = f"signal {-code}" if code is not None and code < 0 else \
                    f"exit {code}"
        return out

    def interface_server(self, name: str) -> str:
        """The server of an interface of the layout (`<node>-eth<n>`): its node's."""
        return self.placement[name.rsplit("-eth", 1)[0]]

    def open_tls(self) -> None:
        """No CA of the testbed's own: a switch on another server needs its certificate
        there, so the cluster's switches use `cluster.tls` (a directory `mpsched certs`
        wrote), or plaintext without it (docs/scaling.md)."""

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
        """As the local testbed's (src/mpsched/topo/bed.py), each command on the switch's server;
        the
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
