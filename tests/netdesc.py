"""Network descriptions (src/mpsched/netcfg.py, the JSON form) of the testbed's addressing plan
(src/mpsched/addressing.py) for tests: edge switch s<edge> with its subnet, router MAC and,
if asked, its primary host h<edge>."""

from __future__ import annotations

from collections.abc import Iterable

from mpsched import addressing as ap


def host(edge: int, n: int = 1, port: int = 1, name: str | None = None) -> dict:
    """Host entry: address n of the edge (h<edge>'s primary one for n = 1) on switch port."""
    return {"name": name or f"h{edge}", "ip": ap.host_ip(edge, n), "mac": ap.host_mac(edge, n),
            "port": port}


def edge_switch(edge: int, grpc_address: str = "127.0.0.1:1", paths: Iterable[dict] = (),
                *, with_host: bool = False, device_id: int | None = None) -> dict:
    """Switch entry of s<edge>: the edge's subnet and router MAC, device id = edge unless
    given; ``with_host`` adds h<edge> on port 1."""
    return {
        "name": f"s{edge}",
        "device_id": edge if device_id is None else device_id,
        "grpc_address": grpc_address,
        "mac": ap.router_mac(edge),
        "subnets": [ap.subnet(edge)],
        "hosts": [host(edge)] if with_host else [],
        "paths": list(paths),
    }
