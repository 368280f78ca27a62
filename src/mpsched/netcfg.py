"""The network description that the topology writes and the controller reads.

One JSON document lists, per edge switch, its P4Runtime address, its router
MAC, the hosts behind it, the ports of the paths and, optionally, prefixes
pinned to one path ("pins": [{"prefix": "10.0.2.3/32", "path_id": 2}]) and, per switch or
for all (top-level "tls"), how to reach it over TLS (docs/security.md).

A fabric (docs/fabric.md) is described by a top-level "fabric": a scenario's fabric section
(leaf_spine or graph, src/mpsched/fabric/files.py), from which the controller computes the paths
of every ordered pair of edges and the ports they leave by (src/mpsched/fabric/ports.py). Then
`switches` lists every switch of the fabric by name (edges and transit switches); an edge
lists its hosts (host k on port k) and its subnets, no paths and no pins; a transit switch
lists no hosts, subnets, paths or pins. The classes below
are pydantic dataclasses: they validate every field (also when built in code) and loading
names the bad one, e.g. ``switches[0].paths[1].port: must be an integer 0..510, got 600``
(src/mpsched/validation.py).
"""

from __future__ import annotations

import ipaddress
import json
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import ConfigDict, ValidationInfo, model_validator
from pydantic.dataclasses import dataclass

from mpsched import addressing as ap
from mpsched import safeload
from mpsched.fabric.model import ANY_BUILD_MAX_EDGES, MAX_TRANSIT
from mpsched.netcfg_fields import (
    FileName,
    GrpcAddress,
    Iface,
    Ipv4,
    Mac,
    Port,
    Prefix,
    Rate,
)
from mpsched.p4rt.tls import TlsSettings
from mpsched.validation import (
    BoolValue,
    InputError,
    KeyCheck,
    Text,
    fail,
    int_in,
    validate,
)
from mpsched.validation import dump as dump_data

if TYPE_CHECKING:
    from mpsched.fabric.model import Fabric

MAX_PATH_ID = 255
MAX_SWITCHES = ANY_BUILD_MAX_EDGES + MAX_TRANSIT  # docs/fabric.md, "Bounds"
_CONFIG = ConfigDict(extra="forbid")


class ConfigError(InputError):
    """Invalid network description; `field` names the bad field, `source` the file."""


def _unique(values: list, loc: tuple[str | int, ...]) -> None:
    seen = set()
    for value in values:
        if value in seen:
            fail(loc, f"{value!r} appears twice", value)
        seen.add(value)


@dataclass(frozen=True, config=_CONFIG)
class HostCfg(KeyCheck):
    name: Text
    ip: Ipv4
    mac: Mac
    port: Port


@dataclass(frozen=True, config=_CONFIG)
class PathCfg(KeyCheck):
    id: Annotated[int, int_in(1, MAX_PATH_ID)]
    port: Port
    rate_mbps: Rate = None


@dataclass(frozen=True, config=_CONFIG)
class PinCfg(KeyCheck):
    """Traffic to prefix (normalised CIDR, e.g. "10.0.2.3/32") always leaves on path_id."""

    prefix: Prefix
    path_id: Annotated[int, int_in(1, MAX_PATH_ID)]


@dataclass(frozen=True, config=_CONFIG)
class TlsCfg(KeyCheck):
    """P4Runtime over TLS: the CA that signed the switch's certificate, the controller's
    client certificate and key (both or neither; a switch started with client authentication
    needs them), the name the switch's certificate carries when it is not the host of
    grpc_address, and whether a switch speaking plaintext is refused (required)."""

    ca_cert: FileName
    cert: FileName = None
    key: FileName = None
    server_name: Text | None = None
    required: BoolValue = True

    @model_validator(mode="after")
    def _consistent(self) -> TlsCfg:
        if self.ca_cert is None:
            fail("ca_cert", "a CA certificate is needed", None)
        if (self.cert is None) != (self.key is None):
            missing = "key" if self.key is None else "cert"
            fail(missing, "cert and key go together: give both or neither")
        return self

    def settings(self) -> TlsSettings:
        return TlsSettings(
            ca_cert=Path(str(self.ca_cert)),
            cert=Path(self.cert) if self.cert else None,
            key=Path(self.key) if self.key else None,
            server_name=self.server_name,
            required=self.required,
        )


