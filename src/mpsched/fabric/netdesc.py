"""The network description (src/mpsched/netcfg.py) of a fabric, built from its scenario section.

Every switch of the fabric, in its order (edges by edge id, then transit switches), gets
device id 1, 2, ... and the P4Runtime address `grpc_address(device_id)`; an edge its router
MAC, subnets and hosts from the addressing plan (src/mpsched/addressing.py: host k of edge e is
``10.0.e.k`` on port k, named ``h<e>_<k>``; with `host_addresses` n > 1 its addresses 2..n,
`addressing.fabric_host_ip`, are listed after it under the same name, port and MAC, for
MPTCP's subflows), a transit switch a MAC of its own. The topology
itself goes in as given (`NetCfg.fabric`): the controller computes the paths from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mpsched import addressing as ap
from mpsched.fabric.model import Fabric, Switch
from mpsched.fabric.names import host_name
from mpsched.netcfg import NetCfg

__all__ = ["describe", "host_name"]


def _switch(sw: Switch, device_id: int, transit_index: int, address: str,
            host_addresses: int = 1) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": sw.name, "device_id": device_id, "grpc_address": address,
                             "paths": []}
    if not sw.is_edge:
        return {**entry, "mac": ap.transit_mac(transit_index), "subnets": [], "hosts": []}
    hosts = [
        {"name": host_name(sw.edge_id, k), "ip": ap.fabric_host_ip(sw.edge_id, k, n),
         "mac": ap.host_mac(sw.edge_id, k), "port": k}
        for n in range(1, host_addresses + 1) for k in range(1, sw.hosts + 1)
    ]
    return {**entry, "mac": ap.router_mac(sw.edge_id), "subnets": list(sw.subnets),
            "hosts": hosts}


def describe(section: dict, fabric: Fabric, grpc_address: Callable[[int], str],
             extra: dict[str, Any] | None = None,
             probe_ifaces: Mapping[str, str] | None = None,
             host_addresses: int = 1) -> NetCfg:
    """The description of `fabric` (parsed from `section`, a scenario's fabric section);
    `extra` adds top-level keys (e.g. "tls"), `probe_ifaces` the controller's end of a
    switch's probe port by switch name (the testbed's, src/mpsched/topo/bmv2_switch.py),
    `host_addresses` the addresses of every host (1..addressing.FABRIC_HOST_ADDRESSES).
    A graph's `paths_per_pair` is written as `fabric` resolved it (its default is the
    compiled program's max_paths, which the controller's parse of the description cannot
    know: it would take any build's most, docs/fabric.md)."""
    if "graph" in section:
        section = {**section, "graph": {**section["graph"],
                                        "paths_per_pair": fabric.paths_per_pair}}
    switches = []
    transit = 0
    for device_id, sw in enumerate(fabric.switches, start=1):
        transit += 0 if sw.is_edge else 1
        entry = _switch(sw, device_id, transit, grpc_address(device_id), host_addresses)
        if probe_ifaces and sw.name in probe_ifaces:
            entry["probe_iface"] = probe_ifaces[sw.name]
        switches.append(entry)
    return NetCfg.from_dict({"switches": switches, "fabric": section, **(extra or {})})
