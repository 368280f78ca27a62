"""The forwarding state of one switch, derived from the network description.

Two edges: an edge switch's edge id, routes to its hosts and to the remote subnets (over the
weighted paths, to the peer edge), pinned prefixes, path next hops (per destination edge) and
arrival ports, and the per-path telemetry settings (`forwarding_entries`).

A fabric (docs/fabric.md): the same for an edge switch, towards every other edge, from the
routing of mpsched.fabric (src/mpsched/controller/fabric/routes.py hands over the switch's next hops
and arrival ports), plus the `transit_nexthop` entries of the other pairs' paths that cross it (in a
WAN an edge may be a transit hop); a transit switch gets only those (`fabric_entries`). Its paths'
liveness towards each peer edge carries the dead_after of that pair's probe regime
(`liveness_entries`; a change of regime rewrites them: `regime_entries`), and its report
intervals towards each peer edge those of the pair's report rate (`report_entries`,
src/mpsched/controller/telemetry/report_rates.py; rewritten by `report_sync_entries`).

The agent (southbound/agent.py) writes these with the scheduler's entries on every
(re)programming, and with them the clone sessions of its path next hops (`copy_sessions`:
where a SYN's copy leaves, p4src/include/path_select.p4).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.controller.telemetry.report_rates import pair_intervals
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
    telemetry: TelemetryConfig | None = None, idle_peers: Collection[int] = (),
    fabric: bool = False, slow_peers: Collection[int] = (),
) -> list[TableEntry]:
    """The report and RTT report intervals (`report_entries`) and the liveness
    (`liveness_entries`) of each path id towards each of `peers`."""
    tc = telemetry or TelemetryConfig()
    return (report_entries(pipeline, path_ids, peers, tc, fabric, slow_peers)
            + liveness_entries(pipeline, path_ids, peers, tc, idle_peers))


def report_entries(
    pipeline: Pipeline, path_ids: Sequence[int], peers: Sequence[int],
    telemetry: TelemetryConfig, fabric: bool = False, slow_peers: Collection[int] = (),
) -> list[TableEntry]:
    """The report_config and rtt_config entries of every (peer, path id): the intervals of
    the pair's report rate (report_rates.pair_intervals: two edges the configured ones; on a
    fabric the active pair's, towards one of `slow_peers` the idle pair's)."""
    entries = []
    for e in peers:
        iv = pair_intervals(telemetry, fabric, e in slow_peers)
        entries += [pipeline.report_config(e, p, iv.report_us) for p in path_ids]
        if pipeline.has_rtt_monitor:
            entries += [pipeline.rtt_config(e, p, iv.rtt_us) for p in path_ids]
    return entries


def report_sync_entries(
    pipeline: Pipeline, net: NetCfg, path_ids: Sequence[int], telemetry: TelemetryConfig,
    fast: Iterable[tuple[int, int]], slow: Iterable[tuple[int, int]],
) -> dict[str, list[TableEntry]]:
    """Per edge switch, the report entries that a change of the pairs' report rates
    (src/mpsched/controller/southbound/report_ops.py) MODIFYs: for each pair of edges (a, e) in
    `fast`, a's entries of every path id towards e and e's towards a at the active pair's intervals,
    for each in `slow` at the idle pair's (each edge's own settings under the report cap,
    `TelemetryConfig.for_targets`)."""
    out: dict[str, list[TableEntry]] = {}
    for pairs, is_slow in ((fast, False), (slow, True)):
        for a, e in sorted(pairs):
            for me, peer in ((a, e), (e, a)):
                sw = net.edge_switch(me)
                own = telemetry.for_targets(len(net.probe_targets(sw)))
                out.setdefault(sw.name, []).extend(report_entries(
                    pipeline, path_ids, [peer], own, True, [peer] if is_slow else []))
    return out


def liveness_entries(
    pipeline: Pipeline, path_ids: Sequence[int], peers: Sequence[int],
    telemetry: TelemetryConfig, idle_peers: Collection[int] = (),
) -> list[TableEntry]:
    """The liveness_config entry of every (peer, path id): the dead_after of the pair's probe
    regime (src/mpsched/controller/telemetry/regimes.py): `dead_after_us` towards a peer probed
    every
    probe interval, `idle_dead_after_us` towards one of `idle_peers` (probed every idle
    probe interval)."""
    fast, slow = telemetry.dead_after_us, telemetry.idle_dead_after_us
    return [pipeline.liveness_config(e, p, slow if e in idle_peers else fast)
            for e in peers for p in path_ids]


def regime_entries(
    pipeline: Pipeline, net: NetCfg, path_ids: Sequence[int], telemetry: TelemetryConfig,
    fast: Iterable[tuple[int, int]], idle: Iterable[tuple[int, int]],
) -> dict[str, list[TableEntry]]:
    """Per edge switch, the liveness entries that a change of the pairs' probe regimes
    (src/mpsched/controller/telemetry/regimes.py) MODIFYs: for each pair of edges (a, e) in `fast`,
    a's
    entries of every path id towards e and e's towards a with the fast dead_after, for each
    in `idle` with the idle one (each edge's own settings under the probe cap,
    `TelemetryConfig.for_targets`). An edge whose two dead_after are one (its capped probe
    interval as long as the idle one: 64 leaves under the default budget) gets none."""
    out: dict[str, list[TableEntry]] = {}
    for pairs, slow in ((fast, False), (idle, True)):
        for a, e in sorted(pairs):
            for me, peer in ((a, e), (e, a)):
                sw = net.edge_switch(me)
                own = telemetry.for_targets(len(net.probe_targets(sw)))
                if own.idle_dead_after_us == own.dead_after_us:
                    continue
                out.setdefault(sw.name, []).extend(
                    liveness_entries(pipeline, path_ids, [peer], own, [peer] if slow else []))
    return out


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
    idle_peers: Collection[int] = (),
    slow_peers: Collection[int] = (),
) -> list[TableEntry]:
    """The forwarding state of a fabric's switch: `hops` are its next hops {(source edge,
    destination edge, path id): port} (mpsched.fabric.ports.next_hops), `fabric_ports` an
    edge's ports that face other switches (the ports it admits path tags from).

    An edge gets its edge id, its hosts' routes, a route over the weighted paths to every
    other edge's subnets, path_nexthop for each path of its own pairs, transit_nexthop where
    it lies on another pair's path, path_ingress for its fabric ports and the telemetry
    settings of every path id (`path_ids`, by default the fabric's 1..k; the routing adds
    the ids of watched paths, src/mpsched/controller/fabric/routes.py), their liveness towards every
    peer edge by its pair's probe regime (`idle_peers`: the peers of idle pairs) and their report
    intervals by its pair's report rate (`slow_peers`: the peers reported at the idle pair's
    intervals); a transit switch its transit_nexthop entries only."""
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
    return entries + telemetry_entries(pipeline, ids, net.peer_edges(sw), telemetry, idle_peers,
                                       True, slow_peers)


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
