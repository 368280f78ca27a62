"""The forwarding state of one switch, derived from the network description.

Two edges: an edge switch's edge id, routes to its hosts and to the remote subnets (over the
weighted paths, to the peer edge), pinned prefixes, path next hops (per destination edge) and
arrival ports, and the per-path telemetry settings (`forwarding_entries`).

A fabric (docs/fabric.md): the same for an edge switch, towards every other edge, from the
routing of mpsched.fabric (controller/routes.py hands over the switch's next hops and arrival
ports), plus the `transit_nexthop` entries of the other pairs' paths that cross it (in a WAN
an edge may be a transit hop); a transit switch gets only those (`fabric_entries`).

The agent (southbound/agent.py) writes these with the scheduler's entries on every
(re)programming, and with them the clone sessions of its path next hops (`copy_sessions`:
where a SYN's copy leaves, p4src/include/path_select.p4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.fabric.ports import HopKey
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import CloneSession, TableEntry
from mpsched.p4rt.pipeline import TABLE_NEXTHOP, Pipeline


def peers_and_paths(net: NetCfg, sw: SwitchCfg) -> tuple[list[int], list[int]]:
    """The edges a switch's paths lead to (two edges: its peer; a fabric's edge: every other
    edge; a transit switch: none) and the path ids it sends on and counts (path_tx, path_rx:
    summed over the peers)."""
    if net.topology is None:
        return [net.peer_edge(sw)], [p.id for p in sw.paths]
    peers = net.peer_edges(sw)
    return peers, (net.path_ids() if peers else [])


def copy_sessions(pipeline: Pipeline, entries: Sequence[TableEntry]) -> list[CloneSession]:
    """The clone session of each `path_nexthop` entry among `entries`: a SYN's copy onto
    path p towards edge e leaves on the port path p towards e leaves on."""
    sessions = []
    for e in entries:
        if e.table != TABLE_NEXTHOP or e.is_default:
            continue
        dst, pid, port = e.match["dst_edge"], e.match["path_id"], e.params["port"]
        if not (isinstance(dst, int) and isinstance(pid, int) and isinstance(port, int)):
            raise ValueError(f"path_nexthop entry without integer keys and port: {e}")
        sessions.append(pipeline.copy_session(dst, pid, port))
    return sessions


def telemetry_entries(
    pipeline: Pipeline, path_ids: Sequence[int], peers: Sequence[int],
    telemetry: TelemetryConfig | None = None,
) -> list[TableEntry]:
    """The telemetry settings per path id (report and RTT report intervals) and the
    liveness of each path id towards each of `peers`."""
    tc = telemetry or TelemetryConfig()
    entries = [pipeline.report_config(p, tc.report_interval_us) for p in path_ids]
    if pipeline.has_rtt_monitor:
        entries += [pipeline.rtt_config(p, tc.rtt_interval_us) for p in path_ids]
    entries += [pipeline.liveness_config(e, p, tc.dead_after_us) for e in peers for p in path_ids]
    return entries


def forwarding_entries(
    pipeline: Pipeline, net: NetCfg, sw: SwitchCfg, telemetry: TelemetryConfig | None = None
) -> list[TableEntry]:
    """Edge id, routes, pinned prefixes, path next hops, path arrival ports, and the
    telemetry settings (report and RTT report intervals, path liveness) of one switch of a
    two-edge network.

    A pin is usually more specific than the remote subnet covering it (LPM
    prefers it); a pin of exactly a remote subnet replaces that subnet's
    weighted route.
    """
    pinned = {pin.prefix for pin in sw.pins}
    peer = net.peer_edge(sw)
    entries = [pipeline.switch_config(net.edge_id(sw))]
    entries += [pipeline.route_to_host(h.ip, h.port, sw.mac, h.mac) for h in sw.hosts]
    entries += [
        pipeline.route_to_paths(prefix, peer)
        for prefix in net.remote_subnets(sw)
        if prefix not in pinned
    ]
    entries += [pipeline.route_via_path(pin.prefix, peer, pin.path_id) for pin in sw.pins]
    entries += [pipeline.path_nexthop(peer, p.id, p.port) for p in sw.paths]
    entries += [pipeline.path_ingress(p.port) for p in sw.paths]
    return entries + telemetry_entries(pipeline, [p.id for p in sw.paths], [peer], telemetry)


def fabric_entries(
    pipeline: Pipeline,
    net: NetCfg,
    sw: SwitchCfg,
    hops: Mapping[HopKey, int],
    fabric_ports: Sequence[int],
    telemetry: TelemetryConfig | None = None,
    path_ids: Sequence[int] | None = None,
) -> list[TableEntry]:
    """The forwarding state of a fabric's switch: `hops` are its next hops {(source edge,
    destination edge, path id): port} (mpsched.fabric.ports.next_hops), `fabric_ports` an
    edge's ports that face other switches (the ports it admits path tags from).

    An edge gets its edge id, its hosts' routes, a route over the weighted paths to every
    other edge's subnets, path_nexthop for each path of its own pairs, transit_nexthop where
    it lies on another pair's path, path_ingress for its fabric ports and the telemetry
    settings of every path id (`path_ids`, by default the fabric's 1..k; the routing adds
    the ids of watched paths, controller/routes.py); a transit switch its transit_nexthop
    entries only."""
    me = net.edge_id(sw)
    nexthops = hop_entries(pipeline, me, hops)
    if me == 0:
        return nexthops
    entries = [pipeline.switch_config(me)]
    entries += [pipeline.route_to_host(h.ip, h.port, sw.mac, h.mac) for h in sw.hosts]
    entries += [
        pipeline.route_to_paths(prefix, dst)
        for dst in net.peer_edges(sw)
        for prefix in net.subnets_of(dst)
    ]
    entries += nexthops
    entries += [pipeline.path_ingress(port) for port in fabric_ports]
    ids = list(path_ids) if path_ids is not None else net.path_ids()
    return entries + telemetry_entries(pipeline, ids, net.peer_edges(sw), telemetry)


def hop_entry(pipeline: Pipeline, me: int, key: HopKey, port: int) -> TableEntry:
    """The entry of one next hop of switch `me` (its edge id, 0: a transit switch):
    `path_nexthop` on the source edge of the path, `transit_nexthop` elsewhere."""
    src, dst, pid = key
    if src == me:
        return pipeline.path_nexthop(dst, pid, port)
    return pipeline.transit_nexthop(src, dst, pid, port)


def hop_entries(pipeline: Pipeline, me: int, hops: Mapping[HopKey, int]) -> list[TableEntry]:
    """The entries of switch `me`'s next `hops`: its own paths' first, then those in transit,
    each by key."""
    ordered = sorted(hops.items(), key=lambda item: (item[0][0] != me, item[0]))
    return [hop_entry(pipeline, me, key, port) for key, port in ordered]


def hop_changes(pipeline: Pipeline, me: int, old: Mapping[HopKey, int],
                new: Mapping[HopKey, int]) -> tuple[list[TableEntry], list[TableEntry]]:
    """The entries that turn switch `me`'s next hops `old` into `new` (to write: new or
    moved to another port; to delete: gone, each in `hop_entries`' order), built for those
    hops only: a re-route's cost is the hops it changes, not every entry of the switches
    they are on."""
    write = {key: port for key, port in new.items() if old.get(key) != port}
    gone = {key: port for key, port in old.items() if key not in new}
    return hop_entries(pipeline, me, write), hop_entries(pipeline, me, gone)
