"""A fabric scenario's `cluster:` section: the servers a run spreads its nodes over, and how.

The lab past one machine is Mininet's own cluster edition (mininet.examples.cluster, shipped
with Debian's mininet): nodes on other servers are reached over ssh, links between servers
are its ssh tunnels (src/mpsched/topo/cluster_testbed.py; docs/scaling.md, "Mininet cluster
edition").
This module validates the section (pydantic, errors naming the key through
src/mpsched/validation.py) into a `ClusterSpec`:

- `servers`: the servers by name, each with an optional IPv4 `address` (else the name is
  resolved); `localhost` is the machine the lab runs on (the cluster edition's convention);
- `user`: the ssh login on every server (default: the user who ran sudo, as the cluster
  edition's `findUser`); `ssh_config`: an ssh client configuration file given to every ssh
  command (`ssh -F`; default: the user's own ~/.ssh/config);
- `placement`: which of the cluster edition's placers puts the fabric's switches on servers
  (`switchbin`: SwitchBinPlacer, even bins in the fabric's order; `roundrobin`:
  RoundRobinPlacer); a host goes where its edge switch is, a link's emulator where the
  link's first switch (`a`) is;
- `nodes`: per-node overrides, {node: server}, a node being a switch, a host (``h<e>_<k>``)
  or a fabric link (its emulator);
- `tls`: a directory written by `mpsched certs` (docs/security.md) with a certificate for every
  switch of the fabric: then every switch serves P4Runtime over TLS with client
  authentication, and the controller connects with the lab's CA and its client certificate.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator, model_validator

from mpsched.certs import CONTROLLER
from mpsched.fabric.model import Fabric
from mpsched.fabric.netdesc import host_name
from mpsched.validation import KeyCheck, Text, fail, one_of

PLACEMENTS = ("switchbin", "roundrobin")
LOCALHOST = "localhost"  # the cluster edition's name for the machine it runs on


@dataclass(frozen=True)
class Server:
    name: str
    address: str | None = None  # None: resolved from the name (the cluster edition's getent)


@dataclass(frozen=True)
class ClusterSpec:
    """The validated section (module docstring)."""

    servers: tuple[Server, ...]
    user: str | None = None
    ssh_config: Path | None = None
    placement: str = "switchbin"
    nodes: dict[str, str] = field(default_factory=dict)
    tls: Path | None = None  # `mpsched certs`' directory (module docstring)

    @property
    def server_names(self) -> list[str]:
        return [s.name for s in self.servers]


class ServerFile(KeyCheck, BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Text
    address: str | None = None

    @field_validator("address")
    @classmethod
    def _ipv4(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(ipaddress.IPv4Address(value))
        except ValueError:
            raise ValueError(f"must be an IPv4 address, got {value!r}") from None


class ClusterFile(KeyCheck, BaseModel):
    """`cluster:` of a fabric scenario (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: list[ServerFile]
    user: Text | None = None
    ssh_config: str | None = None
    placement: Annotated[str, one_of(PLACEMENTS)] = "switchbin"
    nodes: dict[str, str] = {}
    tls: str | None = None

    @field_validator("servers")
    @classmethod
    def _servers(cls, value: list[ServerFile]) -> list[ServerFile]:
        if not value:
            raise ValueError("at least one server")
        names = [s.name for s in value]
        for i, name in enumerate(names):
            if name in names[:i]:
                fail((i, "name"), f"two servers named {name!r}", name)
        return value

    @field_validator("ssh_config")
    @classmethod
    def _ssh_config(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Relative to the scenario file's directory; it must exist."""
        if value is None:
            return None
        path = _relative(value, info)
        if not path.is_file():
            raise ValueError(f"no such file: {path}")
        return str(path)

    @field_validator("tls")
    @classmethod
    def _tls(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Relative to the scenario file's directory; the CA's and the controller's
        certificates in it (the switches' are checked against the fabric)."""
        if value is None:
            return None
        path = _relative(value, info)
        for stem in ("ca", CONTROLLER):
            if not (path / f"{stem}.pem").is_file():
                raise ValueError(f"no {stem}.pem in {path} (written by `mpsched certs --out`)")
        return str(path)

    @model_validator(mode="after")
    def _known_servers(self) -> ClusterFile:
        names = {s.name for s in self.servers}
        for node, server in self.nodes.items():
            if server not in names:
                fail(("nodes", node), f"must be one of the servers ({', '.join(sorted(names))})"
                     f", got {server!r}", server)
        return self

    def spec(self) -> ClusterSpec:
        return ClusterSpec(
            servers=tuple(Server(s.name, s.address) for s in self.servers),
            user=self.user,
            ssh_config=Path(self.ssh_config) if self.ssh_config else None,
            placement=self.placement,
            nodes=dict(self.nodes),
            tls=Path(self.tls) if self.tls else None,
        )


def _relative(value: str, info: ValidationInfo) -> Path:
    base = (info.context or {}).get("base_dir", Path.cwd())
    return Path(base) / value


def node_names(fabric: Fabric) -> set[str]:
    """What `nodes` may name: the fabric's switches, hosts and links."""
    names = {sw.name for sw in fabric.switches} | {link.name for link in fabric.links}
    for sw in fabric.switches:
        if sw.is_edge:
            names |= {host_name(sw.edge_id, k) for k in range(1, sw.hosts + 1)}
    return names


def check_against(cluster: ClusterFile, fabric: Fabric) -> None:
    """Every node `cluster.nodes` places exists in `fabric`, every switch has its certificate
    in `cluster.tls` (inside the scenario's validator: errors name ``cluster.<key>``)."""
    known = node_names(fabric)
    for node in cluster.nodes:
        if node not in known:
            fail(("cluster", "nodes", node),
                 "not a switch, host (h<e>_<k>) or link of the fabric", node)
    if cluster.tls is not None:
        for sw in fabric.switches:
            if not (Path(cluster.tls) / f"{sw.name}.pem").is_file():
                fail(("cluster", "tls"), f"no certificate of switch {sw.name} in "
                     f"{cluster.tls} (`mpsched certs --switch {sw.name}=<its server's "
                     "address>`)", cluster.tls)

