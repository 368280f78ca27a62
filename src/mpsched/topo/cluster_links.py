"""The cluster edition's ssh Ethernet tunnel (mininet.examples.cluster `RemoteSSHLink`) with a
deadline on every step and its ssh client ended and reaped when the link stops.

`ClusterLink` is a veth pair when both nodes are on one server, and between two servers the
cluster edition's tunnel: a tap device ``tap9`` made on each server (the name is the cluster
edition's, fixed; renamed to the link's interface names once the tunnel is up), ``ssh -w
9:9`` from the first node's server to the second's, whose ``echo @`` says the tunnel is up.
Its `makeTunnel` is the cluster edition's with bounds: each command on a server within the
node's `rcmd` deadline (src/mpsched/topo/cluster_shell.py), the ``@`` within
`TUNNEL_START_TIMEOUT_S`;
on a failure the tunnel's ssh client is ended and the ``tap9`` it made removed, and the
error names both servers. A ``tap9`` left by a killed run is removed before one is made
(only a tunnel being set up has that name).
"""

from __future__ import annotations

import logging
import select
import subprocess
from typing import Any

from mininet.examples.cluster import RemoteSSHLink
from mininet.util import decode

from .cluster_shell import ShellError

log = logging.getLogger(__name__)

TAP = "tap9"  # the cluster edition's tap device name (ssh -w 9:9)
TUNNEL_START_TIMEOUT_S = 30.0  # ssh's login and the tap devices' opening
TUNNEL_STOP_WAIT_S = 5.0


def wait_for_marker(proc: subprocess.Popen, timeout: float) -> str:
    """The first character `proc` writes to its stdout within `timeout` ("" if none; what it
    wrote in all if it ended)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        return ""
    ch = decode(proc.stdout.read(1))
    if ch == "@":
        return ch
    return ch + decode(proc.stdout.read())


def end_process(proc: subprocess.Popen, wait_s: float = TUNNEL_STOP_WAIT_S) -> None:
    """SIGTERM, then SIGKILL after `wait_s`; reaped either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=wait_s)


class ClusterLink(RemoteSSHLink):
    """RemoteSSHLink with deadlines (module docstring)."""

    def makeTunnel(self, node1: Any, node2: Any, intfname1: str, intfname2: str,  # noqa: N802
                   addr1: str | None = None, addr2: str | None = None) -> subprocess.Popen:
        if node2.server == "localhost":  # the cluster edition's rule: ssh from here
            return self.makeTunnel(node2, node1, intfname2, intfname1, addr2, addr1)
        where = f"{node1.name} on {node1.server} - {node2.name} on {node2.server}"
        made: list[Any] = []
        tunnel: subprocess.Popen | None = None
        try:
            for node in (node1, node2):
                node.rcmd(f"ip link del {TAP}")  # a killed run's; its error is no matter
                out = node.rcmd(f"ip tuntap add dev {TAP} mode tap user {node.user}")
                if out.strip():
                    raise ShellError(f"{where}: making {TAP} on {node.server}: {out.strip()}")
                made.append(node)
            dest = f"{node2.user}@{node2.serverIP}"
            self.cmd = ["ssh", "-n", "-o", "Tunnel=Ethernet", "-w", "9:9", dest, "echo @"]
            tunnel = node1.rpopen(self.cmd, sudo=False)
            got = wait_for_marker(tunnel, TUNNEL_START_TIMEOUT_S)
            if got != "@":
                raise ShellError(f"{where}: the ssh tunnel did not come up within "
                                 f"{TUNNEL_START_TIMEOUT_S:g} s: {got.strip()!r}")
            for node in (node1, node2):
                self.moveIntf(TAP, node)
            for node, intf, addr in ((node1, intfname1, addr1), (node2, intfname2, addr2)):
                out = node.cmd(f"ip link set {TAP} name {intf}"
                               + (f" address {addr}" if addr else ""))
                if out.strip():
                    raise ShellError(f"{where}: renaming {TAP} to {intf}: {out.strip()}")
            return tunnel
        except BaseException:
            if tunnel is not None:
                end_process(tunnel)
            for node in made:
                try:
                    node.rcmd(f"ip link del {TAP}")
                except ShellError as err:
                    log.warning("%s", err)
            raise

    def stop(self) -> None:
        """The tunnel's ssh client ended and reaped (the cluster edition only signals it),
        then its interfaces deleted; a veth pair as Mininet stops one."""
        tunnel = self.tunnel
        if tunnel is None:
            super().stop()
            return
        end_process(tunnel)
        self.tunnel = None
        for intf in (self.intf1, self.intf2):
            try:
                intf.delete()
            except ShellError as err:
                log.warning("%s", err)