@dataclass(frozen=True, config=_CONFIG)
class SwitchCfg(KeyCheck):
    name: Text
    device_id: Annotated[int, int_in(0, 2**32 - 1)]
    grpc_address: GrpcAddress
    mac: Mac
    subnets: tuple[Prefix, ...]
    hosts: tuple[HostCfg, ...]
    paths: tuple[PathCfg, ...]
    pins: tuple[PinCfg, ...] = ()
    # the controller's end of a veth whose other end is the switch's probe port: probes are
    # written there as frames instead of sent as P4Runtime PacketOuts (None: PacketOuts)
    probe_iface: Iface = None
    tls: TlsCfg | None = None  # None: the description's top-level tls (or plaintext)

    @model_validator(mode="after")
    def _consistent(self) -> SwitchCfg:
        _unique([p.id for p in self.paths], ("paths[]", "id"))
        # several addresses of one host may share its port; a path port is never a host port
        _unique([p.port for p in self.paths] + sorted({h.port for h in self.hosts}), ("port",))
        _unique([h.ip for h in self.hosts], ("hosts[]", "ip"))
        self._check_pins()
        return self

    def _check_pins(self) -> None:
        """Pins lead to the other edge: none may lie inside this switch's own subnets or hosts
        (a broader pin is fine, the local routes are more specific)."""
        path_ids = sorted(p.id for p in self.paths)
        own = [ipaddress.IPv4Network(s) for s in self.subnets]
        own += [ipaddress.IPv4Network(h.ip) for h in self.hosts]
        for i, pin in enumerate(self.pins):
            clash = [s for s in own if ipaddress.IPv4Network(pin.prefix).subnet_of(s)]
            if clash:
                fail(("pins", i, "prefix"), f"lies inside {clash[0]}, local to this switch")
            if pin.path_id not in path_ids:
                fail(("pins", i, "path_id"), f"must be one of this switch's paths {path_ids}")
        _unique([p.prefix for p in self.pins], ("pins[]", "prefix"))


