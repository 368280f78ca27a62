"""The forwarding state of one edge switch, derived from the network description.

Its edge id, routes to its hosts and to the remote subnets (over the weighted paths, to the
peer edge), pinned prefixes, path next hops (per destination edge) and arrival ports, and
the per-path telemetry settings. The agent
(southbound/agent.py) writes these with the scheduler's entries on every (re)programming.
"""

from __future__ import annotations

from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline import Pipeline


def forwarding_entries(
    pipeline: Pipeline, net: NetCfg, sw: SwitchCfg, telemetry: TelemetryConfig | None = None
) -> list[TableEntry]:
    """Edge id, routes, pinned prefixes, path next hops, path arrival ports, and the
    telemetry settings (report and RTT report intervals, path liveness) of one switch.

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
    tc = telemetry or TelemetryConfig()
    entries += [pipeline.report_config(p.id, tc.report_interval_us) for p in sw.paths]
    if pipeline.has_rtt_monitor:
        entries += [pipeline.rtt_config(p.id, tc.rtt_interval_us) for p in sw.paths]
    entries += [pipeline.liveness_config(p.id, tc.dead_after_us) for p in sw.paths]
    return entries
