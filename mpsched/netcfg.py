"""The network description that the topology writes and the controller reads.

One JSON document lists, per edge switch, its P4Runtime address, its router
MAC, the hosts behind it, the ports of the paths and, optionally, prefixes
pinned to one path ("pins": [{"prefix": "10.0.2.3/32", "path_id": 2}]). Loading validates every
field and names the bad one in the error.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mpsched import addressing as ap

MAC_RE = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")


class ConfigError(ValueError):
    """Invalid configuration; the message starts with the path of the bad field."""


@dataclass(frozen=True)
class HostCfg:
    name: str
    ip: str
    mac: str
    port: int


@dataclass(frozen=True)
class PathCfg:
    id: int
    port: int
    rate_mbps: float | None = None


@dataclass(frozen=True)
class PinCfg:
    """Traffic to prefix (normalised CIDR, e.g. "10.0.2.3/32") always leaves on path_id."""

    prefix: str
    path_id: int


@dataclass(frozen=True)
class SwitchCfg:
    name: str
    device_id: int
    grpc_address: str
    mac: str
    subnets: tuple[str, ...]
    hosts: tuple[HostCfg, ...]
    paths: tuple[PathCfg, ...]
    pins: tuple[PinCfg, ...] = ()
    # the controller's end of a veth whose other end is the switch's probe port: probes are
    # written there as frames instead of sent as P4Runtime PacketOuts (None: PacketOuts)
    probe_iface: str | None = None


@dataclass(frozen=True)
class NetCfg:
    switches: tuple[SwitchCfg, ...] = field(default_factory=tuple)

    def path_ids(self) -> list[int]:
        ids: set[int] = set()
        for sw in self.switches:
            ids.update(p.id for p in sw.paths)
        return sorted(ids)

    def remote_subnets(self, switch: SwitchCfg) -> list[str]:
        return [s for other in self.switches if other.name != switch.name for s in other.subnets]

    def to_dict(self) -> dict:
        return asdict(self)

    def dump(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> NetCfg:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as error:
            raise ConfigError(f"{path}: {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}: not JSON ({error})") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: object) -> NetCfg:
        obj = _object(data, "netcfg", {"switches"})
        switches = tuple(
            _switch(item, f"switches[{i}]")
            for i, item in enumerate(_list(obj.get("switches"), "switches"))
        )
        if not switches:
            raise ConfigError("switches: at least one switch is needed")
        _unique([s.name for s in switches], "switches[].name")
        _unique([s.device_id for s in switches], "switches[].device_id")
        return cls(switches=switches)


def _object(data: object, where: str, allowed: set[str]) -> dict:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: must be an object")
    unknown = set(data) - allowed
    if unknown:
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown key")
    return data


def _list(data: object, where: str) -> list:
    if not isinstance(data, list):
        raise ConfigError(f"{where}: must be a list")
    return data


def _int(data: object, where: str, low: int, high: int) -> int:
    if isinstance(data, bool) or not isinstance(data, int) or not low <= data <= high:
        raise ConfigError(f"{where}: must be an integer {low}..{high}")
    return data


def _str(data: object, where: str) -> str:
    if not isinstance(data, str) or not data:
        raise ConfigError(f"{where}: must be a non-empty string")
    return data


def _mac(data: object, where: str) -> str:
    value = _str(data, where).lower()
    if not MAC_RE.match(value):
        raise ConfigError(f"{where}: must be a MAC address like {ap.H1_MAC}")
    return value


def _ipv4(data: object, where: str) -> str:
    try:
        return str(ipaddress.IPv4Address(_str(data, where)))
    except ipaddress.AddressValueError:
        raise ConfigError(f"{where}: must be an IPv4 address") from None


def _subnet(data: object, where: str) -> str:
    try:
        return str(ipaddress.IPv4Network(_str(data, where)))
    except ValueError:
        raise ConfigError(f"{where}: must be an IPv4 prefix like {ap.subnet(1)}") from None


def _unique(values: list, where: str) -> None:
    seen = set()
    for value in values:
        if value in seen:
            raise ConfigError(f"{where}: {value!r} appears twice")
        seen.add(value)


def _pins(
    data: object, where: str, paths: list[PathCfg], subnets: tuple[str, ...],
    hosts: tuple[HostCfg, ...],
) -> tuple[PinCfg, ...]:
    """Pins lead to the other edge: none may lie inside this switch's own subnets or hosts
    (a broader pin is fine, the local routes are more specific)."""
    path_ids = sorted(p.id for p in paths)
    own = [ipaddress.IPv4Network(s) for s in subnets]
    own += [ipaddress.IPv4Network(h.ip) for h in hosts]
    pins = []
    for i, item in enumerate(_list(data, where)):
        pw = f"{where}[{i}]"
        obj = _object(item, pw, {"prefix", "path_id"})
        for key in ("prefix", "path_id"):
            if key not in obj:
                raise ConfigError(f"{pw}.{key}: missing")
        prefix = _subnet(obj["prefix"], f"{pw}.prefix")
        clash = [s for s in own if ipaddress.IPv4Network(prefix).subnet_of(s)]
        if clash:
            raise ConfigError(f"{pw}.prefix: lies inside {clash[0]}, local to this switch")
        path_id = obj["path_id"]
        if isinstance(path_id, bool) or not isinstance(path_id, int) or path_id not in path_ids:
            raise ConfigError(f"{pw}.path_id: must be one of this switch's paths {path_ids}")
        pins.append(PinCfg(prefix=prefix, path_id=path_id))
    _unique([p.prefix for p in pins], f"{where}[].prefix")
    return tuple(pins)


def _switch(data: object, where: str) -> SwitchCfg:
    keys = {"name", "device_id", "grpc_address", "mac", "subnets", "hosts", "paths"}
    obj = _object(data, where, keys | {"pins", "probe_iface"})
    for key in keys:
        if key not in obj:
            raise ConfigError(f"{where}.{key}: missing")
    hosts = tuple(
        HostCfg(
            name=_str(
                _object(h, f"{where}.hosts[{i}]", {"name", "ip", "mac", "port"}).get("name"),
                f"{where}.hosts[{i}].name",
            ),
            ip=_ipv4(h.get("ip"), f"{where}.hosts[{i}].ip"),
            mac=_mac(h.get("mac"), f"{where}.hosts[{i}].mac"),
            port=_int(h.get("port"), f"{where}.hosts[{i}].port", 0, 510),
        )
        for i, h in enumerate(_list(obj["hosts"], f"{where}.hosts"))
    )
    paths = []
    for i, p in enumerate(_list(obj["paths"], f"{where}.paths")):
        pw = f"{where}.paths[{i}]"
        pobj = _object(p, pw, {"id", "port", "rate_mbps"})
        rate = pobj.get("rate_mbps")
        if rate is not None and (
            isinstance(rate, bool) or not isinstance(rate, int | float) or rate <= 0
        ):
            raise ConfigError(f"{pw}.rate_mbps: must be a positive number or null")
        paths.append(
            PathCfg(
                id=_int(pobj.get("id"), f"{pw}.id", 1, 255),
                port=_int(pobj.get("port"), f"{pw}.port", 0, 510),
                rate_mbps=rate,
            )
        )
    _unique([p.id for p in paths], f"{where}.paths[].id")
    # several addresses of one host may share its port; a path port is never a host port
    _unique([p.port for p in paths] + sorted({h.port for h in hosts}), f"{where}: port")
    _unique([h.ip for h in hosts], f"{where}.hosts[].ip")
    address = _str(obj["grpc_address"], f"{where}.grpc_address")
    if ":" not in address:
        raise ConfigError(f"{where}.grpc_address: must be host:port")
    name = _str(obj["name"], f"{where}.name")
    device_id = _int(obj["device_id"], f"{where}.device_id", 0, 2**32 - 1)
    mac = _mac(obj["mac"], f"{where}.mac")
    subnets = tuple(
        _subnet(s, f"{where}.subnets[{i}]")
        for i, s in enumerate(_list(obj["subnets"], f"{where}.subnets"))
    )
    return SwitchCfg(
        name=name,
        device_id=device_id,
        grpc_address=address,
        mac=mac,
        subnets=subnets,
        hosts=hosts,
        paths=tuple(paths),
        pins=_pins(obj.get("pins", []), f"{where}.pins", paths, subnets, hosts),
        probe_iface=_iface(obj.get("probe_iface"), f"{where}.probe_iface"),
    )


def _iface(data: object, where: str) -> str | None:
    """A Linux interface name (1..15 characters, no '/', blank or ':'), or None."""
    if data is None:
        return None
    name = _str(data, where)
    if len(name) > 15 or any(c in name for c in "/: \t\n") or name in (".", ".."):
        raise ConfigError(f"{where}: must be an interface name of at most 15 characters")
    return name