@dataclass(frozen=True, config=_CONFIG)
class NetCfg(KeyCheck):
    switches: tuple[SwitchCfg, ...]
    tls: TlsCfg | None = None  # every switch's TLS settings, unless it has its own
    fabric: dict | None = None  # a fabric's topology (module docstring); None: two edges

    def tls_for(self, switch: SwitchCfg) -> TlsSettings | None:
        """How the controller reaches `switch`: its own tls, else the default, else None
        (plaintext)."""
        chosen = switch.tls or self.tls
        return chosen.settings() if chosen else None

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> NetCfg:
        if not self.switches:
            fail("switches", "at least one switch is needed")
        if len(self.switches) > MAX_SWITCHES:
            fail("switches", f"at most {MAX_SWITCHES} switches (any build's edges and a "
                 f"fabric's transit switches), got {len(self.switches)}")
        _unique([s.name for s in self.switches], ("switches[]", "name"))
        _unique([s.device_id for s in self.switches], ("switches[]", "device_id"))
        # where the fabric's trace files are, as every file of the description (`_file`);
        # kept beside the fields (not one: the description's JSON does not hold it)
        object.__setattr__(self, "_base_dir", (info.context or {}).get("base_dir"))
        if self.fabric is not None:
            _check_fabric(self.switches, self.topology)
        return self

    @cached_property
    def topology(self) -> Fabric | None:
        """The fabric's topology (None: two edges joined by the switches' paths), within
        the limits of any build: the program's own are `check_limits`'. A schedule's trace
        file is taken from the description file's directory, like its other files."""
        if self.fabric is None:
            return None
        # the fabric model builds on this module
        from mpsched.fabric.files import parse_fabric
        from mpsched.fabric.model import ANY_BUILD_MAX_EDGES, ANY_BUILD_MAX_PATHS

        base_dir = getattr(self, "_base_dir", None)
        try:
            return parse_fabric(self.fabric, max_edges=ANY_BUILD_MAX_EDGES,
                                max_paths=ANY_BUILD_MAX_PATHS,
                                context={"base_dir": base_dir} if base_dir else None)
        except InputError as error:
            fail(f"fabric.{error.field}" if error.field else "fabric", error.message)

    def check_limits(self, max_edges: int, max_paths: int) -> None:
        """ConfigError unless the program holds this network: at most `max_edges` edges and
        `max_paths` paths per ordered pair (the compiled program's, `Pipeline`)."""
        fabric = self.topology
        if fabric is None:
            too_high = [p for p in self.path_ids() if p > max_paths]
            if too_high:
                raise ConfigError(
                    "switches", f"path ids {too_high} exceed the program's {max_paths} paths"
                )
            return
        if len(fabric.edges) > max_edges:
            raise ConfigError(
                "fabric", f"{len(fabric.edges)} edges, the program holds {max_edges}"
            )
        if fabric.paths_per_pair > max_paths:
            graph = (self.fabric or {}).get("graph")
            if isinstance(graph, dict) and graph.get("paths_per_pair") is None:
                raise ConfigError(
                    "fabric.graph.paths_per_pair",
                    f"unset, so any build's most ({fabric.paths_per_pair}); the program "
                    f"holds {max_paths}: set it to at most {max_paths}",
                )
            raise ConfigError(
                "fabric",
                f"{fabric.paths_per_pair} paths per pair, the program holds {max_paths}",
            )

    def path_ids(self) -> list[int]:
        """Every path id in use: the switches' paths, or a fabric's 1..paths per pair."""
        if self.topology is not None:
            return list(range(1, self.topology.paths_per_pair + 1))
        ids: set[int] = set()
        for sw in self.switches:
            ids.update(p.id for p in sw.paths)
        return sorted(ids)

    @cached_property
    def _by_name(self) -> dict[str, SwitchCfg]:
        return {s.name: s for s in self.switches}

    @cached_property
    def _edges_by_id(self) -> dict[int, SwitchCfg]:
        """The edge switches by edge id, in its order: every report and step looks them up,
        so a fabric's lookups stay constant-time (docs/results/scale.md)."""
        edges = {self.edge_id(s): s for s in self.switches}
        edges.pop(0, None)  # transit switches
        return dict(sorted(edges.items()))

    def switch(self, name: str) -> SwitchCfg:
        """The switch called `name` (KeyError: none)."""
        return self._by_name[name]

    def is_edge(self, switch: SwitchCfg) -> bool:
        """Whether hosts sit behind the switch (every switch of a two-edge network)."""
        return self.edge_id(switch) != 0

    def edge_switches(self) -> list[SwitchCfg]:
        """The edge switches by edge id."""
        return list(self._edges_by_id.values())

    def edge_id(self, switch: SwitchCfg) -> int:
        """The switch's edge id (the path tag's src_edge/dst_edge, p4src/include/sizes.p4):
        a fabric's (0: a transit switch), else its place in `switches`, from 1."""
        if self.topology is not None:
            return self.topology.by_name[switch.name].edge_id
        return 1 + [s.name for s in self.switches].index(switch.name)

    def edge_switch(self, edge_id: int) -> SwitchCfg:
        """The edge switch of `edge_id` (KeyError: none)."""
        return self._edges_by_id[edge_id]

    def peer_edges(self, switch: SwitchCfg) -> list[int]:
        """The edge ids an edge switch sends to: every other edge ([] for a transit switch)."""
        if not self.is_edge(switch):
            return []
        own = self.edge_id(switch)
        return [e for e in self._edges_by_id if e != own]

    def is_peer_edge(self, switch: SwitchCfg, edge_id: int) -> bool:
        """`edge_id in peer_edges(switch)` without building the list (asked per report)."""
        own = self.edge_id(switch)
        return own != 0 and edge_id != own and edge_id in self._edges_by_id

    def peer_edge(self, switch: SwitchCfg) -> int:
        """The edge id at the far end of the switch's paths in a two-edge network: the other
        switch's, 1 or 2 (a fabric has many: `peer_edges`)."""
        if self.topology is not None or len(self.switches) > 2:
            raise ConfigError(
                "switches", "a switch of a fabric has many peers (peer_edges), not one"
            )
        return 3 - self.edge_id(switch)

    def probe_targets(self, switch: SwitchCfg) -> list[tuple[int, int]]:
        """Every (destination edge, path id) the switch sends on, and so probes: its paths
        to its peer with two edges, every path id to every other edge in a fabric, none from
        a transit switch."""
        if self.topology is None:
            return [(self.peer_edge(switch), p.id) for p in switch.paths]
        return [(e, p) for e in self.peer_edges(switch) for p in self.path_ids()]

    def subnets_of(self, edge_id: int) -> tuple[str, ...]:
        """The host subnets behind edge `edge_id`."""
        return self.edge_switch(edge_id).subnets

    def remote_subnets(self, switch: SwitchCfg) -> list[str]:
        return [s for other in self.switches if other.name != switch.name for s in other.subnets]

    def to_dict(self) -> dict:
        return dump_data(self)

    def dump(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> NetCfg:
        """Read (within `safeload.DESCRIPTION`'s bounds) and validate a network description
        (JSON); errors name the file and field."""
        return safeload.load(path, lambda data: cls.parse(data, path), ConfigError)

    @classmethod
    def parse(cls, data: object, path: str | Path) -> NetCfg:
        """`data`, read from the description file `path`, validated: its files are taken
        from the file's directory; errors name the file and field."""
        context = {"base_dir": str(Path(path).parent)}
        return validate(cls, data, error=ConfigError, source=str(path), context=context)

    @classmethod
    def from_dict(cls, data: object) -> NetCfg:
        return validate(cls, data, error=ConfigError)


def _check_fabric(switches: tuple[SwitchCfg, ...], fabric: Fabric | None) -> None:
    """The switches are the fabric's: the same names, an edge's subnets and host ports as
    the fabric gives them, no paths or pins (they come from the fabric), nothing behind a
    transit switch."""
    assert fabric is not None
    names = [s.name for s in switches]
    for i, sw in enumerate(switches):
        role = fabric.by_name.get(sw.name)
        if role is None:
            fail(("switches", i, "name"), f"{sw.name!r} is no switch of the fabric", sw.name)
        if sw.paths:
            fail(("switches", i, "paths"), "a fabric's paths come from its topology", None)
        if sw.pins:
            fail(("switches", i, "pins"), "a fabric takes no pins", None)
        if not role.is_edge:
            if sw.hosts or sw.subnets:
                fail(("switches", i, "hosts"), "a transit switch has no hosts or subnets")
            continue
        if tuple(sw.subnets) != role.subnets:
            fail(("switches", i, "subnets"), f"must be the fabric's {list(role.subnets)}")
        for j, host in enumerate(sw.hosts):
            if not 1 <= host.port <= role.hosts:
                fail(("switches", i, "hosts", j, "port"),
                     f"must be a host port 1..{role.hosts} of the fabric", host.port)
    for name in sorted(set(fabric.by_name) - set(names)):
        fail("switches", f"the fabric's switch {name!r} is missing")


def plan_edges(address: str, paths: tuple[PathCfg, ...]) -> NetCfg:
    """The two edges of the addressing plan (src/mpsched/addressing.py) for a controller without a
    testbed (the benchmarks): s1 at `address` with h1 behind port 1, and s2, which only names
    the direction of s1's traffic (nothing listens at its address); both with `paths`."""
    s1 = SwitchCfg("s1", 1, address, ap.S1_MAC, (ap.subnet(ap.SENDER_EDGE),),
                   (HostCfg("h1", ap.H1_IP, ap.H1_MAC, 1),), paths)
    s2 = SwitchCfg("s2", 2, "127.0.0.1:1", ap.S2_MAC, (ap.subnet(ap.RECEIVER_EDGE),), (), paths)
    return NetCfg((s1, s2))
