"""The forwarding entries: the switch's edge id, transit next hops, routes, path next hops,
fabric ports and MPTCP subflow pins."""

from __future__ import annotations

import functools
import ipaddress

from mpsched.p4profiles import FEATURE_MPTCP
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline.binding import PipelineBinding
from mpsched.p4rt.pipeline.names import (
    ACTION_FABRIC_PORT,
    ACTION_PIN_SUBFLOW,
    ACTION_SET_PATH_PORT,
    ACTION_SET_SWITCH_CONFIG,
    ACTION_TO_HOST,
    ACTION_TO_PATHS,
    ACTION_TRANSIT,
    ACTION_VIA_PATH,
    SUBFLOW_PIN_KEYS,
    TABLE_NEXTHOP,
    TABLE_PATH_INGRESS,
    TABLE_ROUTE,
    TABLE_SUBFLOW_PIN,
    TABLE_SWITCH_CONFIG,
    TABLE_TRANSIT,
    TRANSIT_KEYS,
)


@functools.lru_cache(maxsize=4096)
def _lpm(prefix: str) -> tuple[str, int]:
    """An IPv4 prefix's LPM match (network address, length), parsed once: a fabric's edge
    holds a route per remote subnet, built anew on every re-route (docs/results/scale.md)."""
    net = ipaddress.IPv4Network(prefix)
    return str(net.network_address), net.prefixlen


class ForwardingEntries(PipelineBinding):
    """Builders of the forwarding tables' entries."""

    def switch_config(self, edge_id: int) -> TableEntry:
        """The switch's own edge id (its one switch_config entry, on every port)."""
        return TableEntry(
            TABLE_SWITCH_CONFIG, {}, ACTION_SET_SWITCH_CONFIG, {"edge_id": self._edge(edge_id)},
            priority=1,
        )

    def transit_nexthop(self, src_edge: int, dst_edge: int, path_id: int, port: int) -> TableEntry:
        """Forward the tags of path path_id of the pair (src_edge, dst_edge) to port."""
        key = (self._edge(src_edge), self._edge(dst_edge), self._path(path_id))
        return TableEntry(
            TABLE_TRANSIT, dict(zip(TRANSIT_KEYS, key, strict=True)), ACTION_TRANSIT, {"port": port}
        )

    def route_to_paths(self, prefix: str, dst_edge: int) -> TableEntry:
        """A prefix behind edge switch dst_edge, reached over the weighted paths."""
        return TableEntry(
            TABLE_ROUTE,
            {self._key[TABLE_ROUTE]: _lpm(prefix)},
            ACTION_TO_PATHS,
            {"dst_edge": self._edge(dst_edge)},
        )

    def route_via_path(self, prefix: str, dst_edge: int, path_id: int) -> TableEntry:
        """Pin a prefix (e.g. a cross-traffic host's /32) behind edge switch dst_edge to one
        path, bypassing the weights."""
        net = ipaddress.IPv4Network(prefix)
        return TableEntry(
            TABLE_ROUTE,
            {self._key[TABLE_ROUTE]: (str(net.network_address), net.prefixlen)},
            ACTION_VIA_PATH,
            {"dst_edge": self._edge(dst_edge), "path_id": self._path(path_id)},
        )

    def path_nexthop(self, dst_edge: int, path_id: int, port: int) -> TableEntry:
        """The port of path path_id towards edge switch dst_edge."""
        return TableEntry(
            TABLE_NEXTHOP,
            {"dst_edge": self._edge(dst_edge), "path_id": path_id},
            ACTION_SET_PATH_PORT,
            {"port": port},
        )

    def path_ingress(self, port: int) -> TableEntry:
        """Port `port` faces the fabric: a tagged arrival there is measured by its tag's
        (source edge, path) (p4src/include/path_ingress.p4)."""
        return TableEntry(TABLE_PATH_INGRESS, {self._key[TABLE_PATH_INGRESS]: port},
                          ACTION_FABRIC_PORT, {})

    def subflow_pin(self, src: str, dst: str, sport: int, dport: int, path_id: int) -> TableEntry:
        """Pin the TCP subflow src:sport -> dst:dport (as this switch sends it) to a path."""
        self._require(FEATURE_MPTCP, TABLE_SUBFLOW_PIN)
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        for port in (sport, dport):
            if not 0 <= port <= 0xFFFF:
                raise ValueError(f"port {port} outside 0..65535")
        return TableEntry(
            TABLE_SUBFLOW_PIN,
            dict(zip(SUBFLOW_PIN_KEYS, (src, dst, sport, dport), strict=True)),
            ACTION_PIN_SUBFLOW,
            {"path_id": path_id},
        )

    def route_to_host(self, ip: str, port: int, smac: str, dmac: str) -> TableEntry:
        return TableEntry(
            TABLE_ROUTE,
            {self._key[TABLE_ROUTE]: (ip, 32)},
            ACTION_TO_HOST,
            {"port": port, "smac": smac, "dmac": dmac},
        )
