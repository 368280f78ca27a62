"""Emulated links in Mininet: one interface, two backends.

`make_link()` returns the object a run drives (`set(direction, params)`,
`stats()`, `close()`); direction `ab` is from the link's first node to its
second. With the `linkem` backend a path is node1 - eN - node2, where eN is a
root-namespace Mininet node running csrc/linkem.c between its two ports; with
`netem` the path is a plain veth pair with a netem qdisc on each sending end.
"""

from __future__ import annotations

import logging
from typing import Any

from mininet.node import Switch

from mpsched.emu.netem import NetemLink, netem_available
from mpsched.emu.params import LinkParams
from mpsched.proc.cleanup import Registry

log = logging.getLogger(__name__)

BACKENDS = ("auto", "linkem", "netem")


def choose_backend(requested: str) -> str:
    """`auto` picks netem where the kernel has it, linkem elsewhere."""
    if requested not in BACKENDS:
        raise ValueError(f"backend: one of {', '.join(BACKENDS)}, got {requested!r}")
    if requested == "auto":
        return "netem" if netem_available() else "linkem"
    return requested


class LinkemNode(Switch):
    """A root-namespace node whose two ports are bridged by a linkem process.

    Port 1 faces the link's first node (direction `ab` leaves port 2), port 2
    the second. Parameters given before start are applied when it starts.
    """

    def __init__(self, name: str, seed: int, registry: Registry, **params: Any) -> None:
        params["inNamespace"] = False
        super().__init__(name, **params)
        self.seed = seed
        self.registry = registry
        self.linkem = None
        self.pending: dict[str, LinkParams] = {}

    def ports_in_order(self) -> list[str]:
        ports = sorted((n, intf.name) for intf, n in self.ports.items() if intf.name != "lo")
        return [name for _, name in ports]

    def start(self, controllers: list) -> None:
        from mpsched.emu.linkem import Linkem

        a, b = self.ports_in_order()
        self.linkem = Linkem.start(a, b, seed=self.seed, registry=self.registry)
        for direction, params in self.pending.items():
            self.linkem.set(direction, params)

    def set(self, direction: str, params: LinkParams) -> None:
        if self.linkem is None:
            self.pending[direction] = params
        else:
            self.linkem.set(direction, params)

    def stats(self) -> dict:
        return self.linkem.stats() if self.linkem else {}

    def alive(self) -> bool:
        return self.linkem is not None and self.linkem.alive()

    def close(self) -> None:
        if self.linkem is not None:
            self.linkem.close()
            self.linkem = None

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        self.close()
        super().stop(deleteIntfs)


class CoreBridge(Switch):
    """A core switch: a Linux bridge (STP off) over its ports, in the root namespace.

    It joins the two emulated segments of a path (port 1 towards s1, port 2
    towards s2); with two ports it forwards everything from one to the other.
    """

    def __init__(self, name: str, registry: Registry, **params: Any) -> None:
        params["inNamespace"] = False
        super().__init__(name, **params)
        self.registry = registry
        self.bridge = f"{name}-br"

    def start(self, controllers: list) -> None:
        run = _node_run
        self.registry.add_link(self.bridge)
        for cmd in (
            ["ip", "link", "add", "name", self.bridge, "type", "bridge", "stp_state", "0"],
            ["sysctl", "-qw", f"net.ipv6.conf.{self.bridge}.disable_ipv6=1"],
            ["ip", "link", "set", self.bridge, "up"],
        ):
            result = run(self, cmd)
            if result.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)}: {result.stderr.strip()}")
        for intf in self.intfList():
            if intf.name != "lo":
                run(self, ["ip", "link", "set", intf.name, "master", self.bridge])
                run(self, ["ip", "link", "set", intf.name, "up"])

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 (Mininet's signature)
        _node_run(self, ["ip", "link", "delete", self.bridge])
        self.registry.forget_link(self.bridge)
        super().stop(deleteIntfs)


class NetemOnLink:
    """netem on both ends of a Mininet link (parameters may be set before start)."""

    def __init__(self, link: Any) -> None:
        n1, n2 = link.intf1.node, link.intf2.node
        self.netem = NetemLink(
            link.intf1.name,
            link.intf2.name,
            run_ab=lambda cmd: _node_run(n1, cmd),
            run_ba=lambda cmd: _node_run(n2, cmd),
        )

    def set(self, direction: str, params: LinkParams) -> None:
        self.netem.set(direction, params)

    def stats(self) -> dict:
        return self.netem.stats()

    def alive(self) -> bool:
        return True

    def close(self) -> None:
        self.netem.close()


def _node_run(node: Any, cmd: list[str]):
    import subprocess

    if node.inNamespace:
        return subprocess.run(
            ["mnexec", "-a", str(node.pid), *cmd], capture_output=True, text=True, check=False
        )
    return subprocess.run(cmd, capture_output=True, text=True, check=False)
